// How fast follow mode may go (docs/design.md §6 "Guards"): the global touch rate and the
// resync's evaluation rate (token buckets), and the minimum interval between two touches
// of one workload. A touch takes its token before it reads anything, so that waiting
// never makes it read twice.

import { type Clock, sleep } from '../runtime/index.js';
import type { FollowMetrics } from './metrics.js';
import { TokenBucket } from './rate-limit.js';
import type { TouchSchedule } from './schedule.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

/** Which token bucket: touches (the global rate limit) or the resync's evaluations. */
type TokenKind = 'touch' | 'evaluate';

export interface PacingOptions {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Evaluations a resync may start per second (`--follow-evaluate-rate`). */
  readonly evaluatePerSecond: number;
}

export class Pacing {
  readonly #buckets: Readonly<Record<TokenKind, TokenBucket>>;

  constructor(
    options: PacingOptions,
    /** The minimum interval's memory, which the schedule keeps for when touches fall due. */
    private readonly schedule: Pick<TouchSchedule, 'earliestAllowed' | 'touched'>,
    private readonly metrics: Pick<FollowMetrics, 'deferred'>,
    private readonly clock: Clock,
  ) {
    const now = clock.now();
    const evaluateBurst = Math.max(1, Math.ceil(options.evaluatePerSecond));
    this.#buckets = {
      touch: new TokenBucket(options.ratePerSecond, options.burst, now),
      evaluate: new TokenBucket(options.evaluatePerSecond, evaluateBurst, now),
    };
  }

  /**
   * Waits for a token of `kind`'s bucket (counting a wait for a touch token as rate
   * limited); false when `signal` aborted first.
   */
  async waitToken(kind: TokenKind, signal: AbortSignal): Promise<boolean> {
    for (let counted = false; !signal.aborted; ) {
      const token = this.#buckets[kind].take(this.clock.now());
      if (token.ok) return true;
      if (kind === 'touch' && !counted) this.metrics.deferred('rate-limit');
      counted = true;
      await sleep(token.waitMs, signal, this.clock);
    }
    return false;
  }

  /** When the minimum interval lets `ref` be touched again (0: now). */
  earliestTouch(ref: WorkloadRef): number {
    return this.schedule.earliestAllowed(workloadKey(ref));
  }

  /** `ref` was touched now: its next touch waits for the minimum interval. */
  touched(ref: WorkloadRef): void {
    this.schedule.touched(workloadKey(ref), this.clock.now());
  }
}
