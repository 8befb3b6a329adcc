// When to touch each workload: debounce (a burst of changes makes one touch),
// a minimum interval between touches of one workload (two controllers fighting
// over a Secret cannot make thousands of ReplicaSets), and a maximum wait so a
// steady trickle of changes cannot postpone a touch forever. Pure: the clock is
// passed in.

interface ScheduleOptions {
  readonly debounceMs: number;
  readonly minIntervalMs: number;
  /** A pending touch is never postponed by further changes beyond this. */
  readonly maxDelayMs: number;
}

interface Pending {
  firstAt: number;
  dueAt: number;
  readonly reasons: Set<string>;
}

interface DueTouch {
  readonly key: string;
  readonly reasons: readonly string[];
}

export class TouchSchedule {
  readonly #pending = new Map<string, Pending>();
  readonly #lastTouch = new Map<string, number>();

  constructor(readonly options: ScheduleOptions) {}

  /** Records a change affecting `key`; `reason` names what changed (e.g. `configmap/app`). */
  request(key: string, reason: string, now: number): void {
    const pending = this.#pending.get(key);
    if (pending) {
      pending.reasons.add(reason);
      pending.dueAt = Math.max(
        pending.dueAt,
        Math.min(now + this.options.debounceMs, pending.firstAt + this.options.maxDelayMs),
      );
      pending.dueAt = Math.max(pending.dueAt, this.#earliestAllowed(key));
      return;
    }
    const dueAt = Math.max(now + this.options.debounceMs, this.#earliestAllowed(key));
    this.#pending.set(key, { firstAt: now, dueAt, reasons: new Set([reason]) });
  }

  /** Removes and returns every touch due at `now`. */
  takeDue(now: number): DueTouch[] {
    // Touches older than the interval constrain nothing: forget them (workloads come and go).
    for (const [key, at] of this.#lastTouch) {
      if (at + this.options.minIntervalMs <= now) this.#lastTouch.delete(key);
    }
    const due: DueTouch[] = [];
    for (const [key, pending] of this.#pending) {
      if (pending.dueAt <= now) {
        due.push({ key, reasons: [...pending.reasons].sort() });
        this.#pending.delete(key);
      }
    }
    return due;
  }

  /** Puts a touch back to run at `at` (rate limited, outside its window, or failed). */
  defer(touch: DueTouch, at: number): void {
    const pending = this.#pending.get(touch.key);
    if (pending) {
      for (const reason of touch.reasons) pending.reasons.add(reason);
      pending.dueAt = Math.min(pending.dueAt, at);
      return;
    }
    this.#pending.set(touch.key, { firstAt: at, dueAt: at, reasons: new Set(touch.reasons) });
  }

  /** Records that `key` was touched at `now`; later touches wait for the minimum interval. */
  touched(key: string, now: number): void {
    this.#lastTouch.set(key, now);
  }

  /** When the next touch falls due, for the timer; undefined when nothing is pending. */
  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const pending of this.#pending.values()) {
      if (next === undefined || pending.dueAt < next) next = pending.dueAt;
    }
    return next;
  }

  earliestAllowed(key: string): number {
    return this.#earliestAllowed(key);
  }

  get size(): number {
    return this.#pending.size;
  }

  clear(): void {
    this.#pending.clear();
  }

  #earliestAllowed(key: string): number {
    const last = this.#lastTouch.get(key);
    return last === undefined ? 0 : last + this.options.minIntervalMs;
  }
}
