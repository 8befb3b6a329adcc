// Runs inside a node run's network namespace (tools/cluster/forward.ts): accepts
// connections on a Unix socket, which the host can reach through the file
// system, and joins each one to a TCP address inside the namespace.
//   node unix-to-tcp.mjs SOCKET HOST PORT
import { rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';

const [socketPath, host, port] = process.argv.slice(2);
if (!socketPath || !host || !port) {
  process.stderr.write('usage: unix-to-tcp.mjs SOCKET HOST PORT\n');
  process.exit(2);
}
rmSync(socketPath, { force: true });
const server = createServer((downstream) => {
  const upstream = connect(Number(port), host);
  downstream.pipe(upstream).pipe(downstream);
  downstream.on('error', () => upstream.destroy());
  upstream.on('error', () => downstream.destroy());
});
server.listen(socketPath, () =>
  process.stderr.write(`forwarding ${socketPath} to ${host}:${port}\n`),
);
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => server.close(() => process.exit(0)));
