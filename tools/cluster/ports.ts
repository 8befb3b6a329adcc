// Free loopback ports, asked of the kernel rather than guessed.

import { once } from 'node:events';
import { createServer } from 'node:net';

/** A free loopback port, listened on until `release()`: no other asker gets it meanwhile. */
export interface HeldPort {
  readonly port: number;
  release(): Promise<void>;
}

/**
 * For a port that must be named long before its process listens on it (in a configuration
 * read by another process that starts first): a port only asked for and let go can be handed
 * to anyone asking in between, and the process that listens later then fails (EADDRINUSE).
 */
export async function holdFreePort(): Promise<HeldPort> {
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

export async function freePort(): Promise<number> {
  const held = await holdFreePort();
  await held.release();
  return held.port;
}
