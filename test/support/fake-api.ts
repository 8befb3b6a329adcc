// A real HTTP server that speaks the few Kubernetes API paths confighash reads
// (GET a ConfigMap or Secret) with the API's Status errors. Faults that a real
// apiserver cannot be made to produce on demand (403, 500, never answering) are
// injected per object. It counts connections, to prove keep-alive reuse.

import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | 'forbidden'
  | 'server-error'
  | 'hang'
  | 'not-json'
  | 'array'
  | 'data-not-object';

export interface StoredObject {
  kind: 'ConfigMap' | 'Secret';
  namespace: string;
  name: string;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface FakeApi {
  readonly url: string;
  readonly requests: string[];
  /** The Authorization header of each request, in order. */
  readonly authorizations: (string | undefined)[];
  connections: number;
  /** GETs being answered now, and the most at once (with `delayMs`, to count concurrency). */
  inFlight: number;
  maxInFlight: number;
  /** Every answer waits this long first: slowness a real apiserver cannot be made to show. */
  delayMs: number;
  /** A namespace and its `confighash.dev/enabled` label, for serve's namespace check. */
  namespace(name: string, label?: string): void;
  put(object: StoredObject): void;
  remove(kind: StoredObject['kind'], namespace: string, name: string): void;
  fault(
    kind: StoredObject['kind'],
    namespace: string,
    name: string,
    fault: Fault | undefined,
  ): void;
  close(): Promise<void>;
}

const RESOURCES = { configmaps: 'ConfigMap', secrets: 'Secret' } as const;

type Stored = StoredObject & { resourceVersion: number; uid: string };

/** What the server answers from; `put`, `remove` and `fault` change it. */
interface Store {
  readonly objects: Map<string, Stored>;
  readonly faults: Map<string, Fault>;
  /** Requests held open by the 'hang' fault (and namespace watches), to destroy on close. */
  readonly hanging: Set<http.ServerResponse>;
  /** Namespaces by name, with their labels. */
  readonly namespaces: Map<string, Record<string, string>>;
}

/** A GET of one ConfigMap or Secret; `name` as it stands in the path, `key` decoded. */
interface ObjectRoute {
  readonly kind: StoredObject['kind'];
  readonly resource: keyof typeof RESOURCES;
  readonly name: string;
  readonly key: string;
}

const id = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

export async function startFakeApi(): Promise<FakeApi> {
  const store: Store = {
    objects: new Map(),
    faults: new Map(),
    hanging: new Set(),
    namespaces: new Map(),
  };
  let version = 1;
  const server = http.createServer((request, response) => {
    api.requests.push(`${request.method} ${request.url}`);
    api.authorizations.push(request.headers.authorization);
    api.inFlight++;
    api.maxInFlight = Math.max(api.maxInFlight, api.inFlight);
    response.on('close', () => api.inFlight--);
    if (api.delayMs > 0) setTimeout(() => answer(store, request, response), api.delayMs);
    else answer(store, request, response);
  });
  server.on('connection', () => {
    api.connections++;
  });
  const port = await listen(server);
  const api: FakeApi = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    authorizations: [],
    connections: 0,
    inFlight: 0,
    maxInFlight: 0,
    delayMs: 0,
    namespace(name, label) {
      store.namespaces.set(name, label === undefined ? {} : { 'confighash.dev/enabled': label });
    },
    put(object) {
      const key = id(object.kind, object.namespace, object.name);
      const uid = store.objects.get(key)?.uid ?? `uid-${key}`;
      store.objects.set(key, { ...object, uid, resourceVersion: version++ });
    },
    remove(kind, namespace, name) {
      store.objects.delete(id(kind, namespace, name));
    },
    fault(kind, namespace, name, fault) {
      if (fault) store.faults.set(id(kind, namespace, name), fault);
      else store.faults.delete(id(kind, namespace, name));
    },
    close: () => close(server, store.hanging),
  };
  return api;
}

/** Listens on a free port of 127.0.0.1, keeping idle connections as long as the tests need. */
async function listen(server: http.Server): Promise<number> {
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function close(server: http.Server, hanging: Set<http.ServerResponse>): Promise<void> {
  for (const response of hanging) response.destroy();
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

function answer(store: Store, request: http.IncomingMessage, response: http.ServerResponse) {
  if (request.method === 'GET' && request.url?.startsWith('/api/v1/namespaces')) {
    if (answerNamespaces(store, request.url, response)) return;
  }
  const route = request.method === 'GET' ? routeOf(request.url ?? '') : undefined;
  if (!route) return status(response, 404, 'NotFound', 'no route');
  const fault = store.faults.get(route.key);
  if (fault === 'hang') {
    store.hanging.add(response);
    return;
  }
  if (fault) return answerFault(response, fault, route);
  const object = store.objects.get(route.key);
  if (!object) {
    return status(response, 404, 'NotFound', `${route.resource} "${route.name}" not found`);
  }
  json(response, 200, objectBody(object));
}

/**
 * The namespace check of `confighash serve` (src/kube/namespace-api.ts): the list
 * of labelled namespaces, a watch held open and silent, a GET of one. False
 * when the URL is a ConfigMap or Secret path instead.
 */
function answerNamespaces(store: Store, url: string, response: http.ServerResponse): boolean {
  const metadata = (name: string) => ({
    kind: 'PartialObjectMetadata',
    metadata: { name, labels: store.namespaces.get(name) },
  });
  if (url.startsWith('/api/v1/namespaces?')) {
    if (url.includes('watch=1')) {
      store.hanging.add(response);
      response.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      return true;
    }
    const items = [...store.namespaces]
      .filter(([, labels]) => ['true', 'follow'].includes(labels['confighash.dev/enabled'] ?? ''))
      .map(([name]) => metadata(name));
    json(response, 200, {
      kind: 'PartialObjectMetadataList',
      metadata: { resourceVersion: '1' },
      items,
    });
    return true;
  }
  const one = /^\/api\/v1\/namespaces\/([^/?]+)$/.exec(url);
  if (!one) return false;
  const name = decodeURIComponent(one[1]!);
  if (store.namespaces.has(name)) json(response, 200, metadata(name));
  else status(response, 404, 'NotFound', `namespaces "${name}" not found`);
  return true;
}

function routeOf(url: string): ObjectRoute | undefined {
  const match = /^\/api\/v1\/namespaces\/([^/]+)\/(configmaps|secrets)\/([^/?]+)$/.exec(url);
  if (!match) return undefined;
  const [, namespace, resource, name] = match as unknown as [
    string,
    string,
    keyof typeof RESOURCES,
    string,
  ];
  const kind = RESOURCES[resource];
  return {
    kind,
    resource,
    name,
    key: id(kind, decodeURIComponent(namespace), decodeURIComponent(name)),
  };
}

/** What each fault but 'hang' answers in place of the object. */
function answerFault(
  response: http.ServerResponse,
  fault: Exclude<Fault, 'hang'>,
  { kind, resource, name }: ObjectRoute,
) {
  switch (fault) {
    case 'forbidden':
      return status(response, 403, 'Forbidden', `${resource} "${name}" is forbidden`);
    case 'server-error':
      return status(response, 500, 'InternalError', 'etcd is sad');
    case 'not-json':
      response.writeHead(200, { 'content-type': 'application/json' }).end('{not json');
      return;
    case 'array':
      return json(response, 200, []);
    case 'data-not-object':
      return json(response, 200, {
        kind,
        metadata: { name, uid: 'u', resourceVersion: '1' },
        data: 'x',
      });
  }
}

function objectBody(object: Stored) {
  return {
    apiVersion: 'v1',
    kind: object.kind,
    metadata: {
      name: object.name,
      namespace: object.namespace,
      uid: object.uid,
      resourceVersion: String(object.resourceVersion),
    },
    ...(object.data ? { data: object.data } : {}),
    ...(object.binaryData ? { binaryData: object.binaryData } : {}),
  };
}

function json(response: http.ServerResponse, code: number, body: unknown) {
  response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function status(response: http.ServerResponse, code: number, reason: string, message: string) {
  json(response, code, {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message,
    reason,
    code,
  });
}

/** A kubeconfig file text pointing at `server`, as a user would have. */
export function kubeconfigFor(server: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server } }],
    users: [{ name: 'tester', user: { token: 'fake-token' } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'tester' } }],
    'current-context': 'fake',
  });
}
