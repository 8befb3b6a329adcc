// The apiserver tells the webhook how long it will wait (`?timeout=10s`, a Go
// duration). Lookups must end early enough to leave time to answer.

/** Used when the query has no usable timeout: the API default for timeoutSeconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The API's largest webhook timeoutSeconds; anything longer in the query is clamped to it. */
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
 * How long lookups may run: the apiserver's timeout (at most MAX_TIMEOUT_MS: an
 * absurd `?timeout=` must not overflow a timer) minus a safety margin of a
 * fifth of it (at most one second) for hashing, encoding and the network.
 */
export function lookupBudgetMs(timeoutParam: string | undefined): number {
  const timeout = Math.min(parseGoDuration(timeoutParam) ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  const margin = Math.min(MAX_MARGIN_MS, timeout / 5);
  return Math.max(MIN_BUDGET_MS, Math.floor(timeout - margin));
}
