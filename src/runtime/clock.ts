// Time, injectable: what every timer of both processes runs on (the review deadline, the
// follow requests' deadlines, the election, the watch loop's backoff and a watch's silence,
// the touch queue, the serving certificate's reload, the drain, self-managed certificates'
// checks), so that tests can drive them with a clock of their own.

export interface Clock {
  now(): number;
  /**
   * Calls `fire` once after `ms`, unless the returned function is called first. A timer that
   * does not `keepAlive` lets the process exit before it fires, when nothing else holds it.
   */
  setTimer(ms: number, fire: () => void, options?: { readonly keepAlive: false }): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fire, options) {
    const timer = setTimeout(fire, ms);
    if (options?.keepAlive === false) timer.unref();
    return () => clearTimeout(timer);
  },
};

/** Resolves after `ms`, or at once when `signal` aborts; leaves no listener behind. */
export function sleep(ms: number, signal: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      cancel();
      resolve();
    };
    const cancel = clock.setTimer(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Calls `tick` every `ms` until the returned function is called. */
export function every(
  clock: Clock,
  ms: number,
  tick: () => void,
  options?: { readonly keepAlive: false },
): () => void {
  const fire = () => {
    cancel = clock.setTimer(ms, fire, options);
    tick();
  };
  let cancel = clock.setTimer(ms, fire, options);
  return () => cancel();
}
