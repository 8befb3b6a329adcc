// One HTTP client transport, measured on its own in this process (bench/transports.ts):
// CPU per review's worth of GETs (three in parallel, each body read and parsed) at a
// concurrency, and the resident memory once the transport is loaded and has been used.
// Also the other end: one process serving the same ConfigMap over HTTP/1.1 and h2c.

import http from 'node:http';
import type http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { bareGet } from './bare-get.js';
import { serveRequests } from './ipc.js';

export type Transport = 'node:http' | 'undici' | 'node:http2';
type Get = (path: string) => Promise<unknown>;

const BODY = JSON.stringify({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: 'bench', namespace: 'bench', uid: 'u', resourceVersion: '1' },
  data: { 'app.yaml': 'x'.repeat(1024) },
});
const HEADERS = { accept: 'application/json', authorization: 'Bearer bench-token' };
const PATHS = ['/api/v1/namespaces/bench/configmaps/a', '/b', '/c'];

async function listen(server: http.Server | http2.Http2Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function serve() {
  const h1 = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(BODY);
  });
  const { createServer } = await import('node:http2');
  const h2 = createServer();
  h2.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(BODY);
  });
  return { http1: await listen(h1), h2c: await listen(h2) };
}

/** confighash's settings: keep-alive, at most 64 sockets, the most recently used first. */
function nodeHttp(port: number): Get {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, scheduling: 'lifo' });
  return bareGet(agent, { hostname: '127.0.0.1', port }, HEADERS);
}

async function undici(port: number): Promise<Get> {
  // Loaded only here, as node:http2 below.
  const { Pool } = await import('undici');
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 64 });
  return async (path) => {
    const { body } = await pool.request({ path, method: 'GET', headers: HEADERS });
    return JSON.parse(await body.text());
  };
}

// Loaded only here, so that the other transports' memory does not include it.
async function nodeHttp2(port: number): Promise<Get> {
  const { connect } = await import('node:http2');
  const session = connect(`http://127.0.0.1:${port}`);
  return (path) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':path': path, ...HEADERS });
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      stream.on('error', reject);
      stream.end();
    });
}

async function rounds(get: Get, count: number, concurrency: number): Promise<void> {
  let started = 0;
  const worker = async () => {
    while (started++ < count) await Promise.all(PATHS.map(get));
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function measure(message: Record<string, unknown>) {
  const { transport, ports, count, concurrency } = message as unknown as {
    transport: Transport;
    ports: { http1: number; h2c: number };
    count: number;
    concurrency: number;
  };
  const get =
    transport === 'node:http'
      ? nodeHttp(ports.http1)
      : transport === 'undici'
        ? await undici(ports.http1)
        : await nodeHttp2(ports.h2c);
  await rounds(get, Math.ceil(count / 5), concurrency);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  await rounds(get, count, concurrency);
  const used = process.cpuUsage(cpu);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 500));
  return {
    cpuUsPerReview: (used.user + used.system) / count,
    reviewsPerS: count / seconds,
    rssMb: process.memoryUsage.rss() / 1e6,
  };
}

serveRequests({ serve, measure });
