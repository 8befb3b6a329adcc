// The Fastify application: routes and error handling. Never listens, reads the
// environment or touches files; main.ts does that and passes everything in.

import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import {
  type AdmissionRequest,
  allowed,
  decodeAdmissionReview,
  lookupBudgetMs,
  patched,
  warning,
} from '../admission/index.js';
import type { MutationResult, Mutator } from '../review.js';
import { BodyBudgets } from './body-budget.js';
import type { AdmissionMetrics } from './metrics.js';
import { addProbeRoutes, type Readiness } from './probes.js';

/** Two 3 MiB objects (object + oldObject) plus the envelope (docs/design.md §4). */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;
/**
 * A body of at most this is small and takes only from the small share (body-budget.ts):
 * 128 KiB holds an UPDATE's object and oldObject, managedFields and all, of any but an
 * unusually big workload, where the reviews the apiserver sends are a few KiB. Kept low,
 * because what fills the small share is small bodies: the lower it is, the more
 * connections a caller needs to fill it (SMALL_BODY_BYTES_IN_FLIGHT / SMALL_BODY_BYTES).
 */
export const SMALL_BODY_BYTES = 128 * 1024;
/**
 * The small share: 128 small bodies of the largest size at once, thousands of a few KiB.
 * No large body takes from it, so however large bodies are declared and trickled, a
 * small review never waits behind them.
 */
export const SMALL_BODY_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * The large share: two 7 MiB reviews at once. Bench scenario 9, peak RSS for bursts of
 * 16 / 32 / 64 concurrent 7 MiB reviews: 296 / 573 / 658 MiB with no budget, 198 / 262 /
 * 264 MiB with one 32 MiB budget for every size, 231 / 210 / 260 MiB with one of 16 MiB;
 * with this share, each body from an address of its own, 179–208 / 207–277 / 251–259 MiB
 * over two runs of a busy machine: against the chart's 256Mi, the garbage collector's
 * timing spreads it more than the budget does. With a 32 MiB budget and a V8 old space of
 * 128 MB (`--max-old-space-size=128`) 173 / 173 / 189 MiB.
 */
export const LARGE_BODY_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * Body bytes read and reviewed at once, both shares. It bounds what is parsed at once,
 * not what the garbage collector has yet to free.
 */
export const MAX_BODY_BYTES_IN_FLIGHT = SMALL_BODY_BYTES_IN_FLIGHT + LARGE_BODY_BYTES_IN_FLIGHT;
/**
 * Large bytes one client address may hold or wait for: the large share's worth, so no
 * address queues more than the share can ever let in, and a request past it is refused
 * at once rather than left to wait for the arrival limit.
 */
export const LARGE_BODY_BYTES_PER_ADDRESS = LARGE_BODY_BYTES_IN_FLIGHT;
/**
 * Small bytes one client address may hold or wait for: a quarter of the small share, so
 * one caller that trickles small bodies cannot fill it, and the apiserver's own reviews
 * (each apiserver is one address) never come near it: 32 concurrent reviews of a few KiB
 * are well under 1 MiB, and it takes 32 of the largest small size at once to reach it.
 * Past it a small body is refused at once (503), as a large one is.
 */
export const SMALL_BODY_BYTES_PER_ADDRESS = SMALL_BODY_BYTES_IN_FLIGHT / 4;
/** Longer than the apiserver's 90 s idle timeout, so it is always the one to close. */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
/**
 * Headers, and the whole request with its body, must arrive within this
 * (docs/design.md §4 "Bounds"): a client that trickles a 7 MiB body is cut off (408)
 * rather than holding its buffers for ever. The apiserver sends a review at once.
 */
export const REQUEST_ARRIVAL_MS = 10_000;
/**
 * Node checks those timeouts on a timer (30 s by default, so a 10 s limit
 * would fire at 10–40 s). Checked this often, with the limits two checks below
 * REQUEST_ARRIVAL_MS, a slow client is cut off within it whatever the timer's
 * phase (measured: 9.6 s on Node 20.20 and 24.22; with 0.5 s checks and a 9.5 s
 * limit one run of 24.22 cut at 10.04 s). An idle keep-alive connection is not
 * a request: keepAliveTimeout governs it.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 250;
const ARRIVAL_LIMIT_MS = REQUEST_ARRIVAL_MS - 2 * TIMEOUT_CHECK_INTERVAL_MS;
/**
 * Node's headersTimeout and requestTimeout start once TLS is up; a handshake
 * that never ends is cut off by this instead (Node's default: 120 s).
 */
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
const ARRIVAL_OPTIONS = {
  headersTimeout: ARRIVAL_LIMIT_MS,
  connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
} as const;

export type { Readiness } from './probes.js';

export interface AppOptions {
  readonly mutator: Mutator;
  readonly metrics: AdmissionMetrics;
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Serving certificate and key; without them the app serves plain HTTP (inject tests). */
  readonly tls?: {
    readonly cert: Buffer | string;
    readonly key: Buffer | string;
    /**
     * --client-ca-file: a connection without a client certificate signed by this CA fails
     * its TLS handshake, before any HTTP (probes then use buildTlsProbeApp's port).
     */
    readonly clientCa?: Buffer | string;
  };
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { mutator, metrics, readiness, logger } = options;
  // Fastify gets no logger: it would make a child logger per request for lines
  // we never let it write. The routes log themselves, with the review's fields.
  const app = Fastify({
    bodyLimit: MAX_BODY_BYTES,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // A review that arrives while this replica stops is answered, never refused:
    // a 503 would fail open (drain.ts).
    return503OnClosing: false,
    ...arrivalLimited(options.tls),
  }) as unknown as FastifyInstance;

  // Only JSON is an AdmissionReview; anything else is 415, not a parse error.
  app.removeContentTypeParser('text/plain');

  limitBodiesInFlight(
    app,
    new BodyBudgets({
      smallBodyBytes: SMALL_BODY_BYTES,
      smallShare: SMALL_BODY_BYTES_IN_FLIGHT,
      smallPerAddress: SMALL_BODY_BYTES_PER_ADDRESS,
      largeShare: LARGE_BODY_BYTES_IN_FLIGHT,
      largePerAddress: LARGE_BODY_BYTES_PER_ADDRESS,
    }),
  );

  // An unready replica (starting, or stopping) asks each client not to reuse its
  // connection, so that the clients close them all, never racing a request (drain.ts).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!readiness.isReady()) reply.header('connection', 'close');
    done(null, payload);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      logger.error({ method: request.method, url: request.url, err: error }, 'request failed');
      return reply.code(500).send({ error: 'internal error' });
    }
    if (request.url.startsWith('/mutate')) metrics.observeReview('invalid', 0, false);
    return reply.code(status).send({ error: oneLine(error.message) });
  });

  app.post<{ Querystring: { timeout?: string } }>(
    '/mutate',
    reviewHandler(mutator, metrics, logger),
  );

  addProbeRoutes(app, readiness, metrics.registry);
  return app;
}

/**
 * With --client-ca-file, the kubelet's probes and Prometheus, which present no client
 * certificate, are answered here instead: /healthz, /readyz and /metrics, over TLS with the
 * serving certificate, on a port of their own — never /mutate.
 */
export function buildTlsProbeApp(
  options: Pick<AppOptions, 'metrics' | 'readiness'> & {
    readonly tls: { readonly cert: Buffer | string; readonly key: Buffer | string };
  },
): FastifyInstance {
  // The same arrival limits as /mutate's port: this one answers anyone who can reach it too.
  const app = Fastify(
    arrivalLimited({ cert: options.tls.cert, key: options.tls.key }),
  ) as unknown as FastifyInstance;
  addProbeRoutes(app, options.readiness, options.metrics.registry);
  return app;
}

/**
 * Fastify's and Node's options that hold a request to the arrival limits (Fastify's
 * default requestTimeout 0 turns Node's off): TLS when `tls` is given, else plain HTTP.
 */
function arrivalLimited(tls: AppOptions['tls']) {
  return {
    requestTimeout: ARRIVAL_LIMIT_MS,
    ...(tls
      ? {
          https: {
            ...httpsOptions(tls),
            handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
            ...ARRIVAL_OPTIONS,
          },
        }
      : { http: ARRIVAL_OPTIONS }),
  };
}

/** TLS ≥ 1.2; with a client CA, the handshake itself refuses a caller without its certificate. */
function httpsOptions(tls: NonNullable<AppOptions['tls']>) {
  return {
    cert: tls.cert,
    key: tls.key,
    minVersion: 'TLSv1.2' as const,
    ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

/**
 * A POST's body is read only once its declared length fits its share; the bytes
 * go back when the answer is sent or the connection closes. A body without a
 * length counts as the largest allowed; one above the limit is refused (413)
 * unread and takes nothing. A refused body is never buffered: Node discards it as
 * it arrives, so the caller reads its answer rather than a reset connection, and a
 * trickled one is still cut off at the arrival limit.
 */
function limitBodiesInFlight(app: FastifyInstance, budgets: BodyBudgets): void {
  const refuse = (reply: FastifyReply, status: 413 | 503, error: string) =>
    void reply.code(status).send({ error });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'POST') return done();
    const declared = Number(request.headers['content-length'] ?? MAX_BODY_BYTES);
    if (declared > MAX_BODY_BYTES) return done();
    const bytes = Number.isFinite(declared) && declared >= 0 ? declared : MAX_BODY_BYTES;
    const gaveUp = new AbortController();
    const place = budgets.admit(bytes, request.socket.remoteAddress ?? '', gaveUp.signal);
    if (place.refused) return refuse(reply, place.refused, place.error);
    const admitted = () => {
      reply.raw.once('close', () => place.release());
      done();
    };
    if (place.granted === true) return admitted();
    if (place.granted === false) return refuse(reply, 503, 'too many bodies at once');
    // Node cuts the request off at the arrival limit anyway; this stops the wait with it.
    const timer = setTimeout(() => gaveUp.abort(), ARRIVAL_LIMIT_MS);
    request.raw.once('close', () => gaveUp.abort());
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

/** POST /mutate: decode, review within the deadline, answer; one log line and metrics per review. */
function reviewHandler(mutator: Mutator, metrics: AdmissionMetrics, logger: Logger) {
  return async (
    request: FastifyRequest<{ Querystring: { timeout?: string } }>,
    reply: FastifyReply,
  ) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const decoded = decodeAdmissionReview(request.body);
    if (!decoded.ok) {
      metrics.observeReview('invalid', seconds(), false);
      logger.warn({ reason: decoded.error }, 'rejected malformed AdmissionReview');
      return reply.code(400).send({ error: decoded.error });
    }
    const review = decoded.request;
    const deadline = startDeadline(lookupBudgetMs(request.query.timeout));
    try {
      const result = await mutator.review(review, deadline.signal);
      const duration = seconds();
      metrics.observeReview(result.outcome, duration, review.dryRun);
      metrics.observeLookups(result.lookups);
      if (result.skipCode) metrics.observeSkip(result.skipCode);
      // A dry-run has no side effects: it rolls nothing, so it counts as no hash change.
      if (result.hashChanged && !review.dryRun) metrics.observeHashChange();
      // Counted on writes only: plan and explain ask with dry runs, and would count themselves.
      if (result.previousKeyHash && !review.dryRun) metrics.observePreviousKeyHash();
      logReview(logger, review, result, duration);
      return patched(review.uid, result.patch, result.warnings);
    } catch (error) {
      // A bug must not block or break a write: allow it unchanged and say so.
      metrics.observeReview('error', seconds(), review.dryRun);
      logger.error({ ...reviewFields(review), err: error }, 'admission review failed');
      return allowed(review.uid, [warning('internal error; no hash written')]);
    } finally {
      deadline.clear();
    }
  };
}

/**
 * The review's deadline, cleared as soon as it is answered. AbortSignal.timeout
 * would keep every signal that has a listener (and what the listener holds)
 * alive for the whole budget — seconds after the review — so at thousands of
 * reviews a second they all reach the old generation and RSS climbs between
 * major GCs. Cleared here, they die young.
 */
function startDeadline(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('the lookup deadline passed', 'TimeoutError')),
    ms,
  );
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** The log fields naming a review (CONTRIBUTING.md, rules of the house: uid, kind, namespace, name, operation, dryRun). */
function reviewFields(review: AdmissionRequest) {
  return {
    uid: review.uid,
    kind: review.kind.kind,
    namespace: review.namespace,
    name: review.name,
    operation: review.operation,
    dryRun: review.dryRun,
  };
}

function logReview(
  log: Logger,
  review: AdmissionRequest,
  result: MutationResult,
  seconds: number,
): void {
  const level = reviewLogLevel(result);
  // The line's fields are built only when it is written.
  if (!log.isLevelEnabled(level)) return;
  log[level](
    {
      ...reviewFields(review),
      outcome: result.outcome,
      reason: result.skipReason,
      hashChanged: result.hashChanged,
      warnings: result.warnings.length > 0 ? result.warnings : undefined,
      durationMs: Math.round(seconds * 1e6) / 1e3,
    },
    'admission review',
  );
}

/**
 * `info` for the reviews that answer "why did my pod roll?" — a changed hash, an
 * adoption, previous values kept, a failure; `debug` for the rest (a CREATE
 * hashed for the first time, nothing to do), which at thousands a second would
 * cost more CPU than the review itself.
 */
export function reviewLogLevel(result: MutationResult): 'info' | 'debug' {
  return result.hashChanged || result.outcome === 'adopted' || result.outcome === 'kept-old'
    ? 'info'
    : 'debug';
}

function oneLine(message: string): string {
  return message.split('\n', 1)[0] ?? 'bad request';
}
