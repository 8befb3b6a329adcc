// Builds the real app (real API adapter, real mutator) against a fake API
// server, with logs captured so tests can read them.

import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createMutator } from '../../src/admission/mutate.js';
import type { Mutator } from '../../src/admission/result.js';
import { createApiConfigSource } from '../../src/kube/api-config-source.js';
import { type ApiConnection, connectToCluster } from '../../src/kube/connection.js';
import { createLogger } from '../../src/runtime/logger.js';
import {
  type AdmissionMetrics,
  createAdmissionMetrics,
} from '../../src/server/admission-metrics.js';
import { buildApp } from '../../src/server/app.js';
import { credentialsFromText } from './credentials.js';
import { type FakeApi, kubeconfigFor, startFakeApi } from './fake-api.js';
import { everyNamespaceOptedIn } from './namespaces.js';

export const HASH_KEY = Buffer.alloc(32, 42);

export interface TestApp {
  app: FastifyInstance;
  api: FakeApi;
  connection: ApiConnection;
  logs: string[];
  ready: { value: boolean };
  metrics: AdmissionMetrics;
  close(): Promise<void>;
}

export async function startTestApp(
  options: {
    mutator?: Mutator;
    tls?: { cert: string | Buffer; key: string | Buffer };
    reviewTimeoutMs?: number;
  } = {},
): Promise<TestApp> {
  const api = await startFakeApi();
  const connection = connectToCluster(await credentialsFromText(kubeconfigFor(api.url)));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      callback();
    },
  });
  const ready = { value: true };
  const metrics = createAdmissionMetrics({ collectProcessMetrics: false });
  const app = buildApp({
    mutator:
      options.mutator ??
      createMutator({
        configSource: createApiConfigSource(connection),
        hashKey: HASH_KEY,
        namespaces: everyNamespaceOptedIn,
      }),
    metrics,
    logger: createLogger('debug', sink),
    readiness: { isReady: () => ready.value },
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.reviewTimeoutMs ? { reviewTimeoutMs: options.reviewTimeoutMs } : {}),
  });
  await app.ready();
  return {
    app,
    api,
    connection,
    logs,
    ready,
    metrics,
    async close() {
      await app.close();
      connection.close();
      await api.close();
    },
  };
}

/** The standard sources of THREE_SOURCES, in the test namespace, opted in (serve's namespace check). */
export function putStandardSources(api: FakeApi, namespace: string): void {
  api.namespace(namespace, 'true');
  api.put({ kind: 'ConfigMap', namespace, name: 'app-config', data: { 'app.yaml': 'port: 8080' } });
  api.put({
    kind: 'Secret',
    namespace,
    name: 'db',
    data: { password: Buffer.from('hunter2-secret-value').toString('base64') },
  });
  api.put({ kind: 'ConfigMap', namespace, name: 'flags', data: { mode: 'fast', unrelated: 'x' } });
}
