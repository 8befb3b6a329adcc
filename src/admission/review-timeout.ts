// The apiserver tells the webhook how long it will wait (`?timeout=10s`, a Go
// duration). Lookups must end early enough to leave time to answer. The caller does not
// choose how long it holds the process's budgets: the registration's timeoutSeconds
// (--webhook-timeout) bounds it, so a review POSTed by anyone with `?timeout=30s` gets no
// more time than the apiserver's own (docs/design.md §4 "Deadline").

/** The shipped registration's timeoutSeconds (manifests and chart): --webhook-timeout's default. */
export const WEBHOOK_TIMEOUT_MS = 5_000;
/** The API's largest webhook timeoutSeconds: --webhook-timeout may not be longer. */
export const MAX_TIMEOUT_MS = 30_000;
const MAX_MARGIN_MS = 1_000;
const MIN_BUDGET_MS = 50;

const UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
};

/** Parses a Go duration such as `10s`, `1m30s` or `2.5s`; undefined when malformed. */
export function parseGoDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const part = /(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let consumed = 0;
  for (let match = part.exec(text); match; match = part.exec(text)) {
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    consumed = part.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

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
