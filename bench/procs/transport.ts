// One HTTP client transport, measured on its own in this process (bench/transports.ts):
// CPU per review's worth of GETs (three in parallel, each body read and parsed) at a
// concurrency, and the resident memory once the transport is loaded and has been used.
// Also the other end: one process serving the same ConfigMap over plain HTTP/1.1 and h2c, and
// over TLS offering h2 and http/1.1 in the handshake, as kube-apiserver does.

import http from 'node:http';
import type http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { bareGet } from './bare-get.js';
import { serveRequests } from './ipc.js';

export type Transport = 'node:http' | 'undici' | 'node:http2';
type Get = (path: string) => Promise<unknown>;

/** Where the server listens: plain (HTTP/1.1 and h2c on two ports) and TLS (both on one). */
export interface Ports {
  readonly http1: number;
  readonly h2c: number;
  readonly tls: number;
}

/** The client's end of a TLS run: the CA the server's certificate chains to. */
interface Server {
  readonly ports: Ports;
  readonly ca?: string;
}

const BODY = JSON.stringify({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: 'bench', namespace: 'bench', uid: 'u', resourceVersion: '1' },
  data: { 'app.yaml': 'x'.repeat(1024) },
});
const HEADERS = { accept: 'application/json', authorization: 'Bearer bench-token' };
const PATHS = ['/api/v1/namespaces/bench/configmaps/a', '/b', '/c'];

async function listen(
  server: http.Server | http2.Http2Server | http2.Http2SecureServer,
): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function serve(message: Record<string, unknown>): Promise<Ports> {
  const tls = message.tls as { cert: string; key: string };
  const answer = (_request: unknown, response: http.ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(BODY);
  };
  const h1 = http.createServer(answer);
  const { createServer, createSecureServer } = await import('node:http2');
  const h2 = createServer();
  h2.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(BODY);
  });
  // One handler for both protocols (the compatibility API), as bench/procs/api-stub.ts.
  const secure = createSecureServer(
    { ...tls, allowHTTP1: true },
    answer as unknown as Parameters<typeof createSecureServer>[1],
  );
  return { http1: await listen(h1), h2c: await listen(h2), tls: await listen(secure) };
}

/** confighash's settings: keep-alive, at most 64 sockets, the most recently used first. */
function nodeHttp(port: number, ca: string | undefined): Get {
  const settings = { keepAlive: true, maxSockets: 64, scheduling: 'lifo' } as const;
  const agent = ca ? new https.Agent({ ...settings, ca }) : new http.Agent(settings);
  return bareGet(agent, { hostname: '127.0.0.1', port }, HEADERS);
}

async function undici(port: number, ca: string | undefined): Promise<Get> {
  // Loaded only here, as node:http2 below.
  const { Pool } = await import('undici');
  const pool = new Pool(`${ca ? 'https' : 'http'}://127.0.0.1:${port}`, {
    connections: 64,
    ...(ca ? { connect: { ca } } : {}),
  });
  return async (path) => {
    const { body } = await pool.request({ path, method: 'GET', headers: HEADERS });
    return JSON.parse(await body.text());
  };
}

// Loaded only here, so that the other transports' memory does not include it. Over TLS,
// http2.connect opens the connection offering h2 alone (ALPN), as confighash's http2.ts offers h2
// first.
async function nodeHttp2(port: number, ca: string | undefined): Promise<Get> {
  const { connect } = await import('node:http2');
  const session = connect(`${ca ? 'https' : 'http'}://127.0.0.1:${port}`, ca ? { ca } : {});
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
  const { transport, server, count, concurrency } = message as unknown as {
    transport: Transport;
    server: Server;
    count: number;
    concurrency: number;
  };
  const { ports, ca } = server;
  const get =
    transport === 'node:http'
      ? nodeHttp(ca ? ports.tls : ports.http1, ca)
      : transport === 'undici'
        ? await undici(ca ? ports.tls : ports.http1, ca)
        : await nodeHttp2(ca ? ports.tls : ports.h2c, ca);
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
