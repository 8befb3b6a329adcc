// How the suites poll: between tries a rest of 200 ms, or as long as the last try took when that
// was longer. A try that runs kubectl costs a quarter of a second of CPU, more under load, so
// that two files polling back to back would take the cores from the controllers they wait for;
// this keeps a poll's share of its time at half or less.

const MIN_REST_MS = 200;

/** The rest after a try that began at `triedAt` (Date.now()). */
export function restAfterTry(triedAt: number): Promise<void> {
  const rest = Math.max(MIN_REST_MS, Date.now() - triedAt);
  return new Promise((resolve) => setTimeout(resolve, rest));
}

/** Tries `check` until it holds, or throws after `timeoutMs`. */
export async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const triedAt = Date.now();
    if (await check()) return;
    await restAfterTry(triedAt);
  }
  throw new Error(`timed out waiting for ${what}`);
}
