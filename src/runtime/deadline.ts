// The one deadline of both processes: a review's lookups, every follow request, an
// evaluation's lookups and each step of the election. A request to the apiserver can hang
// (a dead keep-alive socket, a stalled apiserver); without a bound a review would outlive
// the apiserver's timeout, a leader would neither notice its renew deadline nor release on
// shutdown, and a touch would hold the queue.

import { type Clock, systemClock } from './clock.js';

/**
 * Runs `work` with a signal that aborts when `parent` does or `ms` pass, whichever comes
 * first, and lets go of both as soon as `work` settles. Not AbortSignal.any with
 * AbortSignal.timeout: on Node 20 each such signal that is given a listener (every
 * request gives one) stays reachable after it is done, so a follower's heap grew with
 * every request it had ever made, and a webhook's signals lived for the whole budget,
 * seconds after their review, long enough to reach the old generation
 * (BENCHMARKS.md has the figures). Cleared here, they die young.
 */
export async function withDeadline<T>(
  parent: AbortSignal | undefined,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  const bounded = new AbortController();
  const abortWithParent = () => bounded.abort(parent?.reason);
  if (parent?.aborted) abortWithParent();
  else parent?.addEventListener('abort', abortWithParent, { once: true });
  const cancel = clock.setTimer(ms, () =>
    bounded.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
  );
  try {
    return await work(bounded.signal);
  } finally {
    cancel();
    parent?.removeEventListener('abort', abortWithParent);
  }
}
