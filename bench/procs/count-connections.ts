// Preloaded (`--import`) into the webhook process: counts every connection an
// http(s).Agent opens, by destination (against the real apiserver the bench
// cannot count accepted connections at the other end), and the connections its
// HTTPS server accepts (`accepted`: does the apiserver keep them alive?), and
// writes the counts to CONFIGHASH_BENCH_CONNECTIONS_FILE. Costs one increment
// per new connection.

import { writeFileSync } from 'node:fs';

// As CommonJS gives them, as src/kube/node-http.ts does: an ES import of node:http would load
// Node's bundled undici into the measured process (9.5 MB) and count it as confighash's.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

const file = process.env.CONFIGHASH_BENCH_CONNECTIONS_FILE;
const counts: Record<string, number> = {};
let dirty = true;

type CreateConnection = (
  options: { host?: string; port?: number | string },
  ...rest: unknown[]
) => unknown;

for (const prototype of [http.Agent.prototype, https.Agent.prototype]) {
  const target = prototype as unknown as { createConnection: CreateConnection };
  const original = target.createConnection;
  target.createConnection = function (this: unknown, options, ...rest) {
    const destination = `${options.host ?? 'localhost'}:${options.port ?? ''}`;
    counts[destination] = (counts[destination] ?? 0) + 1;
    dirty = true;
    return original.call(this, options, ...rest);
  };
}

const createServer = https.createServer;
https.createServer = ((...args: Parameters<typeof https.createServer>) => {
  const server = createServer(...args);
  server.on('connection', () => {
    counts.accepted = (counts.accepted ?? 0) + 1;
    dirty = true;
  });
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
