// A counting semaphore whose waiters give up when their signal aborts: the
// bounds of docs/design.md §4 (lookups in flight per process, namespace reads) are
// slots. A wait for a slot counts against the caller's own deadline.

export class Slots {
  #free: number;
  /** Waiters in arrival order (a Set keeps insertion order and deletes in O(1)). */
  readonly #waiting = new Set<(granted: boolean) => void>();

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Takes a slot if one is free now; the caller then owes a release(). */
  tryTake(): boolean {
    if (this.#free === 0) return false;
    this.#free--;
    return true;
  }

  /** Takes a slot, waiting for one: true once taken (owe a release()), false if `signal` aborts first. */
  take(signal: AbortSignal): Promise<boolean> {
    if (this.tryTake()) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        this.#waiting.delete(grant);
        resolve(false);
      };
      const grant = (granted: boolean) => {
        signal.removeEventListener('abort', onAbort);
        resolve(granted);
      };
      this.#waiting.add(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives a slot back: to the longest waiter, else to the pool. */
  release(): void {
    for (const grant of this.#waiting) {
      this.#waiting.delete(grant);
      grant(true);
      return;
    }
    this.#free++;
  }

  /** Slots taken now (for tests and metrics). */
  get inUse(): number {
    return this.size - this.#free;
  }
}
