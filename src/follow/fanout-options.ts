// A fan-out's settings (docs/design.md §6 "The state of a change"): the options, and what a
// follow namespace's annotations say instead.

import { CANARIES, CANARY_WINDOW } from '../workload/index.js';

export interface FanoutOptions {
  /** Canaries a fan-out touches first (`--follow-canaries`); 0: none. */
  readonly canaries: number;
  /**
   * How long a canary is watched from its touch, and how long its touch may wait to be sent
   * (`--follow-canary-window`; a namespace's `confighash.dev/canary-window` says otherwise).
   */
  readonly canaryWindowMs: number;
  /** How often a rolling canary is read (`--follow-canary-poll`). */
  readonly canaryPollMs: number;
}

export const DEFAULT_FANOUT_OPTIONS: FanoutOptions = {
  canaries: 1,
  canaryWindowMs: 5 * 60_000,
  canaryPollMs: 5_000,
};

/**
 * How many canaries a fan-out in a namespace touches first: its `confighash.dev/canaries`
 * annotation (a whole number; 0 turns them off), else `fallback` (`--follow-canaries`).
 */
export function canaryCount(
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
  fallback: number,
): number {
  const text = namespaceAnnotations?.[CANARIES];
  return text !== undefined && /^\d{1,4}$/.test(text) ? Number(text) : fallback;
}

/** A namespace's `confighash.dev/canary-window` (`90s`, `5m`), else `fallback`. */
export function canaryWindowOf(
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
  fallback: number,
): number {
  const match = /^(\d{1,5})(s|m)$/.exec(namespaceAnnotations?.[CANARY_WINDOW] ?? '');
  return match ? Number(match[1]) * (match[2] === 'm' ? 60_000 : 1000) : fallback;
}
