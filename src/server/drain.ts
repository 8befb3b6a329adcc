// Shutdown without a dropped review. The apiserver calls webhooks over HTTP/1.1
// keep-alive connections (it never speaks HTTP/2 to a Service) and keeps an idle
// one for 90 s. Closing a connection it may be sending on races with its write,
// and the apiserver does not retry a POST: the review fails open. So a replica
// that stops closes no connection itself: every answer says `Connection: close`
// (app.ts, while not ready), and it waits until the clients have closed them all
// — after their next request, or at their idle timeout.

import type { Server } from 'node:net';

export interface DrainResult {
  /** Connections still open when the time was up (0: drained). */
  readonly remaining: number;
  readonly durationMs: number;
}

export async function waitForConnectionsToClose(
  server: Server,
  timeoutMs: number,
  pollMs = 200,
): Promise<DrainResult> {
  const started = Date.now();
  for (;;) {
    const open = await openConnections(server);
    const durationMs = Date.now() - started;
    if (open === 0 || durationMs >= timeoutMs) return { remaining: open, durationMs };
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, timeoutMs - durationMs)));
  }
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.getConnections((error, count) => resolve(error ? 0 : count)),
  );
}
