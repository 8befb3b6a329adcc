// The apiserver tells the webhook how long it will wait (`?timeout=10s`, a Go
// duration). Lookups must end early enough to leave time to answer. The caller does not
// choose how long it holds the process's budgets: the registration's timeoutSeconds
// (--webhook-timeout) bounds it, so a review POSTed by anyone with `?timeout=30s` gets no
// more time than the apiserver's own (docs/design.md §4 "Deadline").

import { parseGoDuration } from '../runtime/duration.js';

/** The shipped registration's timeoutSeconds (manifests and chart): --webhook-timeout's default. */
export const WEBHOOK_TIMEOUT_MS = 5_000;
/** The API's largest webhook timeoutSeconds: --webhook-timeout may not be longer. */
export const MAX_TIMEOUT_MS = 30_000;
const MAX_MARGIN_MS = 1_000;
const MIN_BUDGET_MS = 50;

/**
 * How long lookups may run: the lesser of the caller's timeout and the registration's
 * (`webhookTimeoutMs`, also used when the query has none), minus a safety margin of a
 * fifth of it (at most one second) for hashing, encoding and the network.
 */
export function lookupBudgetMs(timeoutParam: string | undefined, webhookTimeoutMs: number): number {
  const timeout = Math.min(parseGoDuration(timeoutParam) ?? webhookTimeoutMs, webhookTimeoutMs);
  const margin = Math.min(MAX_MARGIN_MS, timeout / 5);
  return Math.max(MIN_BUDGET_MS, Math.floor(timeout - margin));
}
