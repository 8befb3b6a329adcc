// Preloaded (`--import`) into the webhook process: counts every connection it opens to a
// server, by destination (against the real apiserver the bench cannot count accepted
// connections at the other end) — the sockets of its http.Agent and every TLS connection,
// which is both an https.Agent's socket and the connection under an HTTP/2 session
// (src/kube/http2.ts opens it with tls.connect); those that chose h2 in the handshake are
// counted again under `DESTINATION h2` — and the connections its HTTPS server accepts
// (`accepted`: does the apiserver keep them alive?), and writes the counts to
// CONFIGHASH_BENCH_CONNECTIONS_FILE. Costs one increment per new connection.

import { writeFileSync } from 'node:fs';

// As CommonJS gives them, as src/kube/node-http.ts does: an ES import of node:http would load
// Node's bundled undici into the measured process (9.5 MB) and count it as confighash's.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');
const tls = process.getBuiltinModule('node:tls');

const file = process.env.CONFIGHASH_BENCH_CONNECTIONS_FILE;
const counts: Record<string, number> = {};
let dirty = true;

function count(key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
  dirty = true;
}

type Destination = { host?: string; port?: number | string };

// Plain HTTP: the http.Agent's sockets (an https.Agent has a createConnection of its own, which
// calls tls.connect, counted below).
const agent = http.Agent.prototype as unknown as {
  createConnection: (options: Destination, ...rest: unknown[]) => unknown;
};
const createConnection = agent.createConnection;
agent.createConnection = function (this: unknown, options, ...rest) {
  count(`${options.host ?? 'localhost'}:${options.port ?? ''}`);
  return createConnection.call(this, options, ...rest);
};

/** tls.connect(options), (port, options), (port, host, options): the destination of each. */
function destinationOf(args: readonly unknown[]): string {
  const [first, second] = args;
  const options = (typeof first === 'object' && first !== null ? first : {}) as Destination;
  const port = typeof first === 'object' ? options.port : first;
  const host = typeof second === 'string' ? second : (options.host ?? 'localhost');
  return `${host}:${port ?? ''}`;
}

const connect = tls.connect;
(tls as { connect: typeof tls.connect }).connect = ((...args: Parameters<typeof tls.connect>) => {
  const destination = destinationOf(args);
  count(destination);
  const socket = connect(...args);
  socket.once('secureConnect', () => {
    if (socket.alpnProtocol === 'h2') count(`${destination} h2`);
  });
  return socket;
}) as typeof tls.connect;

const createServer = https.createServer;
https.createServer = ((...args: Parameters<typeof https.createServer>) => {
  const server = createServer(...args);
  server.on('connection', () => count('accepted'));
  return server;
}) as typeof https.createServer;

if (file) {
  const flush = () => {
    if (!dirty) return;
    dirty = false;
    writeFileSync(file, JSON.stringify(counts));
  };
  setInterval(flush, 100).unref();
  process.on('exit', flush);
}
