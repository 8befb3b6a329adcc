// CPU per review of one build, measured inside its own process: the real
// compiled app through Fastify's inject (no TLS, no load generator sharing the
// cores), the real API adapter against the bench's stub in another process.
// Less exposed to other load than the end-to-end runs; run by bench/inprocess.ts.
//
//   node inprocess.js BUILD_SRC_DIR KUBECONFIG REVIEWS   (the kubeconfig names the stub)

import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { admissionReviewBody, benchSources } from '../lib/workload.js';

interface Connection {
  close(): void;
}

const [root, kubeconfig, reviewsArg] = process.argv.slice(2) as [string, string, string];
const load = (path: string) => import(pathToFileURL(`${root}/${path}`).href);
const { buildApp } = await load('server/app.js');
const { createMutator } = await load('mutate.js');
const { createApiConfigSource } = await load('kube/api-config-source.js');
const { createLogger } = await load('server/logger.js');
const { createAdmissionMetrics } = await load('server/metrics.js');
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
const app = buildApp({
  mutator: createMutator({
    configSource: createApiConfigSource(connection),
    hashKey: Buffer.alloc(32, 7),
  }),
  metrics: createAdmissionMetrics(),
  logger: createLogger('info', pino.destination({ dest: '/dev/null', sync: true })),
  readiness: { isReady: () => true },
});
await app.ready();
const payload = admissionReviewBody('bench', benchSources(3));

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
