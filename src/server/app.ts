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
import type { AdmissionMetrics } from './metrics.js';
import { addProbeRoutes, type Readiness } from './probes.js';

/** Two 3 MiB objects (object + oldObject) plus the envelope (DESIGN.md §4). */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;
/** Longer than the apiserver's 90 s idle timeout, so it is always the one to close. */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;

export type { Readiness } from './probes.js';

export interface AppOptions {
  readonly mutator: Mutator;
  readonly metrics: AdmissionMetrics;
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Serving certificate and key; without them the app serves plain HTTP (inject tests). */
  readonly tls?: { readonly cert: Buffer | string; readonly key: Buffer | string };
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
    ...(options.tls
      ? { https: { cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' as const } }
      : {}),
  }) as unknown as FastifyInstance;

  // Only JSON is an AdmissionReview; anything else is 415, not a parse error.
  app.removeContentTypeParser('text/plain');

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
      // A dry-run has no side effects: it rolls nothing, so it counts as no hash change.
      if (result.hashChanged && !review.dryRun) metrics.observeHashChange();
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

/** The log fields naming a review (STYLE.md: uid, kind, namespace, name, operation, dryRun). */
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
