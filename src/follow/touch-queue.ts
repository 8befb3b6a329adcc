// When touches run: the schedule (debounce, minimum interval per workload,
// maximum delay), the resync's evaluations (a plain queue, after every touch that
// is due), the two token buckets (touches; evaluations), and one timer that runs
// what is due, one at a time. A touch waits for its token before it reads
// anything, so that waiting never makes it read twice.

import { sleep } from '../runtime/index.js';
import type { FollowMetrics } from './metrics.js';
import { TokenBucket } from './rate-limit.js';
import { TouchSchedule } from './schedule.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

/** What happened to a source (`configmap/NAME`) while a touch waited. */
export type SourceChange = 'created' | 'changed' | 'deleted';

/** Why a touch is requested: a source event, or a resync (nothing seen; maybe something missed). */
export type TouchReason = { readonly source: string; readonly change: SourceChange } | 'resync';

export interface QueuedTouch {
  readonly ref: WorkloadRef;
  /** Each changed source and what happened to it; empty when only a resync asked (an evaluation). */
  readonly changes: ReadonlyMap<string, SourceChange>;
}

/** Which token bucket: touches (the global rate limit) or the resync's evaluations. */
export type TokenKind = 'touch' | 'evaluate';

/**
 * Adds `change` of `source` to what is known: a source created in the same
 * window is "created" however often it changed after; deleted is deleted;
 * deleted and created again is a changed source.
 */
export function mergeChange(
  changes: Map<string, SourceChange>,
  source: string,
  change: SourceChange,
): void {
  const before = changes.get(source);
  if (before === 'created' && change === 'changed') return;
  changes.set(source, before === 'deleted' && change === 'created' ? 'changed' : change);
}

interface Pending {
  readonly ref: WorkloadRef;
  readonly changes: Map<string, SourceChange>;
}

export interface TouchQueueOptions {
  readonly debounceMs: number;
  readonly minIntervalMs: number;
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Evaluations a resync may start per second (`--follow-evaluate-rate`). */
  readonly evaluatePerSecond: number;
}

export type RunTouch = (touch: QueuedTouch) => Promise<void>;

export class TouchQueue {
  readonly #schedule: TouchSchedule;
  readonly #buckets: Readonly<Record<TokenKind, TokenBucket>>;
  /** The workload and its changes, of every pending key. */
  readonly #pending = new Map<string, Pending>();
  /** Keys the schedule found due, in order, not yet run. */
  readonly #ready: string[] = [];
  /** The resync's evaluations, in the order asked: run after every due touch. */
  readonly #evaluations = new Map<string, WorkloadRef>();
  #running: string | undefined;
  #run: RunTouch = async () => {};
  #timer: NodeJS.Timeout | undefined;
  #processing = false;
  #stopped = false;

  constructor(
    private readonly options: TouchQueueOptions,
    private readonly metrics: Pick<FollowMetrics, 'deferred' | 'pending'>,
  ) {
    this.#schedule = new TouchSchedule({
      debounceMs: options.debounceMs,
      minIntervalMs: options.minIntervalMs,
      maxDelayMs: Math.max(6 * options.debounceMs, 60_000),
    });
    const now = Date.now();
    this.#buckets = {
      touch: new TokenBucket(options.ratePerSecond, options.burst, now),
      evaluate: new TokenBucket(
        options.evaluatePerSecond,
        Math.max(1, Math.ceil(options.evaluatePerSecond)),
        now,
      ),
    };
  }

  /** What runs each due touch (set once, before the first request). */
  onDue(run: RunTouch): void {
    this.#run = run;
  }

  /**
   * A change affecting `ref`: touch it after the debounce, or once its minimum interval
   * has passed. A resync asks for an evaluation, which waits behind every due touch and
   * is not asked twice.
   */
  request(ref: WorkloadRef, reason: TouchReason): void {
    const key = workloadKey(ref);
    if (reason === 'resync') {
      if (this.has(ref) || this.#evaluations.has(key)) return;
      this.#evaluations.set(key, ref);
      this.#arm();
      return;
    }
    const now = Date.now();
    if (this.#schedule.earliestAllowed(key) > now + this.options.debounceMs) {
      this.metrics.deferred('min-interval');
    }
    this.#schedule.request(key, reason.source, now);
    mergeChange(this.#pendingFor(key, ref).changes, reason.source, reason.change);
    this.metrics.pending(this.#schedule.size);
    this.#arm();
  }

  /** Whether a touch of `ref` is pending or running now. */
  has(ref: WorkloadRef): boolean {
    const key = workloadKey(ref);
    return this.#pending.has(key) || this.#running === key;
  }

  /** Puts a touch back, to run at `at` (rate limited, outside its window, or failed). */
  defer(touch: QueuedTouch, at: number): void {
    const key = workloadKey(touch.ref);
    this.#schedule.defer({ key, reasons: [...touch.changes.keys()] }, at);
    const pending = this.#pendingFor(key, touch.ref);
    for (const [source, change] of touch.changes) mergeChange(pending.changes, source, change);
    this.#arm();
  }

  /**
   * Waits for a token of `kind`'s bucket (counting a wait for a touch token as rate
   * limited); false when `signal` aborted first.
   */
  async waitToken(kind: TokenKind, signal: AbortSignal): Promise<boolean> {
    for (let counted = false; !signal.aborted; ) {
      const token = this.#buckets[kind].take(Date.now());
      if (token.ok) return true;
      if (kind === 'touch' && !counted) this.metrics.deferred('rate-limit');
      counted = true;
      await sleep(token.waitMs, signal);
    }
    return false;
  }

  /** When the minimum interval lets `ref` be touched again (0: now). */
  earliestTouch(ref: WorkloadRef): number {
    return this.#schedule.earliestAllowed(workloadKey(ref));
  }

  /** `ref` was touched now: its next touch waits for the minimum interval. */
  touched(ref: WorkloadRef): void {
    this.#schedule.touched(workloadKey(ref), Date.now());
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#schedule.clear();
    this.#pending.clear();
    this.#evaluations.clear();
    this.#ready.length = 0;
    this.metrics.pending(0);
  }

  #pendingFor(key: string, ref: WorkloadRef): Pending {
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = { ref, changes: new Map() };
      this.#pending.set(key, pending);
    }
    return pending;
  }

  #arm(): void {
    if (this.#stopped || this.#processing) return;
    clearTimeout(this.#timer);
    const next = this.#evaluations.size > 0 ? Date.now() : this.#schedule.nextDueAt();
    if (next === undefined) return;
    this.#timer = setTimeout(() => void this.#processDue(), Math.max(0, next - Date.now()));
  }

  /** Runs what is due, one at a time, until nothing is. */
  async #processDue(): Promise<void> {
    if (this.#processing || this.#stopped) return;
    this.#processing = true;
    try {
      for (let touch = this.#next(); touch && !this.#stopped; touch = this.#next()) {
        this.#running = workloadKey(touch.ref);
        try {
          await this.#run(touch);
        } finally {
          this.#running = undefined;
        }
      }
    } finally {
      this.#processing = false;
      if (!this.#stopped) this.metrics.pending(this.#schedule.size);
      this.#arm();
    }
  }

  /**
   * The next touch to run: a due one first, else an evaluation. A due touch keeps its
   * pending changes until it runs, so a change meanwhile joins it instead of running again.
   */
  #next(): QueuedTouch | undefined {
    for (const { key } of this.#schedule.takeDue(Date.now())) this.#ready.push(key);
    for (let key = this.#ready.shift(); key !== undefined; key = this.#ready.shift()) {
      const pending = this.#pending.get(key);
      if (!pending) continue; // Already run, with the change that asked again.
      this.#pending.delete(key);
      this.#evaluations.delete(key);
      return pending;
    }
    for (const [key, ref] of this.#evaluations) {
      this.#evaluations.delete(key);
      return { ref, changes: new Map() };
    }
    return undefined;
  }
}
