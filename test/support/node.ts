// The node fixture (tools/cluster/node.ts): a control plane with a real node
// running the images built from this source, confighash installed from the
// manifests, and what the node tests measure with — a stream of server-side
// applies, the apiserver's own webhook metrics, the webhook's pods.

import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import { type Kubectl, kubectlFor, strictKubectl } from '../../tools/cluster/kubectl.js';
import { installOverlay, waitForRollouts } from '../../tools/cluster/main.js';
import { type AttachedNode, attachNode, startLocalNode } from '../../tools/cluster/node.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { sleep } from '../../tools/lib/poll.js';
import { adminTls } from './admin-api.js';
import { restoreCluster, snapshotCluster } from './cluster-state.js';
import { configMap, namespace, waitUntil, yamlDocuments } from './e2e.js';
import { applyingInProcess } from './in-process-writes.js';
import { thisWorkersCluster } from './per-worker.js';

export const SYSTEM_NAMESPACE = 'confighash-system';
export const WEBHOOK_NAME = 'hash.confighash.dev';

export interface NodeFixture {
  /** The suite's node as this file uses it; `dir` is the file's own (logs of what it starts). */
  readonly cluster: AttachedNode & { readonly node: AttachedNode };
  readonly kubectl: Kubectl;
  readonly k: (args: readonly string[], input?: string) => Promise<string>;
  json<T>(args: readonly string[]): Promise<T>;
  install(overlay: string): Promise<void>;
  /** Waits until confighash's Deployments (the webhook's, and confighash-follow if installed) have rolled out. */
  rollout(): Promise<void>;
  /** Removes what the file made on the node (confighash's install among it). */
  stop(): Promise<void>;
}

/**
 * This file's use of its worker's node (test/node/global-setup.ts: one per worker; files of one
 * worker run one after another, so what is new when a file ends is its own).
 */
export async function attachNodeFixture(): Promise<NodeFixture> {
  const node = attachNode(thisWorkersCluster('nodes'));
  const kubectl = kubectlFor(node.kubeconfig);
  const before = await snapshotCluster(node.kubeconfig);
  // Not confighash-node-*: that is a node run's, which removeStaleRuns may take for a dead one.
  const dir = await mkdtemp(join(tmpdir(), 'confighash-file-'));
  return fixtureOn(node, dir, kubectl, async () => {
    await restoreCluster(kubectl, before, node.kubeconfig);
    if (!process.env.CONFIGHASH_KEEP_LOGS) await rm(dir, { recursive: true, force: true });
  });
}

/**
 * A node of the file's own, holding only `images`: for a file whose proof needs a node
 * without confighash's image (it must come from a registry), and whose pulls must not
 * change the suite's node — pulling the image that node imported, under another name,
 * made its containerd answer every later pod of the imported name with a pull, which
 * fails there.
 */
export async function startOwnNodeFixture(
  images: readonly string[],
): Promise<NodeFixture & { readonly state: string }> {
  const node = await startLocalNode({ images });
  const fixture = fixtureOn(node, node.dir, kubectlFor(node.kubeconfig), () => node.stop());
  return { ...fixture, state: node.access.state };
}

function fixtureOn(
  node: AttachedNode,
  dir: string,
  kubectl: Kubectl,
  stop: () => Promise<void>,
): NodeFixture {
  const k = applyingInProcess(strictKubectl(kubectl), node.kubeconfig);
  return {
    cluster: { ...node, dir, node },
    kubectl,
    k,
    json: async <T>(args: readonly string[]) => JSON.parse(await k([...args, '-o', 'json'])) as T,
    install: (overlay) => installOverlay(kubectl, overlay),
    rollout: () => waitForRollouts(kubectl),
    stop,
  };
}

export interface OverlayPatch {
  readonly target: { readonly kind: string; readonly name: string };
  /** JSON patch operations (RFC 6902). */
  readonly operations: readonly object[];
}

/**
 * An overlay of one of the repository's kustomizations, patched as a user would patch it,
 * with any of the repository's components (manifests/components/NAME) added.
 */
export async function patchedOverlay(
  base: string,
  patches: readonly OverlayPatch[],
  components: readonly string[] = [],
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'confighash-overlay-'));
  await writeFile(
    join(dir, 'kustomization.yaml'),
    JSON.stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      // kustomize takes a base only by a relative path.
      resources: [relative(dir, join(REPO_ROOT, base))],
      components: components.map((component) => relative(dir, join(REPO_ROOT, component))),
      patches: patches.map(({ target, operations }) => ({
        target,
        patch: JSON.stringify(operations),
      })),
    }),
  );
  return dir;
}

/** Appends `args` to confighash-follow's flags (manifests/components/follow), as a user would. */
export function followArgs(args: readonly string[]): OverlayPatch {
  return {
    target: { kind: 'Deployment', name: 'confighash-follow' },
    operations: args.map((value) => ({
      op: 'add',
      path: '/spec/template/spec/containers/0/args/-',
      value,
    })),
  };
}

export interface Pod {
  metadata: {
    name: string;
    uid: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
  };
  spec: {
    enableServiceLinks?: boolean;
    containers?: { lifecycle?: { preStop?: { sleep?: { seconds?: number } } } }[];
  };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      containerID?: string;
      ready: boolean;
      restartCount: number;
      state?: { terminated?: { exitCode: number } };
      lastState?: { terminated?: { exitCode: number } };
    }[];
  };
}

export const isReady = (pod: Pod) =>
  pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** The pods of the webhook's Deployment; follow mode's (`confighash-follow`) are apart. */
export const WEBHOOK_PODS = 'app.kubernetes.io/name=confighash';
export const FOLLOW_PODS = 'app.kubernetes.io/name=confighash-follow';

/** The webhook's pods (or those of `selector`), those terminating among them. */
async function allWebhookPods(
  fixture: NodeFixture,
  namespace: string,
  selector = WEBHOOK_PODS,
): Promise<Pod[]> {
  const list = await fixture.json<{ items: Pod[] }>([
    'get',
    'pods',
    '-n',
    namespace,
    '-l',
    selector,
  ]);
  return list.items;
}

/** Follow mode's Ready pods (manifests/components/follow), not counting those terminating, once there are `count`. */
export async function waitForReadyFollowPods(fixture: NodeFixture, count = 2): Promise<Pod[]> {
  let pods: Pod[] = [];
  await waitUntil(
    async () => {
      pods = (await allWebhookPods(fixture, SYSTEM_NAMESPACE, FOLLOW_PODS)).filter(
        (pod) => !pod.metadata.deletionTimestamp && isReady(pod),
      );
      return pods.length === count;
    },
    `${count} ready confighash-follow pods`,
    240_000,
  );
  return pods;
}

/** The webhook's pods, not counting those already terminating. */
export async function webhookPods(
  fixture: NodeFixture,
  namespace = SYSTEM_NAMESPACE,
): Promise<Pod[]> {
  return (await allWebhookPods(fixture, namespace)).filter(
    (pod) => !pod.metadata.deletionTimestamp,
  );
}

export async function waitForReadyWebhookPods(
  fixture: NodeFixture,
  count = 2,
  namespace = SYSTEM_NAMESPACE,
): Promise<Pod[]> {
  let pods: Pod[] = [];
  await waitUntil(
    async () => {
      pods = (await webhookPods(fixture, namespace)).filter(isReady);
      return pods.length === count;
    },
    `${count} ready confighash pods`,
    240_000,
  );
  return pods;
}

/**
 * Waits until the apiserver can reach only the replicas that stay, and every replica that goes
 * has got its SIGTERM: the Service's ready endpoints are exactly the Ready, not terminating
 * pods, and every terminating pod's preStop has run out. A stopping replica may go on draining
 * idle connections for a minute and more after that, but the apiserver sends it nothing: the
 * window in which a dropped write can happen is over.
 */
export async function waitUntilOnlyStayingReplicasServe(
  fixture: NodeFixture,
  namespace = SYSTEM_NAMESPACE,
): Promise<void> {
  let terminating: Pod[] = [];
  await waitUntil(
    async () => {
      const pods = await allWebhookPods(fixture, namespace);
      terminating = pods.filter((pod) => pod.metadata.deletionTimestamp);
      const staying = pods.filter((pod) => !pod.metadata.deletionTimestamp && isReady(pod));
      const served = await readyEndpointAddresses(fixture, namespace);
      const stayingIps = staying.map((pod) => pod.status.podIP ?? '').sort();
      return staying.length === 2 && served.join(' ') === stayingIps.join(' ');
    },
    'the Service to route only to the replicas that stay',
    240_000,
  );
  const sigtermAt = Math.max(0, ...terminating.map(sigtermTime));
  await sleep(Math.max(0, sigtermAt - Date.now()));
}

/**
 * When a terminating pod's container gets SIGTERM: when its deletion began — its
 * deletionTimestamp is when the grace period ends, deletionGracePeriodSeconds after that —
 * plus its preStop sleep.
 */
function sigtermTime(pod: Pod): number {
  const deletedAt =
    Date.parse(pod.metadata.deletionTimestamp!) -
    (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
  return deletedAt + (pod.spec.containers?.[0]?.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
}

/** The addresses the Service's EndpointSlices list as ready (what the apiserver dials), sorted. */
async function readyEndpointAddresses(fixture: NodeFixture, namespace: string): Promise<string[]> {
  const slices = await fixture.json<{
    items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[];
  }>(['get', 'endpointslices', '-n', namespace, '-l', 'kubernetes.io/service-name=confighash']);
  return slices.items
    .flatMap((slice) => slice.endpoints ?? [])
    .filter((endpoint) => endpoint.conditions?.ready !== false)
    .flatMap((endpoint) => endpoint.addresses)
    .sort();
}

// Runs inside the node's network namespace, where pod IPs are routable: prints the
// serial number of the certificate the pod serves (trust is not the question here).
const PEER_SERIAL = `
const tls = require('node:tls');
const socket = tls.connect({ host: process.argv[1], port: Number(process.argv[2]),
  servername: process.argv[3], rejectUnauthorized: false }, () => {
  console.log(socket.getPeerCertificate().serialNumber); socket.end(); });
socket.on('error', (error) => { console.error(error.message); process.exit(1); });`;

/** The port the webhook's pods serve on (the manifests' and the chart's container port). */
const WEBHOOK_PORT = 8443;

/** The serial number of the certificate a webhook pod serves now. */
export async function servedSerial(fixture: NodeFixture, pod: Pod): Promise<string> {
  if (!pod.status.podIP) throw new Error(`pod ${pod.metadata.name} has no IP`);
  const out = await fixture.cluster.node.namespaces.exec(process.execPath, [
    '-e',
    PEER_SERIAL,
    pod.status.podIP,
    String(WEBHOOK_PORT),
    `confighash.${SYSTEM_NAMESPACE}.svc`,
  ]);
  return out.trim();
}

/** The host PID-namespace-inside view: the PID of a container's first process, via ctr. */
export async function containerPid(fixture: NodeFixture, containerId: string): Promise<number> {
  const id = containerId.replace(/^containerd:\/\//, '');
  const info = await fixture.cluster.node.ctr(['tasks', 'ls']);
  const line = info.split('\n').find((row) => row.startsWith(id));
  const pid = Number(line?.split(/\s+/)[1]);
  if (!pid) throw new Error(`no running task for container ${id}`);
  return pid;
}

/** Sums the apiserver's own counters for confighash's webhook (see docs/design.md §7). */
export async function webhookCounters(
  fixture: Pick<NodeFixture, 'k'>,
): Promise<{ failOpen: number; rejected: number; errors: number; requests: number }> {
  const text = await fixture.k(['get', '--raw', '/metrics']);
  const sum = (metric: string, keep: (labels: string) => boolean) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${metric}{`) && line.includes(`name="${WEBHOOK_NAME}"`))
      .filter((line) => keep(line.slice(line.indexOf('{'), line.lastIndexOf('}') + 1)))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return {
    failOpen: sum('apiserver_admission_webhook_fail_open_count', () => true),
    rejected: sum('apiserver_admission_webhook_rejection_count', () => true),
    errors: sum(
      'apiserver_admission_webhook_request_total',
      (labels) => !labels.includes('code="200"'),
    ),
    requests: sum('apiserver_admission_webhook_request_total', () => true),
  };
}

// --- a stream of server-side applies --------------------------------------------

export interface ApplyOutcome {
  readonly name: string;
  readonly status: number;
  readonly hash: string | undefined;
  readonly error?: string;
}

export interface LoadReport {
  readonly sent: number;
  readonly durationMs: number;
  readonly appliesPerSecond: number;
  readonly failed: readonly ApplyOutcome[];
  /** Applied, but the template does not carry the expected hash: a write that fell open. */
  readonly wrongHash: readonly ApplyOutcome[];
}

export interface LoadOptions {
  readonly namespace: string;
  /** The ConfigMap every workload references (envFrom). */
  readonly configMap: string;
  readonly expectedHash: string;
  readonly ratePerSecond: number;
  /** The load runs until this is aborted. */
  readonly until: AbortSignal;
  readonly prefix: string;
}

/**
 * Creates one Deployment per tick with a server-side apply (replicas 0: admission is
 * what is measured, not pods) and checks the hash in each answer.
 */
export async function applyContinuously(
  fixture: NodeFixture,
  options: LoadOptions,
): Promise<LoadReport> {
  const tls = await adminTls(fixture.cluster.kubeconfig);
  const agent = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
  const started = Date.now();
  const pending: Promise<ApplyOutcome>[] = [];
  const intervalMs = 1000 / options.ratePerSecond;
  for (let i = 0; !options.until.aborted; i++) {
    pending.push(applyDeployment(agent, tls.server, options, `${options.prefix}-${i}`));
    const next = started + (i + 1) * intervalMs;
    await sleep(Math.max(0, next - Date.now()));
  }
  const outcomes = await Promise.all(pending);
  const durationMs = Date.now() - started;
  agent.destroy();
  return {
    sent: outcomes.length,
    durationMs,
    appliesPerSecond: outcomes.length / (durationMs / 1000),
    failed: outcomes.filter((o) => o.status !== 200 && o.status !== 201),
    wrongHash: outcomes.filter(
      (o) => (o.status === 200 || o.status === 201) && o.hash !== options.expectedHash,
    ),
  };
}

/**
 * The pod template of an app that prints `greeting=$GREETING`, read by env from the ConfigMap
 * `configMap`, once at start — so its log tells which config a pod started with. With
 * `exitOn`, the app exits 1 at start when GREETING is that value instead (a value its pods
 * crash-loop on), and is Ready only once it started with another: without a readiness probe a
 * container that exits at once is seen running, so its pod Ready, until the kubelet notices —
 * seconds on a loaded node, long enough to be counted available.
 */
export function greetingPodTemplate(app: string, configMap: string, exitOn?: string): object {
  const greet = 'echo "greeting=$GREETING"; exec sleep 3600';
  const refusing = exitOn === undefined ? {} : startedWith(exitOn, greet);
  return {
    metadata: { labels: { app } },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: 'confighash.local/busybox:1',
          imagePullPolicy: 'Never',
          command: ['/bin/sh', '-c', greet],
          envFrom: [{ configMapRef: { name: configMap } }],
          ...refusing,
        },
      ],
    },
  };
}

/** The command that refuses `bad` before it runs `greet`, and the probe that says it started. */
function startedWith(bad: string, greet: string): object {
  return {
    command: ['/bin/sh', '-c', `[ "$GREETING" != '${bad}' ] || exit 1; : >/tmp/started; ${greet}`],
    readinessProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1 },
  };
}

/** Changes GREETING in the ConfigMap out of band: no write of any workload carries it. */
export async function changeGreeting(
  fixture: NodeFixture,
  namespace: string,
  configMap: string,
  greeting: string,
): Promise<void> {
  await fixture.k([
    'patch',
    'configmap',
    configMap,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ data: { GREETING: greeting } }),
  ]);
}

export function loadWorkload(namespace: string, name: string, configMap: string): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'confighash.local/busybox:1',
              envFrom: [{ configMapRef: { name: configMap } }],
            },
          ],
        },
      },
    },
  };
}

function applyDeployment(
  agent: https.Agent,
  server: URL,
  options: LoadOptions,
  name: string,
): Promise<ApplyOutcome> {
  const path =
    `/apis/apps/v1/namespaces/${options.namespace}/deployments/${name}` +
    '?fieldManager=confighash-load&force=true';
  const body = JSON.stringify(loadWorkload(options.namespace, name, options.configMap));
  return new Promise((resolve) => {
    const request = https.request(
      {
        host: server.hostname,
        port: server.port,
        path,
        method: 'PATCH',
        agent,
        headers: { 'content-type': 'application/apply-patch+yaml' },
        timeout: 30_000,
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          let hash: string | undefined;
          try {
            hash = JSON.parse(text).spec?.template?.metadata?.annotations?.[HASH];
          } catch {
            // Reported as a failure below.
          }
          resolve({ name, status, hash, ...(status >= 300 ? { error: text.slice(0, 300) } : {}) });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', (error) =>
      resolve({ name, status: 0, hash: undefined, error: error.message }),
    );
    request.end(body);
  });
}

// --- a disruption under load ------------------------------------------------------

/**
 * Writes a second during a disruption. A dropped write can only happen in the instant a
 * replica stops being dialled, so what a row can catch is the writes in flight then. 20/s
 * did not catch a broken drain more often than 12/s, and beside a second node on the same two
 * cores it once cost a correct build 4 writes: 12/s, the rate every row was proven at.
 */
const DISRUPTION_RATE = 12;
/**
 * The load runs from LOAD_LEAD_MS before the disruption to LOAD_TAIL_MS after it is over: the
 * window is the disruption's own length (its `disrupt` resolves when it is over), not a fixed
 * time, so a row costs what its disruption costs.
 */
const LOAD_LEAD_MS = 3_000;
const LOAD_TAIL_MS = 3_000;

/**
 * Applies of the probe before a row gives up on its namespace. The probe is the row's setup, not
 * its measure: a first write that falls open outside the row's window (once in CI, right after
 * the delete row, cause not recorded then) is applied again — it is an UPDATE the webhook hashes
 * — and what the apiserver and the webhook said of it is printed, never hidden.
 */
const PROBE_APPLIES = 3;

/** A namespace with the ConfigMap the load's workloads reference; returns their hash. */
async function prepareNamespace(fixture: NodeFixture, ns: string): Promise<string> {
  await fixture.k(
    ['apply', '--server-side', '-f', '-'],
    yamlDocuments(namespace(ns, 'true'), configMap(ns, 'load-config', { LEVEL: 'info' })),
  );
  for (let attempt = 1; ; attempt++) {
    const mark = await markApiserver(fixture);
    const applied = await fixture.kubectl(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(loadWorkload(ns, 'probe', 'load-config')),
    );
    if (applied.code !== 0) throw new Error(`the probe's apply in ${ns} failed: ${applied.stderr}`);
    const hash = await probeHash(fixture, ns);
    if (hash) return hash;
    const why = await whyUnhashed(fixture, ns, mark, applied.stderr);
    if (attempt === PROBE_APPLIES)
      throw new Error(`the probe workload in ${ns} got no hash in ${attempt} applies; ${why}`);
    console.warn(`${ns}: the probe's apply ${attempt} got no hash, applying again; ${why}`);
  }
}

async function probeHash(fixture: NodeFixture, ns: string): Promise<string | undefined> {
  const probe = await fixture.json<{
    spec: { template: { metadata: { annotations?: Record<string, string> } } };
  }>(['get', 'deployment', 'probe', '-n', ns]);
  const hash = probe.spec.template.metadata.annotations?.[HASH];
  return hash && /^[0-9a-f]{64}$/.test(hash) ? hash : undefined;
}

/** What the apiserver counted, kubectl warned and the webhook logged of a write left without a hash. */
async function whyUnhashed(
  fixture: NodeFixture,
  ns: string,
  mark: ApiserverMark,
  kubectlStderr: string,
): Promise<string> {
  const since = await apiserverSince(fixture, mark);
  const logs = await fixture.kubectl([
    'logs',
    '-n',
    SYSTEM_NAMESPACE,
    '-l',
    WEBHOOK_PODS,
    '--prefix',
    '--tail=400',
  ]);
  const logLines = logs.stdout.split('\n').filter((line) => line.includes(ns));
  return [
    `apiserver fail-open +${since.failOpen}, webhook errors +${since.errors}`,
    `the apiserver's log: ${since.logged.join('\n') || '(nothing of the webhook)'}`,
    `kubectl: ${kubectlStderr.trim() || '(nothing on stderr)'}`,
    `webhook log lines naming ${ns}: ${logLines.join('\n') || '(none)'}`,
  ].join('; ');
}

export interface DisruptionResult {
  readonly report: LoadReport;
  /** Change of the apiserver's fail-open count for the webhook. */
  readonly failOpen: number;
  /** Change of its count of non-200 webhook answers. */
  readonly errors: number;
  /** What the apiserver logged of its failed calls to the webhook in the window (why it fell open). */
  readonly apiserverSaid: readonly string[];
}

/**
 * DISRUPTION_RATE applies/s (at least 10 held to) in a fresh namespace, from a little before `disrupt`
 * starts until a little after it resolves — it resolves when the disruption is over (old pods
 * gone, a renewal served) — and what the apiserver's counters say of that window.
 */
export async function underLoad(
  fixture: NodeFixture,
  ns: string,
  disrupt: () => Promise<void>,
): Promise<DisruptionResult> {
  const expectedHash = await prepareNamespace(fixture, ns);
  const mark = await markApiserver(fixture);
  const stop = new AbortController();
  const load = applyContinuously(fixture, {
    namespace: ns,
    configMap: 'load-config',
    expectedHash,
    ratePerSecond: DISRUPTION_RATE,
    until: stop.signal,
    prefix: 'w',
  });
  try {
    await sleep(LOAD_LEAD_MS);
    await disrupt();
    await sleep(LOAD_TAIL_MS);
  } finally {
    stop.abort();
  }
  const report = await load;
  const since = await apiserverSince(fixture, mark);
  const result = {
    report,
    failOpen: since.failOpen,
    errors: since.errors,
    apiserverSaid: since.logged,
  };
  console.info(
    `${ns}: ${report.sent} applies in ${(report.durationMs / 1000).toFixed(1)} s ` +
      `(${report.appliesPerSecond.toFixed(1)}/s), ${report.failed.length} failed, ` +
      `${report.wrongHash.length} without the hash, apiserver fail-open +${result.failOpen}, ` +
      `webhook errors +${result.errors}` +
      result.apiserverSaid.map((line) => `\n  apiserver: ${line}`).join(''),
  );
  return result;
}

/** The graceful promise: every apply admitted with the right hash, and the apiserver saw no failure. */
export function expectNothingDropped(result: DisruptionResult): void {
  expect(result.report.appliesPerSecond).toBeGreaterThanOrEqual(10);
  expect(result.report.failed).toEqual([]);
  expect(result.report.wrongHash).toEqual([]);
  const apiserverSaid = result.apiserverSaid.join('\n');
  expect(result.failOpen, apiserverSaid).toBe(0);
  expect(result.errors, apiserverSaid).toBe(0);
}

/** The apiserver's log file on the node (tools/cluster/control-plane.ts writes it there). */
const apiserverLog = (fixture: NodeFixture) => join(fixture.cluster.node.dir, 'kube-apiserver.log');

/** Where a window begins: the apiserver's webhook counters, and where its log ends. */
interface ApiserverMark {
  readonly counters: Awaited<ReturnType<typeof webhookCounters>>;
  readonly logBytes: number;
}

async function markApiserver(fixture: NodeFixture): Promise<ApiserverMark> {
  const counters = await webhookCounters(fixture);
  return { counters, logBytes: (await stat(apiserverLog(fixture))).size };
}

/**
 * What the apiserver said of the webhook since `mark`: the change of its fail-open and non-200
 * counts, and its log lines naming the webhook — at its log level it writes one only for a call
 * that failed ("Failed calling webhook, failing open …: …"), with the reason: a refused or reset
 * connection, a timeout, a bad answer.
 */
async function apiserverSince(
  fixture: NodeFixture,
  mark: ApiserverMark,
): Promise<{ failOpen: number; errors: number; logged: string[] }> {
  const counters = await webhookCounters(fixture);
  const log = await readFile(apiserverLog(fixture));
  return {
    failOpen: counters.failOpen - mark.counters.failOpen,
    errors: counters.errors - mark.counters.errors,
    logged: log
      .subarray(mark.logBytes)
      .toString('utf8')
      .split('\n')
      .filter((line) => line.includes(WEBHOOK_NAME)),
  };
}
