// The harness's one way to wait for something (tools/, bench/ and test/ alike): try, and rest
// between tries until the try answers or the deadline has passed. src/ has its own sleep
// (src/runtime/clock.ts), on the injected clock and cancelled by a signal.

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface PollOptions<T> {
  /** The rest after each try, in ms; as a function, of when the try began (Date.now()). */
  readonly restMs: number | ((triedAt: number) => number);
  /** How long to keep trying, counted from `since`; without it, until a try answers. */
  readonly timeoutMs?: number;
  /** When the wait began (Date.now()); by default, when `poll` is called. */
  readonly since?: number;
  /**
   * What the wait ends with once the deadline has passed: a throw, most often, saying what was
   * awaited and what was seen. By default "timed out after N s".
   */
  readonly timedOut?: () => T | Promise<T>;
}

/**
 * Tries `attempt` until it answers something other than `undefined`, resting `restMs` after each
 * try that does not. No try begins past the deadline: a rest that ends there ends the wait with
 * `timedOut`. The first try is always made.
 */
export async function poll<T>(
  attempt: () => Promise<T | undefined>,
  options: PollOptions<T>,
): Promise<T> {
  const { restMs, timeoutMs = Number.POSITIVE_INFINITY } = options;
  const deadline = (options.since ?? Date.now()) + timeoutMs;
  for (;;) {
    const triedAt = Date.now();
    const answer = await attempt();
    if (answer !== undefined) return answer;
    await sleep(typeof restMs === 'number' ? restMs : restMs(triedAt));
    if (Date.now() >= deadline) {
      if (options.timedOut) return options.timedOut();
      throw new Error(`timed out after ${timeoutMs / 1000} s`);
    }
  }
}
