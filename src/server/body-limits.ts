// One rule for request bodies, at every port (docs/design.md §4 "Bounds"): a body is read
// only on a route that reads one (POST /mutate), and only once its declared length fits its
// share of the body budget (body-budget.ts); a body anywhere else — another method, another
// path, a probe port — is refused unread. So a flood of large or trickled bodies, whatever
// its method or path, cannot make the reviews the apiserver sends wait, nor grow the process.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../runtime/index.js';
import { BodyBudgets, type Ticket } from './body-budget.js';
import {
  ARRIVAL_LIMIT_MS,
  LARGE_BODY_BYTES_IN_FLIGHT,
  LARGE_BODY_BYTES_PER_ADDRESS,
  MAX_BODY_BYTES,
  SMALL_BODY_BYTES,
  SMALL_BODY_BYTES_IN_FLIGHT,
  SMALL_BODY_BYTES_PER_ADDRESS,
} from './limits.js';
import type { CountRefusal, RefusalReason } from './refusals.js';

/**
 * Holds every request's body to the rule above. A refused body is never buffered: Node
 * discards it as it arrives, so the caller reads its answer rather than a reset connection,
 * and a trickled one is still cut off at the arrival limit. The bytes of an admitted body go
 * back when the answer is sent or the connection closes.
 */
export function limitBodies(
  app: FastifyInstance,
  bodyRoutes: readonly string[],
  countRefusal: CountRefusal,
  clock: Clock,
): void {
  const budgets = new BodyBudgets({
    smallBodyBytes: SMALL_BODY_BYTES,
    smallShare: SMALL_BODY_BYTES_IN_FLIGHT,
    smallPerAddress: SMALL_BODY_BYTES_PER_ADDRESS,
    largeShare: LARGE_BODY_BYTES_IN_FLIGHT,
    largePerAddress: LARGE_BODY_BYTES_PER_ADDRESS,
  });
  const readsBody = new Set(bodyRoutes);
  const refuse = (reply: FastifyReply, reason: RefusalReason, status: 413 | 503, error: string) => {
    countRefusal(reason);
    void reply.code(status).send({ error });
  };
  app.addHook('onRequest', (request, reply, done) => {
    const declared = declaredLength(request);
    if (declared === undefined) return done();
    if (!readsBody.has(`${request.method} ${request.routeOptions.url}`)) {
      return refuse(reply, 'body-not-read', 413, `${request.method} ${request.url} takes no body`);
    }
    if (declared > MAX_BODY_BYTES) {
      return refuse(reply, 'body-too-large', 413, `a body may be at most ${MAX_BODY_BYTES} bytes`);
    }
    let stopWaiting = () => {};
    const place = budgets.admit(declared, request.socket.remoteAddress ?? '', () => {
      const wait = waitForBudget(request, clock);
      stopWaiting = wait.stop;
      return wait.signal;
    });
    if (place.refused) {
      const reason = place.refused === 413 ? 'body-too-large' : 'body-address-bound';
      return refuse(reply, reason, place.refused, place.error);
    }
    const admitted = () => {
      reply.raw.once('close', () => place.release());
      done();
    };
    const tooMany = () => refuse(reply, 'body-budget', 503, 'too many bodies at once');
    if (place.granted === true) return admitted();
    if (place.granted === false) return tooMany();
    void waited(place, request, reply).then((granted) => {
      stopWaiting();
      if (granted) admitted();
      else if (granted === false) tooMany();
    });
  });
}

/**
 * The body's length as declared: undefined when it has none, the largest allowed when it is
 * chunked or its length is not a number (it may be that long).
 */
function declaredLength(request: FastifyRequest): number | undefined {
  const length = request.headers['content-length'];
  if (length === undefined) {
    return request.headers['transfer-encoding'] === undefined ? undefined : MAX_BODY_BYTES;
  }
  const bytes = Number(length);
  if (bytes === 0) return undefined;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : MAX_BODY_BYTES;
}

/**
 * A wait for budget ends when the request goes or at the arrival limit, where Node cuts the
 * request off anyway; `stop` lets go of both once the wait is over. Made only for a body that
 * must wait: nearly every review is let in at once and makes none.
 */
function waitForBudget(
  request: FastifyRequest,
  clock: Clock,
): { signal: AbortSignal; stop(): void } {
  const gaveUp = new AbortController();
  const giveUp = () => gaveUp.abort();
  const cancel = clock.setTimer(ARRIVAL_LIMIT_MS, giveUp, { keepAlive: false });
  request.raw.once('close', giveUp);
  return {
    signal: gaveUp.signal,
    stop() {
      cancel();
      request.raw.off('close', giveUp);
    },
  };
}

/**
 * Whether a place that had to wait may still be used: granted, and the request still there
 * to read (one gone meanwhile gives its place back). Undefined when there is no one left to
 * answer either way.
 */
async function waited(
  place: Ticket,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<boolean | undefined> {
  const granted = await place.granted;
  if (granted && !request.raw.destroyed) return true;
  if (granted) place.release();
  return reply.sent || request.raw.destroyed ? undefined : false;
}
