// Free loopback ports, asked of the kernel rather than guessed.

import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * Every port this process has handed out. A port is free only until something binds it, and the
 * kernel may offer a port it offered before to the next ask: a webhook whose port was chosen
 * before a control plane started must not find one of the control plane's there.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unboundPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

async function unboundPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}
