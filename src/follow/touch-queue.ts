// When touches run: the schedule (debounce, minimum interval per workload,
// maximum delay), the global token bucket, and one timer that runs what is due,
// one touch at a time.

import type { FollowMetrics } from './metrics.js';
import { TokenBucket } from './rate-limit.js';
import { TouchSchedule } from './schedule.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

export interface QueuedTouch {
  readonly ref: WorkloadRef;
  /** What changed, e.g. `changed configmap/app`, or `resync`. */
  readonly reasons: readonly string[];
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
  /** The workload of every pending key. */
  readonly #refs = new Map<string, WorkloadRef>();
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
  request(ref: WorkloadRef, reason: string): void {
    const key = workloadKey(ref);
    const now = Date.now();
    if (this.#schedule.earliestAllowed(key) > now + this.options.debounceMs) {
      this.metrics.deferred('min-interval');
    }
    this.#schedule.request(key, reason, now);
    this.#refs.set(key, ref);
    this.metrics.pending(this.#schedule.size);
    this.#arm();
  }

  /** Puts a touch back, to run at `at` (rate limited, outside its window, or failed). */
  defer(touch: QueuedTouch, at: number): void {
    const key = workloadKey(touch.ref);
    this.#schedule.defer({ key, reasons: touch.reasons }, at);
    this.#refs.set(key, touch.ref);
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
    this.#refs.clear();
    this.metrics.pending(0);
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
      const due = this.#schedule.takeDue(Date.now()).map(({ key, reasons }) => {
        const ref = this.#refs.get(key);
        this.#refs.delete(key);
        return { ref, reasons };
      });
      for (const { ref, reasons } of due) {
        if (this.#stopped) return;
        if (ref) await this.#run({ ref, reasons });
      }
    } finally {
      this.#processing = false;
      if (!this.#stopped) this.metrics.pending(this.#schedule.size);
      this.#arm();
    }
  }
}
