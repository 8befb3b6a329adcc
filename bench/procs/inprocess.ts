// CPU per review of one build, measured inside its own process: the real
// compiled app through Fastify's inject (no TLS, no load generator sharing the
// cores), the real API adapter against the bench's stub in another process.
// Less exposed to other load than the end-to-end runs; run by bench/inprocess.ts.
//
//   node inprocess.js BUILD_SRC_DIR KUBECONFIG REVIEWS [PART]   (the kubeconfig names the stub)
//
// PART (default `confighash`) takes the review apart, to show where its CPU goes:
//   confighash      the app as served
//   snapshots       the app, the workload annotated confighash.dev/snapshot (docs/design.md §13),
//                   its snapshots found made (the steady state) in a store in memory: the snapshot
//                   path's own CPU, without the GET per snapshot the API adapter sends
//   no-lookups      the app, its ConfigSource answering from memory (one real answer per source)
//   lookups         a bare Fastify route making the review's lookups through confighash's adapter
//   floor-b         the same route with floor (b)'s bare GETs (bench/procs/floor.ts)
//   floor-a         the same route with no GETs

import http from 'node:http';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { PARTS, type Part } from '../lib/inprocess-parts.js';
import { admissionReviewBody, benchSources, sourcePath } from '../lib/workload.js';
import { bareGet } from './bare-get.js';

interface Connection {
  readonly server: URL;
  close(): void;
}
interface LookupSource {
  get(kind: string, namespace: string, name: string, signal: AbortSignal): Promise<unknown>;
}

const [root, kubeconfig, reviewsArg, partArg = 'confighash'] = process.argv.slice(2) as [
  string,
  string,
  string,
  string?,
];
if (!(PARTS as readonly string[]).includes(partArg)) {
  throw new Error(`unknown part ${partArg}: one of ${PARTS.join(', ')}`);
}
const part = partArg as Part;
const load = (path: string) => import(pathToFileURL(`${root}/${path}`).href);
/** `path` in this layout of src/; `older` where a --baseline build from before it kept it. */
const loadMoved = (path: string, older: string) =>
  load(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ERR_MODULE_NOT_FOUND') return load(older);
    throw error;
  });
const { buildApp } = await load('server/app.js');
const { createMutator } = await loadMoved('admission/mutate.js', 'mutate.js');
const { createApiConfigSource } = await load('kube/api-config-source.js');
const { createLogger } = await loadMoved('runtime/logger.js', 'server/logger.js');
const { createAdmissionMetrics } = await loadMoved(
  'server/admission-metrics.js',
  'server/metrics.js',
);
const kube = await load('kube/connection.js');

process.env.KUBECONFIG = kubeconfig;
const connection: Connection = kube.loadCredentials
  ? kube.connectToCluster(await kube.loadCredentials())
  : // A build from before issue 14: connectToCluster took client-node's KubeConfig.
    await (async () => {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(kubeconfig);
      return kube.connectToCluster(kubeConfig);
    })();
const NAMESPACE = 'bench';
const sources = benchSources(3);
const configSource: LookupSource = createApiConfigSource(connection);
const payload =
  part === 'snapshots'
    ? admissionReviewBody(NAMESPACE, sources, { 'confighash.dev/snapshot': 'true' })
    : admissionReviewBody(NAMESPACE, sources);

const app = await partApp(part);
await app.ready();

async function partApp(which: Part): Promise<FastifyInstance> {
  switch (which) {
    case 'confighash':
      return confighashApp(configSource);
    case 'snapshots':
      return confighashApp(configSource, await snapshotsInMemory());
    case 'no-lookups':
      return confighashApp(await rememberedSource());
    case 'lookups':
      return routeApp(() => {
        const signal = new AbortController().signal;
        return Promise.all(sources.map((s) => configSource.get(s.kind, NAMESPACE, s.name, signal)));
      });
    case 'floor-b': {
      // floor (b)'s GET over a bare keep-alive agent (the stub is plain HTTP).
      const agent = new http.Agent({ keepAlive: true });
      const get = bareGet(agent, connection.server, { authorization: 'Bearer bench-token' });
      return routeApp(() => Promise.all(sources.map((s) => get(sourcePath(NAMESPACE, s)))));
    }
    case 'floor-a':
      return routeApp(async () => {});
  }
}

function confighashApp(source: LookupSource, snapshots?: unknown): FastifyInstance {
  return buildApp({
    mutator: createMutator({
      configSource: source,
      ...(snapshots ? { snapshots } : {}),
      hashKey: Buffer.alloc(32, 7),
      // The namespace check as a synced watch that says opted in: no GET (src/admission/namespace-check.ts).
      namespaces: { check: async () => ({ status: 'opted-in', workloads: 'all' }) },
    }),
    metrics: createAdmissionMetrics(),
    logger: createLogger('info', pino.destination({ dest: '/dev/null', sync: true })),
    readiness: { isReady: () => true },
  });
}

/** A SnapshotStore (src/snapshot/ports.ts) in memory: what one review creates, every later one finds. */
async function snapshotsInMemory(): Promise<unknown> {
  const { contentOfConfigMap } = await load('hash/index.js');
  const made = new Map<string, Record<string, unknown>>();
  return {
    async read(_namespace: string, name: string) {
      const object = made.get(name);
      if (!object) return { status: 'absent' };
      return {
        status: 'found',
        object,
        content: contentOfConfigMap(object),
        resourceVersion: '1',
        owners: [],
      };
    },
    async create(body: { metadata: { name: string } }) {
      made.set(body.metadata.name, body);
      return { status: 'done' };
    },
    async addOwner() {
      return { status: 'done' };
    },
  };
}

/** One real answer per source, then always that one. */
async function rememberedSource(): Promise<LookupSource> {
  const signal = new AbortController().signal;
  const answers = new Map<string, unknown>();
  for (const s of sources)
    answers.set(s.name, await configSource.get(s.kind, NAMESPACE, s.name, signal));
  return { get: async (_kind, _namespace, name) => answers.get(name) };
}

/** floor.ts's route: parse the review, do `lookups`, answer `allowed` (with a patchType, as checked below). */
function routeApp(lookups: () => Promise<unknown>): FastifyInstance {
  const route = Fastify({ bodyLimit: 7 * 1024 * 1024 });
  route.post('/mutate', async (request) => {
    const uid = (request.body as { request: { uid: string } }).request.uid;
    await lookups();
    const response = { uid, allowed: true, patchType: 'JSONPatch' };
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  });
  return route as unknown as FastifyInstance;
}

async function review(): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: '/mutate?timeout=5s',
    headers: { 'content-type': 'application/json' },
    payload,
  });
  if (!response.body.includes('"patchType"')) {
    throw new Error(`not the hash patch: ${response.body.slice(0, 300)}`);
  }
}

/** `count` reviews, 8 in flight (like scenario 2 at c=8). */
async function run(count: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) await review();
    }),
  );
}

await run(3_000);
const reviews = Number(reviewsArg);
const before = process.cpuUsage();
await run(reviews);
const used = process.cpuUsage(before);
process.stdout.write(
  `${JSON.stringify({ cpuUsPerReview: (used.user + used.system) / reviews })}\n`,
);
connection.close();
await app.close();
