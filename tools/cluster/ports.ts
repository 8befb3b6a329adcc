// Free loopback ports, asked of the kernel rather than guessed.

import { once } from 'node:events';
import { createServer } from 'node:net';

/** A free loopback port, listened on until `release()`: no other asker gets it meanwhile. */
export interface HeldPort {
  readonly port: number;
  release(): Promise<void>;
}

/**
 * Every port this process has handed out. A port let go may be offered again to the next ask,
 * in this process too: two webhooks started side by side, one on a port named earlier and let
 * go just before, must not be given the same one.
 */
const handedOut = new Set<number>();

/**
 * For a port that must be named long before its process listens on it (in a configuration
 * read by another process that starts first): a port only asked for and let go can be handed
 * to anyone asking in between, and the process that listens later then fails (EADDRINUSE).
 */
export async function holdFreePort(): Promise<HeldPort> {
  for (;;) {
    const held = await listenOnFreePort();
    if (!handedOut.has(held.port)) {
      handedOut.add(held.port);
      return held;
    }
    await held.release();
  }
}

export async function freePort(): Promise<number> {
  const held = await holdFreePort();
  await held.release();
  return held.port;
}

async function listenOnFreePort(): Promise<HeldPort> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const release = async () => {
    if (!server.listening) return;
    server.close();
    await once(server, 'close');
  };
  const address = server.address();
  if (address === null || typeof address === 'string') {
    await release();
    throw new Error('no free port');
  }
  return { port: address.port, release };
}
