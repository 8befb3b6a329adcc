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

export async function startFakeApi(): Promise<FakeApi> {
  const objects = new Map<string, StoredObject & { resourceVersion: number; uid: string }>();
  const faults = new Map<string, Fault>();
  const hanging = new Set<http.ServerResponse>();
  let version = 1;
  const id = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

  const server = http.createServer((request, response) => {
    api.requests.push(`${request.method} ${request.url}`);
    api.authorizations.push(request.headers.authorization);
    const match = /^\/api\/v1\/namespaces\/([^/]+)\/(configmaps|secrets)\/([^/?]+)$/.exec(
      request.url ?? '',
    );
    if (request.method !== 'GET' || !match) return status(response, 404, 'NotFound', 'no route');
    const [, namespace, resource, name] = match as unknown as [
      string,
      string,
      'configmaps' | 'secrets',
      string,
    ];
    const kind = RESOURCES[resource];
    const key = id(kind, decodeURIComponent(namespace), decodeURIComponent(name));
    switch (faults.get(key)) {
      case 'forbidden':
        return status(response, 403, 'Forbidden', `${resource} "${name}" is forbidden`);
      case 'server-error':
        return status(response, 500, 'InternalError', 'etcd is sad');
      case 'hang':
        hanging.add(response);
        return;
      case 'not-json':
        response.writeHead(200, { 'content-type': 'application/json' }).end('{not json');
        return;
      case 'array':
        response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
        return;
      case 'data-not-object':
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ kind, metadata: { name, uid: 'u', resourceVersion: '1' }, data: 'x' }),
          );
        return;
    }
    const object = objects.get(key);
    if (!object) return status(response, 404, 'NotFound', `${resource} "${name}" not found`);
    const body = {
      apiVersion: 'v1',
      kind,
      metadata: {
        name: object.name,
        namespace: object.namespace,
        uid: object.uid,
        resourceVersion: String(object.resourceVersion),
      },
      ...(object.data ? { data: object.data } : {}),
      ...(object.binaryData ? { binaryData: object.binaryData } : {}),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  server.on('connection', () => {
    api.connections++;
  });
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  const api: FakeApi = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    authorizations: [],
    connections: 0,
    put(object) {
      const key = id(object.kind, object.namespace, object.name);
      const uid = objects.get(key)?.uid ?? `uid-${key}`;
      objects.set(key, { ...object, uid, resourceVersion: version++ });
    },
    remove(kind, namespace, name) {
      objects.delete(id(kind, namespace, name));
    },
    fault(kind, namespace, name, fault) {
      if (fault) faults.set(id(kind, namespace, name), fault);
      else faults.delete(id(kind, namespace, name));
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return api;
}

function status(response: http.ServerResponse, code: number, reason: string, message: string) {
  const body = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code };
  response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
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
