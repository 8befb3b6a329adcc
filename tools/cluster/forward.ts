// The host's way into a node run's network namespace: a loopback TCP port
// here, joined to a Unix socket that tools/node/unix-to-tcp.mjs serves inside
// and forwards to a TCP address there. Nothing is added to the host's network:
// no link, route or rule that a killed run could leave behind.

import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Forward {
  /** The loopback port on this host. */
  readonly port: number;
  close(): Promise<void>;
}

export async function forwardLoopbackToSocket(socketPath: string): Promise<Forward> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    const upstream = connect(socketPath);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    downstream.pipe(upstream).pipe(downstream);
    downstream.on('error', () => upstream.destroy());
    upstream.on('error', () => downstream.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no loopback port');
  return {
    port: address.port,
    async close() {
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
