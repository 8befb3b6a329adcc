// The one semaphore: a pool of slots that callers take some of and give back, whose
// waiters give up when their signal aborts. The bounds of docs/design.md §4 are slots —
// lookups in flight per process, live namespace reads, body bytes read at once (a body
// takes as many slots as it has bytes), lookup answer bytes held at once — and so are
// follow mode's lists in flight. A wait
// counts against the caller's own deadline.

export class Slots {
  #free: number;
  /** Waiters in arrival order (a Set keeps insertion order and deletes in O(1)). */
  readonly #waiting = new Set<{ readonly count: number; grant(): void }>();

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Slots taken now and not yet released. */
  get inUse(): number {
    return this.size - this.#free;
  }

  /** Takes `count` slots if they are free now; never waits. The caller then owes a release. */
  tryTake(count = 1): boolean {
    if (count > this.#free) return false;
    this.#free -= count;
    return true;
  }

  /**
   * Takes `count` slots (at most `size`): true once taken, at once or later (owe a
   * release), false if `signal` aborts first. Waiters are served in arrival order, each as
   * soon as its count fits: a small ask passes a large one that waits.
   */
  take(signal: AbortSignal, count = 1): boolean | Promise<boolean> {
    if (this.tryTake(count)) return true;
    if (signal.aborted) return false;
    return new Promise((resolve) => {
      const waiter = {
        count,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      const onAbort = () => {
        this.#waiting.delete(waiter);
        resolve(false);
      };
      this.#waiting.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives `count` slots back, to the waiters that now fit, in arrival order. */
  release(count = 1): void {
    this.#free += count;
    for (const waiter of this.#waiting) {
      if (this.#free === 0) return;
      if (!this.tryTake(waiter.count)) continue;
      this.#waiting.delete(waiter);
      waiter.grant();
    }
  }
}
