// When touches run: the schedule (debounce, minimum interval per workload,
// maximum delay), the resync's evaluations (a plain queue, after every touch that
// is due), and one timer that runs what is due, one at a time. How fast they may
// go is pacing.ts; what one touch does is touch.ts, whose answer this applies: a
// touch that must wait or failed is put back here, and nowhere else.

import type { Clock } from '../runtime/index.js';
import type { FollowMetrics } from './metrics.js';
import { Pacing, type PacingOptions } from './pacing.js';
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

interface TouchQueueOptions extends PacingOptions {
  readonly debounceMs: number;
  readonly minIntervalMs: number;
}

/** Why a touch waits: the labels of confighash_follow_deferred_total. */
type DeferReason = Parameters<FollowMetrics['deferred']>[0];

/** What one touch came to: the queue records a touch, or puts it back to run `at`. */
export type TouchResult =
  | { readonly status: 'done' | 'touched' }
  | { readonly status: 'retry'; readonly at: number; readonly reason: DeferReason };

type RunTouch = (touch: QueuedTouch) => Promise<TouchResult>;

export class TouchQueue {
  readonly #schedule: TouchSchedule;
  /** How fast touches may go; the touch itself waits on it. */
  readonly pacing: Pacing;
  /** The workload and its changes, of every pending key. */
  readonly #pending = new Map<string, Pending>();
  /** Keys the schedule found due, in order, not yet run. */
  readonly #ready: string[] = [];
  /** The resync's evaluations, in the order asked: run after every due touch. */
  readonly #evaluations = new Map<string, WorkloadRef>();
  #running: string | undefined;
  #run: RunTouch = async () => ({ status: 'done' });
  #cancelTimer: () => void = () => {};
  #processing = false;
  #stopped = false;

  constructor(
    private readonly options: TouchQueueOptions,
    private readonly metrics: Pick<FollowMetrics, 'deferred' | 'pending'>,
    private readonly clock: Clock,
  ) {
    this.#schedule = new TouchSchedule({
      debounceMs: options.debounceMs,
      minIntervalMs: options.minIntervalMs,
      maxDelayMs: Math.max(6 * options.debounceMs, 60_000),
    });
    this.pacing = new Pacing(options, this.#schedule, metrics, clock);
  }

  /** What runs each due touch (set once, before the first request). */
  onDue(run: RunTouch): void {
    this.#run = run;
  }

  /**
   * A change affecting `ref`, seen at `seenAt`: touch it after the debounce from then, or
   * once its minimum interval has passed. A resync asks for an evaluation, which waits
   * behind every due touch and is not asked twice.
   */
  request(ref: WorkloadRef, reason: TouchReason, seenAt = this.clock.now()): void {
    const key = workloadKey(ref);
    if (reason === 'resync') {
      if (this.has(ref) || this.#evaluations.has(key)) return;
      this.#evaluations.set(key, ref);
      this.#arm();
      return;
    }
    const now = this.clock.now();
    if (this.#schedule.earliestAllowed(key) > now + this.options.debounceMs) {
      this.metrics.deferred('min-interval');
    }
    this.#schedule.request(key, reason.source, Math.min(seenAt, now));
    mergeChange(this.#pendingFor(key, ref).changes, reason.source, reason.change);
    this.metrics.pending(this.#schedule.size);
    this.#arm();
  }

  /** Whether a touch of `ref` is pending or running now. */
  has(ref: WorkloadRef): boolean {
    const key = workloadKey(ref);
    return this.#pending.has(key) || this.#running === key;
  }

  /** Puts a touch back, to run at `at` (held by the minimum interval or its window, or failed). */
  #defer(touch: QueuedTouch, at: number): void {
    const key = workloadKey(touch.ref);
    this.#schedule.defer({ key, reasons: [...touch.changes.keys()] }, at);
    const pending = this.#pendingFor(key, touch.ref);
    for (const [source, change] of touch.changes) mergeChange(pending.changes, source, change);
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#cancelTimer();
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
    this.#cancelTimer();
    const now = this.clock.now();
    const next = this.#evaluations.size > 0 ? now : this.#schedule.nextDueAt();
    if (next === undefined) return;
    this.#cancelTimer = this.clock.setTimer(Math.max(0, next - now), () => void this.#processDue());
  }

  /** Runs what is due, one at a time, until nothing is. */
  async #processDue(): Promise<void> {
    if (this.#processing || this.#stopped) return;
    this.#processing = true;
    try {
      for (let touch = this.#next(); touch && !this.#stopped; touch = this.#next()) {
        this.#running = workloadKey(touch.ref);
        try {
          this.#apply(touch, await this.#run(touch));
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

  #apply(touch: QueuedTouch, result: TouchResult): void {
    if (result.status !== 'retry') return;
    this.metrics.deferred(result.reason);
    this.#defer(touch, result.at);
  }

  /**
   * The next touch to run: a due one first, else an evaluation. A due touch keeps its
   * pending changes until it runs, so a change meanwhile joins it instead of running again.
   */
  #next(): QueuedTouch | undefined {
    for (const { key } of this.#schedule.takeDue(this.clock.now())) this.#ready.push(key);
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
