// Waiting on work shared with others (an answer another caller started, a connection being
// opened) without letting one caller's deadline outlive its signal: the caller gets the
// work's outcome, or its own when its signal aborts first, and the listener goes with it.

/** `pending`'s outcome, or `whenAborted()`'s if `signal` aborts first. */
export function untilAborted<T>(
  pending: Promise<T>,
  signal: AbortSignal | undefined,
  whenAborted: () => Promise<T>,
): Promise<T> {
  if (!signal) return pending;
  if (signal.aborted) return whenAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(whenAborted());
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
