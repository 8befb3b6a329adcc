// The one deadline of both processes: a review's lookups, every follow request, an
// evaluation's lookups and each step of the election. A request to the apiserver can hang
// (a dead keep-alive socket, a stalled apiserver); without a bound a review would outlive
// the apiserver's timeout, a leader would neither notice its renew deadline nor release on
// shutdown, and a touch would hold the queue.

import { type Clock, systemClock } from './clock.js';

/**
 * Work with no caller's signal (a review; a CLI command) shares its deadline with the work that
 * began with the same budget within this many ms before it: one AbortController and one timer
 * per bucket, however many reviews a second, not one of each and a listener per review. The
 * bucket's deadline is rounded down, so a deadline is at most this much early, never late.
 */
export const SHARED_DEADLINE_MS = 10;

/**
 * Runs `work` with a signal that aborts when `parent` does or `ms` pass, whichever comes
 * first, and lets go of both as soon as `work` settles. Not AbortSignal.any with
 * AbortSignal.timeout: on Node 20 each such signal that is given a listener (every
 * request gives one) stays reachable after it is done, so a follower's heap would grow with
 * every request it makes, and a webhook's signals would live for the whole budget, seconds
 * after their review, long enough to reach the old generation (BENCHMARKS.md has the figures).
 * Cleared here, they die young; without a parent, one shared signal per SHARED_DEADLINE_MS
 * lives for the budget: a few hundred, however busy.
 */
export async function withDeadline<T>(
  parent: AbortSignal | undefined,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  if (parent === undefined) {
    const bucket = sharedDeadlines(clock).enter(ms);
    try {
      return await work(bucket.controller.signal);
    } finally {
      bucket.working--;
    }
  }
  const bounded = new AbortController();
  const abortWithParent = () => bounded.abort(parent.reason);
  if (parent.aborted) abortWithParent();
  else parent.addEventListener('abort', abortWithParent, { once: true });
  const cancel = clock.setTimer(ms, () => bounded.abort(timeoutReason(ms)));
  try {
    return await work(bounded.signal);
  } finally {
    cancel();
    parent.removeEventListener('abort', abortWithParent);
  }
}

function timeoutReason(ms: number): DOMException {
  return new DOMException(`no answer within ${ms} ms`, 'TimeoutError');
}

/** One shared deadline: its controller, and how much of the work given its signal is unsettled. */
interface Bucket {
  readonly controller: AbortController;
  working: number;
}

/** The shared deadlines of one clock: a signal per budget and bucket, until its timer fires. */
class SharedDeadlines {
  readonly #due = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  /** The bucket of work with budget `ms` starting now, counted in until the caller settles. */
  enter(ms: number): Bucket {
    const at = Math.floor((this.clock.now() + ms) / SHARED_DEADLINE_MS) * SHARED_DEADLINE_MS;
    const key = `${ms}@${at}`;
    let bucket = this.#due.get(key);
    if (!bucket) {
      const opened: Bucket = { controller: new AbortController(), working: 0 };
      this.#due.set(key, opened);
      // Never cleared, so it must not hold the process: a CLI command that is done exits at
      // once, and work still waiting for an answer holds the process by its socket. When it
      // fires after all its work settled (a webhook's every bucket, nearly), nothing is aborted:
      // a TimeoutError (a DOMException, its stack captured) and an abort event dispatched to
      // no one cost a busy webhook about 4 % of its CPU (BENCHMARKS.md, "Ratio run").
      this.clock.setTimer(
        Math.max(0, at - this.clock.now()),
        () => {
          this.#due.delete(key);
          if (opened.working > 0) opened.controller.abort(timeoutReason(ms));
        },
        { keepAlive: false },
      );
      bucket = opened;
    }
    bucket.working++;
    return bucket;
  }
}

const sharedByClock = new WeakMap<Clock, SharedDeadlines>();

function sharedDeadlines(clock: Clock): SharedDeadlines {
  let shared = sharedByClock.get(clock);
  if (!shared) {
    shared = new SharedDeadlines(clock);
    sharedByClock.set(clock, shared);
  }
  return shared;
}
