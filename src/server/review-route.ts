// POST /mutate, as one review reads: decode the AdmissionReview, review it within the
// apiserver's deadline (the admission use case), answer; one log line and the metrics
// per review. A bug never blocks a write: the review is allowed unchanged and says so.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import {
  type AdmissionRequest,
  allowed,
  decodeAdmissionReview,
  lookupBudgetMs,
  type MutationResult,
  type Mutator,
  patched,
} from '../admission/index.js';
import { withDeadline } from '../runtime/index.js';
import { warning } from '../workload/index.js';
import type { AdmissionMetrics } from './admission-metrics.js';

/**
 * POST /mutate: decode, review within the deadline — the lesser of the caller's `?timeout=`
 * and `webhookTimeoutMs` — answer; one log line and metrics per review.
 */
export function reviewHandler(
  mutator: Mutator,
  metrics: AdmissionMetrics,
  logger: Logger,
  webhookTimeoutMs: number,
) {
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
    try {
      const result = await withDeadline(
        undefined,
        lookupBudgetMs(request.query.timeout, webhookTimeoutMs),
        (signal) => mutator.review(review, signal),
      );
      const duration = seconds();
      metrics.observeReview(result.outcome, duration, review.dryRun);
      metrics.observeLookups(result.lookups);
      if (result.snapshots) metrics.observeSnapshotResults(result.snapshots);
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
    }
  };
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
