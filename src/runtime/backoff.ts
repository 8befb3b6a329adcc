// The list-watch loop's backoff, jittered, as client-go's reflector has it
// (wait.NewExponentialBackoffManager: 800 ms doubling to 30 s, jitter 1.0, reset after
// 2 min): watches that fail together — an apiserver restarted under a thousand
// replicas — must not all come back in the same second.

/** A number in [0, 1), as Math.random gives. Injectable, so that a test can seed it. */
export type Random = () => number;

export interface BackoffOptions {
  readonly initialMs?: number;
  /** The base doubles after each failure up to this. */
  readonly maxMs?: number;
  /** Each wait is the base times 1 to 1 + jitter, at random. */
  readonly jitter?: number;
  /** A watch that lasted this long was healthy: the next failure starts from the initial base. */
  readonly stableMs?: number;
  readonly random?: Random;
}

// Why these figures: the base doubles from 1 s to 15 s and each wait is the base times 1 to
// 4 (jitter 3.0), so the first retry of replicas that failed together spreads over 3 s (a
// one-second window holds about a third of them; with client-go's jitter 1.0 over its 800 ms
// base all of them would land within 0.8 s), and a persistent failure waits 15 to 60 s, the
// same ceiling as client-go's 30 s × (1 + 1.0). Reset after 2 minutes, as client-go's.
export const BACKOFF: Required<Omit<BackoffOptions, 'random'>> = {
  initialMs: 1_000,
  maxMs: 15_000,
  jitter: 3,
  stableMs: 2 * 60_000,
};

/** Waits that grow while failures repeat, each jittered, back to the start after a stable period. */
export class Backoff {
  readonly #options: Required<BackoffOptions>;
  #base: number;

  constructor(options: BackoffOptions = {}) {
    this.#options = { ...BACKOFF, random: Math.random, ...options };
    this.#base = this.#options.initialMs;
  }

  /** The wait before the next attempt; the base then doubles, up to its maximum. */
  next(): number {
    const { jitter, maxMs, random } = this.#options;
    const wait = this.#base * (1 + jitter * random());
    this.#base = Math.min(this.#base * 2, maxMs);
    return wait;
  }

  /** Something ran for `ranMs`: from the stable period on, the next wait starts from the initial base. */
  ran(ranMs: number): void {
    if (ranMs >= this.#options.stableMs) this.#base = this.#options.initialMs;
  }
}
