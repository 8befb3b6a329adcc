// Shutdown without a dropped review. The apiserver calls webhooks over HTTP/1.1
// keep-alive connections (it never speaks HTTP/2 to a Service) and keeps an idle
// one for 90 s. Closing a connection it may be sending on races with its write,
// and the apiserver does not retry a POST: the review fails open. So a replica
// that stops closes no connection itself: every answer says `Connection: close`
// (app.ts, while not ready), and it waits until the clients have closed them all
// — after their next request, or at their idle timeout.

import type { Server } from 'node:net';
import { type Clock, sleep, systemClock } from '../runtime/index.js';

/** The drain waits until it is over; nothing aborts its polls. */
const UNTIL_DONE = new AbortController().signal;

interface DrainResult {
  /** Connections still open when the time was up (0: drained). */
  readonly remaining: number;
  readonly durationMs: number;
}

export async function waitForConnectionsToClose(
  server: Server,
  timeoutMs: number,
  pollMs = 200,
  clock: Clock = systemClock,
): Promise<DrainResult> {
  const started = clock.now();
  for (;;) {
    const open = await openConnections(server);
    const durationMs = clock.now() - started;
    if (open === 0 || durationMs >= timeoutMs) return { remaining: open, durationMs };
    await sleep(Math.min(pollMs, timeoutMs - durationMs), UNTIL_DONE, clock);
  }
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.getConnections((error, count) => resolve(error ? 0 : count)),
  );
}
