// The lookup byte budget (docs/design.md §4, "Bounds"): reviews answered by the real app,
// reading through the real adapter over HTTP/2 from a real TLS server that serves large
// ConfigMaps — with a content-length, and without one (counted as the chunks arrive, as
// kube-apiserver's large answers are). The budget is the evaluator's Slots, measured by
// a subclass that keeps its high-water mark.

import { once } from 'node:events';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import {
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { MAX_ANSWER_BYTES } from '../../src/evaluate/index.js';
import { createApiConfigSource } from '../../src/kube/api-config-source.js';
import { type ApiConnection, connectToCluster } from '../../src/kube/connection.js';
import { Slots } from '../../src/runtime/index.js';
import { createLogger } from '../../src/runtime/logger.js';
import { createAdmissionMetrics } from '../../src/server/admission-metrics.js';
import { buildApp } from '../../src/server/app.js';
import { HASH, SOURCES } from '../../src/workload/index.js';
import { HASH_KEY } from '../support/app.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import { admissionReview, NAMESPACE, workload } from '../support/workloads.js';

/** About 900 KiB of data: under the API's 1 MiB, and 36 of them fill the budget. */
const LARGE = 900 * 1024;
const SOURCES_NAMED = 256;
const OVER_BUDGET = 'confighash_lookups_total{kind="ConfigMap",result="over-budget"}';

/** The budget's Slots, keeping the most ever taken at once. */
class MeasuredSlots extends Slots {
  peak = 0;

  override tryTake(count = 1): boolean {
    const taken = super.tryTake(count);
    this.peak = Math.max(this.peak, this.inUse);
    return taken;
  }
}

interface ConfigMapServer {
  readonly url: URL;
  /** Whether answers carry a content-length. */
  declareLength: boolean;
  close(): void;
}

/** Serves `large-N` with ~900 KiB of data and `small-N` with a few bytes, over h2 and TLS. */
async function configMapServer(tls: { cert: string; key: string }): Promise<ConfigMapServer> {
  const blob = Buffer.from(`${'x'.repeat(LARGE)}"}}`);
  // Node's server refuses streams (ENHANCE_YOUR_CALM) once a session holds 10 MB of them by
  // default; kube-apiserver does not, and neither may this one.
  const server = http2.createSecureServer({ ...tls, maxSessionMemory: 1024 });
  const sessions = new Set<http2.ServerHttp2Session>();
  const state = { declareLength: true };
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => {});
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const name = String(headers[':path']).split('/').pop() ?? '';
    const head = Buffer.from(
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","namespace":"${NAMESPACE}","uid":"uid-${name}","resourceVersion":"1"},"data":{"value":"`,
    );
    const tail = name.startsWith('large-') ? blob : Buffer.from(`${name}"}}`);
    stream.respond({
      ':status': 200,
      'content-type': 'application/json',
      ...(state.declareLength ? { 'content-length': head.length + tail.length } : {}),
    });
    stream.write(head);
    stream.end(tail);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`),
    get declareLength() {
      return state.declareLength;
    },
    set declareLength(value) {
      state.declareLength = value;
    },
    close() {
      for (const session of sessions) session.destroy();
      server.close();
    },
  };
}

/** A Deployment whose container reads `prefix-0` … `prefix-255` by envFrom. */
function reading(prefix: string): Record<string, unknown> {
  return {
    containers: [
      {
        name: 'app',
        image: 'app:1',
        envFrom: Array.from({ length: SOURCES_NAMED }, (_, i) => ({
          configMapRef: { name: `${prefix}-${i}` },
        })),
      },
    ],
  };
}

let server: ConfigMapServer;
let connection: ApiConnection;
let app: FastifyInstance;
const budget = new MeasuredSlots(MAX_ANSWER_BYTES);

beforeAll(async () => {
  const authority = await generateCertificateAuthority('lookup budget test CA', 1);
  const serving = await generateServingCertificate(authority, ['127.0.0.1'], 1);
  server = await configMapServer({ cert: serving.cert, key: serving.key });
  const access = {
    server: server.url,
    tls: { ca: Buffer.from(authority.cert), rejectUnauthorized: true },
    headers: { authorization: 'Bearer test' },
  };
  connection = connectToCluster({ current: () => access, generation: 0, renew: async () => {} });
  app = buildApp({
    mutator: createMutator({
      configSource: createApiConfigSource(connection),
      hashKey: HASH_KEY,
      namespaces: everyNamespaceOptedIn,
      answerBytes: budget,
    }),
    metrics: createAdmissionMetrics({ collectProcessMetrics: false }),
    logger: createLogger('error', new Writable({ write: (_chunk, _encoding, done) => done() })),
    readiness: { isReady: () => true },
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  connection?.close();
  server?.close();
});

/** An UPDATE of a workload reading `prefix-*` whose template carries a previous hash. */
async function update(prefix: string) {
  const object = workload({
    podSpec: reading(prefix),
    templateAnnotations: { [HASH]: 'previous', [SOURCES]: 'previous' },
  });
  const response = await app.inject({
    method: 'POST',
    url: '/mutate',
    payload: admissionReview({ operation: 'UPDATE', object, oldObject: object }),
  });
  return (response.json() as { response: { patch?: string; warnings?: string[] } }).response;
}

async function overBudgetCount(): Promise<number> {
  const text = (await app.inject('/metrics')).body;
  const line = text.split('\n').find((entry) => entry.startsWith(`${OVER_BUDGET} `));
  return line === undefined ? 0 : Number(line.slice(OVER_BUDGET.length + 1));
}

describe(`lookup answers draw from a ${MAX_ANSWER_BYTES / 2 ** 20} MiB byte budget`, () => {
  it.each([
    ['with a content-length', true],
    ['without one (counted as the chunks arrive)', false],
  ])(
    `a review naming ${SOURCES_NAMED} ConfigMaps of 900 KiB, answered %s: held within the budget, the previous hash kept with a warning naming it, counted`,
    async (_name, declareLength) => {
      server.declareLength = declareLength;
      budget.peak = 0;
      const countedBefore = await overBudgetCount();

      const answer = await update(`large-${String(declareLength)}`);

      expect(budget.peak).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
      expect(budget.peak).toBeGreaterThan(MAX_ANSWER_BYTES - 2 * LARGE);
      expect(budget.inUse).toBe(0);
      expect(answer.patch).toBeUndefined();
      expect(answer.warnings?.[0]).toMatch(
        /^confighash: could not read ConfigMap large-\S+ \(lookup byte budget full\); kept the previous hash$/,
      );
      expect(await overBudgetCount()).toBeGreaterThan(countedBefore);
    },
  );

  it(`a review naming ${SOURCES_NAMED} small ConfigMaps is hashed, and gives every byte back`, async () => {
    server.declareLength = false;

    const answer = await update('small');

    expect(answer.warnings ?? []).toEqual([]);
    expect(Buffer.from(answer.patch ?? '', 'base64').toString()).toContain(HASH.replace('/', '~1'));
    expect(budget.inUse).toBe(0);
  });
});
