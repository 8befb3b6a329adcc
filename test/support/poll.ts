// How the suites poll: between tries a rest of 200 ms, or as long as the last try took when that
// was longer. A try that runs kubectl costs a quarter of a second of CPU, more under load, so
// that two files polling back to back would take the cores from the controllers they wait for;
// this keeps a poll's share of its time at half or less.

import { poll } from '../../tools/lib/poll.js';

const MIN_REST_MS = 200;

/** The rest, in ms, after a try that began at `triedAt` (Date.now()): poll's `restMs`. */
export function restAfterTry(triedAt: number): number {
  return Math.max(MIN_REST_MS, Date.now() - triedAt);
}

/** Tries `check` until it holds, or throws after `timeoutMs`. */
export async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  await poll(async () => ((await check()) ? true : undefined), {
    restMs: restAfterTry,
    timeoutMs,
    timedOut: () => {
      throw new Error(`timed out waiting for ${what}`);
    },
  });
}
