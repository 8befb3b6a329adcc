// Scenarios 3, 4 and 5c: the real kube-apiserver.

import { join } from 'node:path';
import { HASH } from '../../src/workload/annotations.js';
import { type ControlPlane, startControlPlane } from '../../tools/cluster/control-plane.js';
import { kubectlFor, strictKubectl } from '../../tools/cluster/kubectl.js';
import { addedLatencyScenario } from './added-latency.js';
import type { Webhook } from './children.js';
import { type ApiClient, connectApi, forEachBounded, webhookRegistration } from './cluster.js';
import {
  type Context,
  log,
  NAMESPACE,
  NAMESPACE_OFF,
  type Plan,
  STANDARD_BYTES,
  STANDARD_SOURCES,
  wants,
} from './context.js';
import { compareWithFloor, find, type LoadTarget, measureTargets } from './load.js';
import { connectionsTarget, type LoadRun, noFailuresTarget, type Scenario } from './report.js';
import { checkReview } from './review.js';
import { lifetimeNote, startConfighash, startFloor, wrongOutcomes } from './servers.js';
import { round } from './stats.js';
import {
  admissionReviewBody,
  benchSources,
  sourceObject,
  sourcePath,
  unrelatedObject,
} from './workload.js';

/** The real apiserver's side of scenarios 3, 4 and 5c: one control plane, one webhook, one floor. */
interface RealCluster {
  readonly controlPlane: ControlPlane;
  readonly api: ApiClient;
  readonly k: (args: readonly string[], input?: string) => Promise<string>;
  readonly sources: ReturnType<typeof benchSources>;
  readonly webhook: Webhook;
  readonly floorUrl: string;
  readonly apiHost: string;
  readonly targets: readonly LoadTarget[];
}

export async function clusterScenarios(context: Context, scenarios: Scenario[]): Promise<void> {
  const { plan, options } = context;
  log('starting the local control plane (etcd, kube-apiserver, kube-controller-manager)');
  const controlPlane = await startControlPlane({ log: (line) => log(`  ${line}`) });
  let api: ApiClient | undefined;
  try {
    api = await connectApi(controlPlane.kubeconfig);
    const real = await prepareRealCluster(context, controlPlane, api);
    if (wants(options, '3')) {
      log('scenario 3: confighash against the real kube-apiserver');
      const runs = await measureTargets(context, real.targets, plan.realConcurrencies);
      const result = realScenario(runs, plan);
      result.notes.push(await lifetimeNote(real.webhook, real.apiHost));
      scenarios.push(result);
    }
    if (wants(options, '4')) {
      log(`scenario 4: ${plan.applies} server-side applies with and without the webhook`);
      scenarios.push(await addedLatency(context, real));
    }
    if (wants(options, '5c')) {
      log('scenario 5c: unrelated ConfigMaps and Secrets in the namespace (real kube-apiserver)');
      scenarios.push(unrelatedScenario(await unrelatedRuns(context, real), plan));
    }
  } finally {
    api?.close();
    for (const webhook of context.webhooks.splice(0)) await webhook.stop();
    for (const helper of context.helpers.splice(0)) {
      if (helper !== context.loadgen) await helper.stop();
    }
    await controlPlane.stop();
  }
}

/** The namespaces and the three sources (with kubectl, as a user would), the webhook and floor (b). */
async function prepareRealCluster(
  context: Context,
  controlPlane: ControlPlane,
  api: ApiClient,
): Promise<RealCluster> {
  const k = strictKubectl(kubectlFor(controlPlane.kubeconfig));
  const sources = benchSources(STANDARD_SOURCES);
  const items = [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NAMESPACE, labels: { 'confighash.dev/enabled': 'true' } },
    },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE_OFF } },
    ...sources.map((s) => sourceObject(NAMESPACE, s, STANDARD_BYTES)),
    ...sources.map((s) => sourceObject(NAMESPACE_OFF, s, STANDARD_BYTES)),
  ];
  await k(
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
  );
  const webhook = await startConfighash(context, 'confighash-real', controlPlane.kubeconfig);
  const apiHost = `${api.server.hostname}:${api.server.port}`;
  const floorB = await startFloor(context, 'floor-b-real', {
    url: controlPlane.server,
    ...api.tls,
  });
  await floorB.helper.call('paths', { paths: sources.map((s) => sourcePath(NAMESPACE, s)) });
  const body = admissionReviewBody(NAMESPACE, sources);
  await checkReview(webhook.url, body, context.certs.ca, HASH);
  const targets: LoadTarget[] = [
    { id: 'floor-b-real', url: floorB.url, body, serverPid: floorB.helper.pid },
    {
      id: 'confighash-real',
      url: webhook.url,
      body,
      apiConnections: async () => (await webhook.connections())[apiHost] ?? 0,
      wrongOutcomes: wrongOutcomes(webhook, 'patched'),
      serverPid: webhook.pid,
    },
  ];
  return { controlPlane, api, k, sources, webhook, floorUrl: floorB.url, apiHost, targets };
}

/** Scenario 4: the webhook registered, then applies with and without it (and wave's, with --peers). */
async function addedLatency(context: Context, real: RealCluster): Promise<Scenario> {
  await real.k(
    ['apply', '--server-side', '-f', '-'],
    await webhookRegistration(real.webhook.url, context.certs.ca),
  );
  return addedLatencyScenario({
    api: real.api,
    kubectl: real.k,
    applies: context.plan.applies,
    sources: real.sources,
    sourceBytes: STANDARD_BYTES,
    certs: context.certs,
    confighash: real.webhook,
    namespace: NAMESPACE,
    namespaceOff: NAMESPACE_OFF,
    floorUrl: real.floorUrl,
    ...(context.peers
      ? {
          wave: {
            binary: context.peers.wave,
            dir: join(context.work, 'wave-webhook'),
            kubeconfig: real.controlPlane.kubeconfig,
          },
        }
      : {}),
    log,
  });
}

/** Scenario 5c's runs: the same reviews with more and more unrelated objects in the namespace. */
async function unrelatedRuns(context: Context, real: RealCluster): Promise<LoadRun[]> {
  const runs: LoadRun[] = [];
  let created = 0;
  for (const count of context.plan.unrelated) {
    if (count > created) {
      const started = Date.now();
      await forEachBounded(created, count, 8, (i) => {
        const object = unrelatedObject(NAMESPACE, i);
        const resource = object.kind === 'ConfigMap' ? 'configmaps' : 'secrets';
        return real.api.expect(
          [201],
          'POST',
          `/api/v1/namespaces/${NAMESPACE}/${resource}`,
          JSON.stringify(object),
        );
      });
      log(
        `  created ${count - created} objects in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      created = count;
    }
    runs.push(
      ...(await measureTargets(context, real.targets, context.plan.scaleConcurrencies, {
        rounds: 1,
        parameter: { name: 'unrelated objects', value: count },
      })),
    );
  }
  return runs;
}

export function realScenario(runs: readonly LoadRun[], plan: Plan): Scenario {
  const { ratios, connections, reviews, failures } = compareWithFloor(
    runs,
    'confighash-real',
    'floor-b-real',
  );
  const top = Math.max(...plan.realConcurrencies);
  const c32 = find(runs, 'confighash-real', top)!;
  const floor32 = find(runs, 'floor-b-real', top)!;
  return {
    id: '3',
    title: 'confighash, real kube-apiserver',
    runs: [...runs],
    ratios,
    targets: [
      connectionsTarget("counted in the webhook's agent", connections, reviews),
      noFailuresTarget(failures),
    ],
    notes: [
      'Load goes straight to the webhook (as the apiserver would send it); its three GETs go to kube-apiserver with the admin client certificate, over TLS.',
      `At c=${top}, confighash reaches ${(c32.rps / floor32.rps).toFixed(2)} × the throughput of floor (b) against the same apiserver (the issue sets no target here): the apiserver's own cost per GET dominates both.`,
    ],
  };
}

export function unrelatedScenario(runs: readonly LoadRun[], plan: Plan): Scenario {
  const c = Math.max(...plan.scaleConcurrencies);
  const first = plan.unrelated[0]!;
  const last = plan.unrelated[plan.unrelated.length - 1]!;
  const ratios: Record<string, number> = {};
  for (const count of plan.unrelated) {
    const subject = find(runs, 'confighash-real', c, count)!;
    const floor = find(runs, 'floor-b-real', c, count)!;
    ratios[`throughput.unrelated${count}.c${c}`] = round(subject.rps / floor.rps, 3);
    ratios[`vsEmpty.unrelated${count}.c${c}`] = round(
      subject.rps / find(runs, 'confighash-real', c, first)!.rps,
      3,
    );
  }
  const flat = ratios[`vsEmpty.unrelated${last}.c${c}`]!;
  const failures = runs
    .filter((r) => r.target === 'confighash-real')
    .reduce((n, r) => n + r.failures, 0);
  return {
    id: '5c',
    title: 'Scaling: unrelated ConfigMaps/Secrets in the namespace (real kube-apiserver)',
    runs: [...runs],
    ratios,
    targets: [
      {
        name: `flat in unrelated objects: throughput with ${last.toLocaleString('en-US')} ÷ with ${first} (c=${c})`,
        measured: `${flat.toFixed(2)} × (vs floor (b): ${ratios[`throughput.unrelated${first}.c${c}`]!.toFixed(2)} → ${ratios[`throughput.unrelated${last}.c${c}`]!.toFixed(2)})`,
        limit: '≥ 0.85 ×',
        holds: flat >= 0.85,
      },
      noFailuresTarget(failures),
    ],
    notes: [
      'Half ConfigMaps, half Secrets, created with 8 parallel POSTs over keep-alive. confighash only ever GETs by name: it never lists, and keeps no cache that could grow with them.',
    ],
  };
}
