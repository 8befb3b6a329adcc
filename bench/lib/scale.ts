// The `scale` scenario (docs/design.md §11): follow mode on a cluster that
// grows to 1,000 follow namespaces, 10,000 Deployments and 50,000 ConfigMaps and
// Secrets, and Reloader on the same objects, one tool after the other at each
// size. Only with `--only=scale`: it takes most of half an hour.
//
// The local control plane (objects only, no node) with the confighash webhook
// registered, so that every write of a workload — a touch, a Reloader rollout, a
// create — is hashed, as in a real install.

import {
  type ControlPlane,
  LOOPBACK,
  startControlPlane,
} from '../../tools/cluster/control-plane.js';
import { kubectlFor, strictKubectl } from '../../tools/cluster/kubectl.js';
import { poll, sleep } from '../../tools/lib/poll.js';
import { residentMb, type Webhook } from './children.js';
import { type ApiClient, connectApi, forEachBounded, webhookRegistration } from './cluster.js';
import { followContainer } from './container.js';
import { type Context, log } from './context.js';
import { buildReloader } from './peers.js';
import type { Scenario } from './report.js';
import { deltaOf, drainSeconds } from './scale-metrics.js';
import {
  collectionPath,
  FANOUT_NAMESPACE,
  FANOUT_SOURCES,
  fanoutDeployments,
  namespaceDeployments,
  namespaceName,
  namespaceObject,
  namespaceSources,
  type Postable,
  sourceOf,
  sourcesOf,
  WORKLOADS_PER_NAMESPACE,
  workloadName,
} from './scale-objects.js';
import {
  apiRequests,
  apiWatches,
  type Change,
  changeLatencies,
  counted,
  fanOut,
  isWork,
  oneChange,
  type PhaseSite,
  resyncRequests,
  rssMb,
  waitSettled,
} from './scale-phases.js';
import {
  type ConfighashFigures,
  type ReloaderFigures,
  type ScaleRow,
  type StartFigures,
  scaleScenarioOf,
} from './scale-report.js';
import {
  type FollowerSettings,
  followerHasFlag,
  startFollower,
  startReloader,
  type ToolProcess,
  type ToolSite,
} from './scale-tools.js';
import { startConfighash } from './servers.js';

export interface ScalePlan {
  /** Follow namespaces at each size, growing: objects are only ever added. */
  readonly sizes: readonly number[];
  /** Workloads reading the one fan-out ConfigMap. */
  readonly fanout: number;
  readonly latencyChanges: number;
  readonly follower: FollowerSettings;
  /** Reloader's idle window. */
  readonly idleS: number;
}

/** The follower's defaults (docs/design.md §6), against which the fan-out is extrapolated. */
export const FOLLOW_DEFAULTS = { rate: 5, burst: 20, debounceS: 10 } as const;

const SETTLE_TIMEOUT_MS = 20 * 60_000;
const CHANGE_TIMEOUT_MS = 120_000;

interface ScaleRun {
  readonly plan: ScalePlan;
  readonly site: PhaseSite;
  readonly tools: ToolSite;
  readonly reloader: string | undefined;
}

export async function scaleScenario(context: Context, sizes: readonly number[]): Promise<Scenario> {
  const started = Date.now();
  const reloader = await reloaderBinary();
  const plan = await scalePlan(sizes);
  const controlPlane = await startObjectsControlPlane();
  let api: ApiClient | undefined;
  try {
    api = await connectApi(controlPlane.kubeconfig);
    const webhook = await registeredWebhook(context, controlPlane.kubeconfig);
    const run = scaleRun(context, { plan, api, kubeconfig: controlPlane.kubeconfig, reloader });
    const rows = await measureSizes(run, webhook);
    const fresh = await freshServeReplica(context, run, controlPlane.kubeconfig);
    return scaleScenarioOf({
      rows,
      plan,
      fresh,
      reloaderBuilt: reloader !== undefined,
      defaults: FOLLOW_DEFAULTS,
      wallS: Math.round((Date.now() - started) / 1000),
    });
  } finally {
    api?.close();
    for (const webhook of context.webhooks.splice(0)) await webhook.stop();
    await controlPlane.stop();
  }
}

/** --follow-evaluate-rate=100 only where this build's follower takes it (it is being rewritten). */
async function scalePlan(sizes: readonly number[]): Promise<ScalePlan> {
  const evaluateRate = (await followerHasFlag('follow-evaluate-rate')) ? 100 : undefined;
  return {
    sizes,
    fanout: 200,
    latencyChanges: 8,
    follower: {
      resyncS: 60,
      runtime: await followContainer(),
      ...(evaluateRate === undefined ? {} : { evaluateRate }),
    },
    idleS: 30,
  };
}

async function startObjectsControlPlane(): Promise<ControlPlane> {
  log('scale: starting the local control plane (objects only)');
  return startControlPlane({
    log: (line) => log(`  ${line}`),
    // The controllers write a ReplicaSet and a status per Deployment: at the client's
    // default 20 requests/s, 10,000 Deployments would take the controller-manager 17 min.
    site: {
      ...LOOPBACK,
      controllerManagerFlags: [
        ...LOOPBACK.controllerManagerFlags,
        '--kube-api-qps=200',
        '--kube-api-burst=400',
      ],
    },
  });
}

/** `confighash serve`, registered for the cluster's writes: every workload write is hashed. */
async function registeredWebhook(context: Context, kubeconfig: string): Promise<Webhook> {
  const webhook = await startConfighash(context, 'confighash-scale', kubeconfig);
  await strictKubectl(kubectlFor(kubeconfig))(
    ['apply', '--server-side', '-f', '-'],
    await webhookRegistration(webhook.url, context.certs.ca),
  );
  return webhook;
}

function scaleRun(
  context: Context,
  cluster: {
    readonly plan: ScalePlan;
    readonly api: ApiClient;
    readonly kubeconfig: string;
    readonly reloader: string | undefined;
  },
): ScaleRun {
  let round = 0;
  return {
    plan: cluster.plan,
    site: { api: cluster.api, log, nextRound: () => ++round },
    tools: {
      work: context.work,
      kubeconfig: cluster.kubeconfig,
      hashKeyFile: context.hashKeyFile,
    },
    reloader: cluster.reloader,
  };
}

/** Each size in turn on the one growing cluster, after the fan-out workloads. */
async function measureSizes(run: ScaleRun, webhook: Webhook): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  let created = 0;
  await createFanout(run);
  for (const size of run.plan.sizes) {
    rows.push(await measureSize(run, webhook, created, size));
    created = size;
    // The figures so far, in the log too: a later size that fails loses none of them.
    log(`scale: ${size} namespaces: ${JSON.stringify(rows[rows.length - 1])}`);
  }
  return rows;
}

/** Grows the cluster from `created` to `size` namespaces, then measures each tool on it. */
async function measureSize(
  run: ScaleRun,
  webhook: Webhook,
  created: number,
  size: number,
): Promise<ScaleRow> {
  const sizeStarted = Date.now();
  log(`scale: ${size} follow namespaces: creating ${size - created} more`);
  const createS = await createNamespaces(run, created, size);
  await waitClusterSettled(run, size * WORKLOADS_PER_NAMESPACE + run.plan.fanout);
  const confighash = await measureConfighash(run, size);
  const reloaderFigures = run.reloader ? await measureReloader(run, size, run.reloader) : undefined;
  return {
    namespaces: size,
    workloads: size * WORKLOADS_PER_NAMESPACE,
    sources: size * namespaceSources().length,
    createS,
    confighash,
    ...(reloaderFigures ? { reloader: reloaderFigures } : {}),
    serveMb: round1(await residentMb(webhook.pid)),
    wallS: Math.round((Date.now() - sizeStarted) / 1000),
  };
}

async function reloaderBinary(): Promise<string | undefined> {
  if (!process.env.RELOADER_SRC) {
    log('scale: RELOADER_SRC is not set: Reloader is left out (see bench/build-peers.sh)');
    return undefined;
  }
  log('scale: building Reloader (bench/build-peers.sh)');
  return buildReloader();
}

// --- objects ------------------------------------------------------------------------------

/** POSTs `count` objects, `parallel` at a time, over the bench's keep-alive client. */
async function createAll(
  api: ApiClient,
  count: number,
  parallel: number,
  objectAt: (i: number) => Postable,
): Promise<void> {
  await forEachBounded(0, count, parallel, (i) => {
    const object = objectAt(i);
    return api.expect([201], 'POST', collectionPath(object), JSON.stringify(object));
  });
}

/** Namespaces [from, to): the namespaces, their sources, then their Deployments (through the webhook). */
async function createNamespaces(run: ScaleRun, from: number, to: number): Promise<number> {
  const started = Date.now();
  const { api } = run.site;
  const count = to - from;
  const sources = namespaceSources();
  await createAll(api, count, 16, (i) => namespaceObject(namespaceName(from + i)));
  await createAll(api, count * sources.length, 16, (i) =>
    sourceOf(namespaceName(from + Math.floor(i / sources.length)), sources[i % sources.length]!),
  );
  await createAll(
    api,
    count * WORKLOADS_PER_NAMESPACE,
    8,
    (i) =>
      namespaceDeployments(namespaceName(from + Math.floor(i / WORKLOADS_PER_NAMESPACE)))[
        i % WORKLOADS_PER_NAMESPACE
      ]!,
  );
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  log(
    `  created ${count} namespaces, ${count * sources.length} sources, ${count * WORKLOADS_PER_NAMESPACE} Deployments in ${seconds} s`,
  );
  return seconds;
}

async function createFanout(run: ScaleRun): Promise<void> {
  const { api } = run.site;
  await createAll(api, 1, 1, () => namespaceObject(FANOUT_NAMESPACE));
  await createAll(api, 1, 1, () => sourceOf(FANOUT_NAMESPACE, FANOUT_SOURCES[0]!));
  const deployments = fanoutDeployments(run.plan.fanout);
  await createAll(api, deployments.length, 8, (i) => deployments[i]!);
}

/** Until the controllers have made a ReplicaSet per Deployment and the apiserver is quiet. */
async function waitClusterSettled(run: ScaleRun, deployments: number): Promise<void> {
  const { api } = run.site;
  const started = Date.now();
  let replicaSets = 0;
  await poll(
    async () => {
      const { body } = await api.expect([200], 'GET', '/apis/apps/v1/replicasets?limit=1');
      const list = JSON.parse(body) as {
        items: unknown[];
        metadata: { remainingItemCount?: number };
      };
      replicaSets = list.items.length + (list.metadata.remainingItemCount ?? 0);
      return replicaSets >= deployments ? true : undefined;
    },
    {
      restMs: 2_000,
      timeoutMs: SETTLE_TIMEOUT_MS,
      timedOut: () => {
        throw new Error(
          `${replicaSets} ReplicaSets of ${deployments} after ${SETTLE_TIMEOUT_MS / 1000} s`,
        );
      },
    },
  );
  let before = await apiRequests(api);
  await sleep(5_000);
  await poll(
    async () => {
      const now = await apiRequests(api);
      if (Object.keys(deltaOf(before, now)).filter(isWork).length === 0) return true;
      before = now;
      return undefined;
    },
    { restMs: 5_000 },
  );
  log(`  controllers settled in ${Math.round((Date.now() - started) / 1000)} s`);
}

// --- the changes of each size -------------------------------------------------------------

/** The one-workload change: the last namespace's first workload, its ConfigMap volume. */
function singleChange(size: number): Change {
  return {
    namespace: namespaceName(size - 1),
    workload: workloadName(0),
    source: sourcesOf(0)[0]!,
  };
}

/** Changes spread over the namespaces, each of another workload, of each way of reading. */
function latencyChanges(size: number, count: number): Change[] {
  return Array.from({ length: count }, (_, k) => {
    const workload = 1 + (k % (WORKLOADS_PER_NAMESPACE - 1));
    return {
      namespace: namespaceName(Math.floor((k * size) / count)),
      workload: workloadName(workload),
      source: sourcesOf(workload)[k % 3]!,
    };
  });
}

// --- the tools ----------------------------------------------------------------------------

/** Starts a tool and waits until it has settled, counting what the apiserver served meanwhile. */
async function startSettled(
  run: ScaleRun,
  start: () => Promise<ToolProcess>,
): Promise<{ readonly tool: ToolProcess; readonly figures: StartFigures }> {
  const { requests, result } = await counted(run.site.api, async () => {
    const since = Date.now();
    const tool = await start();
    const seconds = await waitSettled(run.site, tool, since, SETTLE_TIMEOUT_MS).catch(
      async (error: Error) => {
        await tool.stop();
        throw error;
      },
    );
    return { tool, seconds };
  });
  const acted = await result.tool.acted();
  return { tool: result.tool, figures: { seconds: result.seconds, requests, acted } };
}

/** Steps shared by both tools once settled: one change, timed changes, the fan-out. */
async function changeSteps(run: ScaleRun, tool: ToolProcess, size: number) {
  const { site, plan } = run;
  site.log(`  ${tool.tool}: one change`);
  const single = await oneChange(site, tool, singleChange(size), CHANGE_TIMEOUT_MS);
  site.log(`  ${tool.tool}: ${plan.latencyChanges} timed changes`);
  const latenciesMs = await changeLatencies(
    site,
    latencyChanges(size, plan.latencyChanges),
    CHANGE_TIMEOUT_MS,
  );
  site.log(`  ${tool.tool}: fan-out to ${plan.fanout} workloads`);
  const fanout = await fanOut(
    site,
    tool,
    plan.fanout,
    (2 * drainSeconds(plan.fanout, FOLLOW_DEFAULTS) + 120) * 1000,
  );
  return { oneChange: single, latenciesMs, fanout };
}

async function measureConfighash(run: ScaleRun, size: number): Promise<ConfighashFigures> {
  const { site, plan, tools } = run;
  const watchBase = await apiWatches(site.api);
  site.log('  confighash: first start');
  const first = await startSettled(run, () =>
    startFollower(tools, `follow-${size}`, plan.follower),
  );
  try {
    const steadyMb = await rssMb(first.tool);
    const watches = deltaOf(watchBase, await apiWatches(site.api));
    site.log(`  confighash: settled in ${first.figures.seconds} s, ${steadyMb} MB; a resync`);
    const resync = await resyncRequests(site, plan.follower.resyncS);
    const steps = await changeSteps(run, first.tool, size);
    const firstMax = first.tool.maxMb();
    await first.tool.stop();
    site.log('  confighash: restart');
    const second = await startSettled(run, () =>
      startFollower(tools, `follow-${size}-restart`, plan.follower),
    );
    const restartMb = await rssMb(second.tool);
    const maxMb = round1(Math.max(firstMax, second.tool.maxMb()));
    await second.tool.stop();
    site.log(`  confighash: ${steadyMb} MB steady, ${restartMb} MB after the restart`);
    return {
      memoryLimit: first.tool.memoryLimit,
      steadyMb,
      restartMb,
      maxMb,
      watches,
      firstStart: first.figures,
      restart: second.figures,
      resync,
      ...steps,
    };
  } finally {
    await first.tool.stop();
  }
}

async function measureReloader(
  run: ScaleRun,
  size: number,
  binary: string,
): Promise<ReloaderFigures> {
  const { site, plan, tools } = run;
  const watchBase = await apiWatches(site.api);
  site.log('  Reloader: start');
  const { tool, figures } = await startSettled(run, async () =>
    startReloader(tools, `reloader-${size}`, binary),
  );
  try {
    const steadyMb = await rssMb(tool);
    const watches = deltaOf(watchBase, await apiWatches(site.api));
    site.log(`  Reloader: settled in ${figures.seconds} s, ${steadyMb} MB; idle ${plan.idleS} s`);
    const idle = (await counted(site.api, () => sleep(plan.idleS * 1000))).requests;
    const steps = await changeSteps(run, tool, size);
    return { steadyMb, maxMb: round1(tool.maxMb()), watches, start: figures, idle, ...steps };
  } finally {
    await tool.stop();
  }
}

/** Item 6: a serving replica started at the largest size, its RSS settled and its watches. */
async function freshServeReplica(context: Context, run: ScaleRun, kubeconfig: string) {
  const watchBase = await apiWatches(run.site.api);
  const webhook = await startConfighash(context, 'confighash-scale-fresh', kubeconfig);
  await sleep(5_000);
  const figures = {
    rssMb: round1(await residentMb(webhook.pid)),
    watches: deltaOf(watchBase, await apiWatches(run.site.api)),
  };
  await webhook.stop();
  context.webhooks.splice(context.webhooks.indexOf(webhook), 1);
  return figures;
}

const round1 = (mb: number) => Math.round(mb * 10) / 10;
