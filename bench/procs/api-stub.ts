// The API stub of the stub scenarios and the ratio run: a server in its own process
// that answers GETs of ConfigMaps and Secrets at once, from bodies serialised in
// advance, like an apiserver that costs nothing. Given a certificate it speaks TLS with
// HTTP/2 and HTTP/1.1 (the client chooses in the handshake), as kube-apiserver does;
// without one, plain HTTP/1.1 (bench/inprocess.ts). It counts the TCP connections it
// accepts, which is how the bench proves keep-alive reuse.

import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import {
  type ApiObject,
  benchSources,
  sourceObject,
  sourcePath,
  unrelatedObject,
} from '../lib/workload.js';
import { serveRequests } from './ipc.js';

interface StoredBody {
  /** The body up to the resourceVersion's digits, and after them. */
  readonly head: Buffer;
  readonly tail: Buffer;
  readonly whole: Buffer;
  version: number;
}

/** Idle keep-alive connections stay open between the bench's blocks. */
const KEEP_ALIVE_MS = 120_000;
const objects = new Map<string, StoredBody>();
/** The seeded namespace, opted in: what the webhook's namespace check lists, watches and GETs. */
let optedIn = 'bench';
let bumpVersions = false;
let connections = 0;
let requests = 0;
const notFound = Buffer.from(
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason: 'NotFound',
    code: 404,
  }),
);

function answer(request: http.IncomingMessage, response: http.ServerResponse): void {
  requests++;
  if (request.method === 'GET' && isNamespacePath(request.url ?? '')) {
    answerNamespaces(request.url ?? '', response);
    return;
  }
  const stored = request.method === 'GET' ? objects.get(request.url ?? '') : undefined;
  if (!stored) {
    response.writeHead(404, { 'content-type': 'application/json' }).end(notFound);
    return;
  }
  let body = stored.whole;
  if (bumpVersions) {
    // Every read sees a new resourceVersion: nothing can be answered from a memo.
    stored.version++;
    body = Buffer.concat([stored.head, Buffer.from(String(stored.version)), stored.tail]);
  }
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}

function createServer(tls: { cert: string; key: string } | undefined) {
  if (!tls) return http.createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, answer);
  // The compatibility API gives HTTP/2 requests the shape of HTTP/1.1 ones: one handler for both.
  const server = http2.createSecureServer(
    { cert: tls.cert, key: tls.key, allowHTTP1: true },
    answer as unknown as Parameters<typeof http2.createSecureServer>[1],
  );
  // Read by the HTTP/1.1 connections it takes (allowHTTP1), as on an http.Server.
  return Object.assign(server, { keepAliveTimeout: KEEP_ALIVE_MS });
}

/**
 * The namespace check's requests (src/kube/namespace-api.ts): a list of the one
 * opted-in namespace, a watch that stays open and silent, a GET of it.
 */
function isNamespacePath(url: string): boolean {
  return url.startsWith('/api/v1/namespaces?') || /^\/api\/v1\/namespaces\/[^/?]+$/.test(url);
}

function answerNamespaces(url: string, response: http.ServerResponse): void {
  const namespace = {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'PartialObjectMetadata',
    metadata: { name: optedIn, labels: { 'confighash.dev/enabled': 'true' } },
  };
  if (url.includes('watch=1')) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.flushHeaders();
    return;
  }
  if (url.startsWith('/api/v1/namespaces?')) {
    const list = {
      kind: 'PartialObjectMetadataList',
      metadata: { resourceVersion: '1' },
      items: [namespace],
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(list));
    return;
  }
  if (url === `/api/v1/namespaces/${optedIn}`) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(namespace));
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json' }).end(notFound);
}

function store(object: ApiObject): void {
  const path = sourcePath(object.metadata.namespace, {
    kind: object.kind,
    name: object.metadata.name,
  });
  const marker = '"resourceVersion":"';
  const text = JSON.stringify({
    apiVersion: 'v1',
    kind: object.kind,
    metadata: {
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      uid: `00000000-0000-4000-8000-${String(objects.size).padStart(12, '0')}`,
      resourceVersion: '1000',
      creationTimestamp: '2025-01-01T00:00:00Z',
    },
    ...(object.kind === 'Secret' ? { type: 'Opaque' } : {}),
    data: object.data,
  });
  const at = text.indexOf(marker) + marker.length;
  objects.set(path, {
    head: Buffer.from(text.slice(0, at)),
    tail: Buffer.from(text.slice(at + 4)),
    whole: Buffer.from(text),
    version: 1000,
  });
}

serveRequests({
  async listen(message) {
    const tls = message.tls as { cert: string; key: string } | undefined;
    const server = createServer(tls);
    server.on('connection', () => {
      connections++;
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const scheme = tls ? 'https' : 'http';
    return { url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}` };
  },
  seed(message) {
    const { namespace, count, bytes, unrelated, bump } = message as unknown as {
      namespace: string;
      count: number;
      bytes: number;
      unrelated: number;
      bump: boolean;
    };
    objects.clear();
    optedIn = namespace;
    for (const source of benchSources(count)) store(sourceObject(namespace, source, bytes));
    for (let i = 0; i < unrelated; i++) store(unrelatedObject(namespace, i));
    bumpVersions = bump;
    return { objects: objects.size };
  },
  stats() {
    return { connections, requests };
  },
});
