// How many body bytes may be read and parsed at once (docs/design.md §4 "Bounds").
// A 7 MiB review costs a few times its size while it is parsed and reviewed
// (bench scenario 9: 32 at once peaked at 573 MiB, over the chart's 256Mi), so a
// burst of them waits for budget before its body is read: the bytes stay in the
// client's socket meanwhile. A request is let in whenever its bytes fit, not in
// arrival order, so a burst of large ones never holds up the small reviews the
// apiserver sends; a large one that waits past the arrival limit is cut off (408).

export class ByteBudget {
  #free: number;
  readonly #waiting = new Set<{ readonly bytes: number; grant(): void }>();

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Takes `bytes` (at most `size`): true once taken (owe a release), false if `signal` aborts first. */
  take(bytes: number, signal: AbortSignal): boolean | Promise<boolean> {
    if (bytes <= this.#free) {
      this.#free -= bytes;
      return true;
    }
    if (signal.aborted) return false;
    return new Promise((resolve) => {
      const waiter = {
        bytes,
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

  release(bytes: number): void {
    this.#free += bytes;
    for (const waiter of this.#waiting) {
      if (waiter.bytes > this.#free) continue;
      this.#free -= waiter.bytes;
      this.#waiting.delete(waiter);
      waiter.grant();
    }
  }
}
