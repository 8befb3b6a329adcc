// When touches run: the schedule (debounce, minimum interval per workload,
// maximum delay), the global token bucket, and one timer that runs what is due,
// one touch at a time.

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
  /** Each changed source and what happened to it; empty when only a resync asked. */
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

export interface TouchQueueOptions {
  readonly debounceMs: number;
  readonly minIntervalMs: number;
  readonly ratePerSecond: number;
  readonly burst: number;
}

export type RunTouch = (touch: QueuedTouch) => Promise<void>;

export class TouchQueue {
  readonly #schedule: TouchSchedule;
  readonly #bucket: TokenBucket;
  /** The workload and its changes, of every pending key. */
  readonly #pending = new Map<string, Pending>();
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
    this.#bucket = new TokenBucket(options.ratePerSecond, options.burst, Date.now());
  }

  /** What runs each due touch (set once, before the first request). */
  onDue(run: RunTouch): void {
    this.#run = run;
  }

  /** A change affecting `ref`: touch it after the debounce, or once its minimum interval has passed. */
  request(ref: WorkloadRef, reason: TouchReason): void {
    const key = workloadKey(ref);
    const now = Date.now();
    if (this.#schedule.earliestAllowed(key) > now + this.options.debounceMs) {
      this.metrics.deferred('min-interval');
    }
    this.#schedule.request(key, reason === 'resync' ? reason : reason.source, now);
    const pending = this.#pendingFor(key, ref);
    if (reason !== 'resync') mergeChange(pending.changes, reason.source, reason.change);
    this.metrics.pending(this.#schedule.size);
    this.#arm();
  }

  /** Puts a touch back, to run at `at` (rate limited, outside its window, or failed). */
  defer(touch: QueuedTouch, at: number): void {
    const key = workloadKey(touch.ref);
    this.#schedule.defer({ key, reasons: [...touch.changes.keys()] }, at);
    const pending = this.#pendingFor(key, touch.ref);
    for (const [source, change] of touch.changes) mergeChange(pending.changes, source, change);
    this.#arm();
  }

  /** A token of the global rate limit, or how long until there is one. */
  takeToken(): { ok: true } | { ok: false; waitMs: number } {
    return this.#bucket.take(Date.now());
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
    const next = this.#schedule.nextDueAt();
    if (next === undefined) return;
    this.#timer = setTimeout(() => void this.#processDue(), Math.max(0, next - Date.now()));
  }

  async #processDue(): Promise<void> {
    if (this.#processing || this.#stopped) return;
    this.#processing = true;
    try {
      // Resolved before the first await: a request made meanwhile sets its own ref again.
      const due = this.#schedule.takeDue(Date.now()).map(({ key }) => {
        const pending = this.#pending.get(key);
        this.#pending.delete(key);
        return pending;
      });
      for (const touch of due) {
        if (this.#stopped) return;
        if (touch) await this.#run(touch);
      }
    } finally {
      this.#processing = false;
      if (!this.#stopped) this.metrics.pending(this.#schedule.size);
      this.#arm();
    }
  }
}
