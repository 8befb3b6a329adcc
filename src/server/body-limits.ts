// The body budget at the door: a POST's body is read only once its declared length fits
// its share (body-budget.ts), so a flood of large or trickled bodies cannot make the
// reviews the apiserver sends wait.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { BodyBudgets } from './body-budget.js';
import {
  ARRIVAL_LIMIT_MS,
  LARGE_BODY_BYTES_IN_FLIGHT,
  LARGE_BODY_BYTES_PER_ADDRESS,
  MAX_BODY_BYTES,
  SMALL_BODY_BYTES,
  SMALL_BODY_BYTES_IN_FLIGHT,
  SMALL_BODY_BYTES_PER_ADDRESS,
} from './limits.js';

/**
 * A POST's body is read only once its declared length fits its share; the bytes
 * go back when the answer is sent or the connection closes. A body without a
 * length counts as the largest allowed; one above the limit is refused (413)
 * unread and takes nothing. A refused body is never buffered: Node discards it as
 * it arrives, so the caller reads its answer rather than a reset connection, and a
 * trickled one is still cut off at the arrival limit.
 */
export function limitBodiesInFlight(app: FastifyInstance): void {
  const budgets = new BodyBudgets({
    smallBodyBytes: SMALL_BODY_BYTES,
    smallShare: SMALL_BODY_BYTES_IN_FLIGHT,
    smallPerAddress: SMALL_BODY_BYTES_PER_ADDRESS,
    largeShare: LARGE_BODY_BYTES_IN_FLIGHT,
    largePerAddress: LARGE_BODY_BYTES_PER_ADDRESS,
  });
  const refuse = (reply: FastifyReply, status: 413 | 503, error: string) =>
    void reply.code(status).send({ error });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'POST') return done();
    const declared = Number(request.headers['content-length'] ?? MAX_BODY_BYTES);
    if (declared > MAX_BODY_BYTES) return done();
    const bytes = Number.isFinite(declared) && declared >= 0 ? declared : MAX_BODY_BYTES;
    let gaveUp: AbortController | undefined;
    const waitUntilGivenUp = () => {
      gaveUp = new AbortController();
      return gaveUp.signal;
    };
    const place = budgets.admit(bytes, request.socket.remoteAddress ?? '', waitUntilGivenUp);
    if (place.refused) return refuse(reply, place.refused, place.error);
    const admitted = () => {
      reply.raw.once('close', () => place.release());
      done();
    };
    if (place.granted === true) return admitted();
    if (place.granted === false) return refuse(reply, 503, 'too many bodies at once');
    // Node cuts the request off at the arrival limit anyway; this stops the wait with it.
    const giveUp = () => gaveUp?.abort();
    const timer = setTimeout(giveUp, ARRIVAL_LIMIT_MS);
    request.raw.once('close', giveUp);
    void place.granted.then((granted) => {
      clearTimeout(timer);
      if (granted && !request.raw.destroyed) return admitted();
      if (granted) place.release();
      else if (!reply.sent && !request.raw.destroyed) {
        refuse(reply, 503, 'too many bodies at once');
      }
    });
  });
}
