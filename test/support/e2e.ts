// The e2e fixture: a control plane of the suite's (test/e2e/global-setup.ts), the webhook
// from the current source registered against it, and kubectl. A file has a webhook and a
// directory of its own, and what it made in the cluster goes when it stops.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { afterAll, beforeAll } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import type { ControlPlane } from '../../tools/cluster/control-plane.js';
import { type Kubectl, kubectlFor, strictKubectl } from '../../tools/cluster/kubectl.js';
import {
  type LocalWebhook,
  startLocalWebhook,
  withRegisteredWebhook,
} from '../../tools/cluster/webhook.js';
import {
  type AdminTls,
  adminTls,
  listObjects,
  readObject,
  readsWithoutKubectl,
} from './admin-api.js';
import { type ClusterState, restoreCluster, snapshotCluster } from './cluster-state.js';
import { applyingInProcess } from './in-process-writes.js';
import { thisWorkersCluster, verboseLog } from './per-worker.js';
import { waitUntil } from './poll.js';

export { waitUntil };

/** A control plane as a test uses it: its address, CA and admin kubeconfigs. */
export type ClusterAccess = Pick<
  ControlPlane,
  'dir' | 'kubeconfig' | 'componentKubeconfig' | 'server' | 'caCert'
>;

/** A file's share of the suite's control plane: its own directory, and its clean-up. */
export interface SharedControlPlane {
  readonly controlPlane: ClusterAccess;
  /** This file's directory: logs, certificates, kubeconfigs of its own. */
  readonly dir: string;
  /** kubectl that resolves whatever the exit code. */
  readonly kubectl: Kubectl;
  /** kubectl that throws on failure and returns stdout. */
  readonly k: (args: readonly string[], input?: string) => Promise<string>;
  /** Removes what the file made in the cluster, and its directory. */
  stop(): Promise<void>;
}

export interface E2eCluster extends SharedControlPlane {
  readonly webhook: LocalWebhook;
}

/**
 * This file's share of its worker's control plane (one per worker: files of one worker run one
 * after another, so what is new when a file ends is its own); `stop()` puts it back as it was.
 * `dir`: the file's directory, made already (default: a new one).
 */
export async function useSharedControlPlane(dir?: string): Promise<SharedControlPlane> {
  const controlPlane = thisWorkersCluster('controlPlanes');
  const kubectl = kubectlFor(controlPlane.kubeconfig);
  const before: ClusterState = await snapshotCluster(controlPlane.kubeconfig);
  dir ??= await newFileDir();
  return {
    controlPlane,
    dir,
    kubectl,
    k: applyingInProcess(strictKubectl(kubectl), controlPlane.kubeconfig),
    async stop() {
      await restoreCluster(kubectl, before, controlPlane.kubeconfig);
      if (!process.env.CONFIGHASH_KEEP_LOGS) await rm(dir, { recursive: true, force: true });
    },
  };
}

function newFileDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'confighash-e2e-'));
}

/**
 * The registered webhook with `webhookArgs`; with `followArgs`, `confighash follow` beside it.
 * The webhook process starts while the file's snapshot waits for the namespaces of the file
 * before to go (the namespace controller's fixed 5 s): it writes nothing to the cluster, and is
 * registered only once the snapshot is taken, so that its registration is the file's to remove.
 */
export async function startE2eCluster(
  webhookArgs: readonly string[] = [],
  followArgs?: readonly string[],
): Promise<E2eCluster> {
  const log = verboseLog();
  const dir = await newFileDir();
  const [shared, started] = await Promise.allSettled([
    useSharedControlPlane(dir),
    startLocalWebhook({
      dir,
      kubeconfig: thisWorkersCluster('controlPlanes').kubeconfig,
      extraArgs: webhookArgs,
      log,
    }),
  ]);
  if (shared.status === 'rejected' || started.status === 'rejected') {
    if (started.status === 'fulfilled') await started.value.stop();
    if (shared.status === 'fulfilled') await shared.value.stop();
    else await rm(dir, { recursive: true, force: true });
    throw shared.status === 'rejected' ? shared.reason : (started as PromiseRejectedResult).reason;
  }
  return withRegisteredWebhook(shared.value, shared.value.kubectl, {
    dir,
    kubeconfig: shared.value.controlPlane.kubeconfig,
    ...(followArgs ? { followArgs } : {}),
    log,
    started: started.value,
  });
}

/** What a file's tests use of its cluster: valid inside tests, once the file's beforeAll has run. */
export interface E2eFile {
  readonly e2e: E2eCluster;
  readonly api: ClusterApi;
}

export interface E2eFileOptions {
  /** The file's own setup, once its webhook is registered: CRDs, followers, cert-manager. */
  readonly setup?: (file: E2eFile) => Promise<void>;
  /** The file's own clean-up, before the cluster stops; it runs however far setup got. */
  readonly teardown?: () => Promise<void>;
  /** Starts nothing: the file's tests skip themselves (a tool they need is not built). */
  readonly skip?: boolean;
  /** The setup hook's timeout, where the suite's hookTimeout is not the one wanted. */
  readonly timeoutMs?: number;
  /** `confighash follow`'s arguments: follow mode runs beside the webhook (none without them). */
  readonly follow?: readonly string[];
}

/**
 * Registers the file's hooks: beforeAll starts its cluster (`startE2eCluster(webhookArgs)`)
 * and then `setup`; afterAll runs `teardown` and then stops the cluster.
 */
export function e2eFile(
  webhookArgs: readonly string[] = [],
  options: E2eFileOptions = {},
): E2eFile {
  let started: E2eFile | undefined;
  const file: E2eFile = {
    get e2e() {
      return startedFile().e2e;
    },
    get api() {
      return startedFile().api;
    },
  };
  function startedFile(): E2eFile {
    if (!started) throw new Error('the e2e cluster is used before its beforeAll has started it');
    return started;
  }
  beforeAll(async () => {
    if (options.skip) return;
    const e2e = await startE2eCluster(webhookArgs, options.follow);
    started = { e2e, api: cluster(e2e) };
    await options.setup?.(file);
  }, options.timeoutMs);
  afterAll(async () => {
    await options.teardown?.();
    await started?.e2e.stop();
  });
  return file;
}

/** Multi-document YAML, as users keep it in one file. */
export function yamlDocuments(...objects: object[]): string {
  return objects.map((object) => dump(object)).join('---\n');
}

export function namespace(name: string, label?: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, ...(label ? { labels: { 'confighash.dev/enabled': label } } : {}) },
  };
}

export function configMap(ns: string, name: string, data: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

export function secret(ns: string, name: string, stringData: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, stringData };
}

export interface WorkloadSpec {
  kind?: 'Deployment' | 'StatefulSet' | 'DaemonSet';
  image?: string;
  podSpec?: Record<string, unknown>;
  annotations?: Record<string, string>;
}

/** A workload reading ConfigMap `<name>-config` as a volume and Secret `<name>-secret` via envFrom. */
export function workload(ns: string, name: string, spec: WorkloadSpec = {}): object {
  const kind = spec.kind ?? 'Deployment';
  const podSpec = spec.podSpec ?? {
    volumes: [{ name: 'config', configMap: { name: `${name}-config` } }],
    containers: [
      {
        name: 'app',
        image: spec.image ?? 'registry.example/app:1',
        envFrom: [{ secretRef: { name: `${name}-secret` } }],
        volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
      },
    ],
  };
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: {
      name,
      namespace: ns,
      ...(spec.annotations ? { annotations: spec.annotations } : {}),
    },
    spec: {
      ...(kind === 'Deployment' ? { replicas: 1, revisionHistoryLimit: 20 } : {}),
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: podSpec },
    },
  };
}

interface ObjectWithTemplate {
  metadata: { generation?: number; annotations?: Record<string, string> };
  spec: { template: { metadata?: { annotations?: Record<string, string> } } };
  status?: { observedGeneration?: number };
}

/** A Deployment or ReplicaSet of a namespace's list of both. */
interface AppsObject extends ObjectWithTemplate {
  kind: string;
  metadata: ObjectWithTemplate['metadata'] & { name: string; labels?: Record<string, string> };
}

const REVISION = 'deployment.kubernetes.io/revision';

/** A pod template as JSON, without the label a ReplicaSet's copy of its Deployment's gains. */
function templateOf(object: ObjectWithTemplate): string {
  const { metadata = {}, ...rest } = object.spec.template as {
    metadata?: { labels?: Record<string, string> };
  };
  const { 'pod-template-hash': _, ...labels } = metadata.labels ?? {};
  return JSON.stringify({ ...rest, metadata: { ...metadata, labels } });
}

/**
 * Deployment `name`'s revision and its ReplicaSets (those of its pods' `app` label, as the
 * workloads here label them) in revision order — or undefined while the controller has not
 * seen its latest generation, or not yet made the ReplicaSet of its template at its revision.
 * Seen is not made: a Recreate Deployment's controller observes a new generation, scales the
 * old ReplicaSet down and only on a later sync makes the new one and moves the revision on.
 */
function replicaSetsIfObserved(items: readonly AppsObject[], name: string) {
  const deployment = items.find(
    (item) => item.kind === 'Deployment' && item.metadata.name === name,
  );
  if (!deployment || deployment.status?.observedGeneration !== deployment.metadata.generation) {
    return undefined;
  }
  const revision = deployment.metadata.annotations?.[REVISION];
  const replicaSets = items.filter(
    (item) => item.kind === 'ReplicaSet' && item.metadata.labels?.app === name,
  );
  const current = replicaSets.find((rs) => rs.metadata.annotations?.[REVISION] === revision);
  if (!current || templateOf(current) !== templateOf(deployment)) return undefined;
  return {
    revision: Number(revision),
    replicaSets: replicaSets
      .map((rs) => ({
        revision: rs.metadata.annotations?.[REVISION] ?? '',
        hash: rs.spec.template.metadata?.annotations?.[HASH],
      }))
      .sort((a, b) => Number(a.revision) - Number(b.revision)),
  };
}

/** Reads of a file's workloads, as the tests ask them: GETs of their own for the apps kinds, kubectl for the rest. */
export type ClusterApi = ReturnType<typeof cluster>;

export function cluster(e2e: Pick<SharedControlPlane, 'k' | 'controlPlane'>) {
  const { k } = e2e;
  const getJson = async <T>(args: readonly string[]): Promise<T> =>
    JSON.parse(await k([...args, '-o', 'json'])) as T;
  let admin: Promise<AdminTls> | undefined;
  const asAdmin = () => {
    admin ??= adminTls(e2e.controlPlane.kubeconfig);
    return admin;
  };
  const api = {
    async get(ns: string, kind: string, name: string): Promise<ObjectWithTemplate> {
      if (!readsWithoutKubectl(kind)) return getJson(['get', '-n', ns, kind, name]);
      const object = await readObject<ObjectWithTemplate>(await asAdmin(), ns, kind, name);
      if (!object) throw new Error(`${kind} ${ns}/${name} not found`);
      return object;
    },
    async templateAnnotations(
      ns: string,
      kind: string,
      name: string,
    ): Promise<Record<string, string>> {
      return (await api.get(ns, kind, name)).spec.template.metadata?.annotations ?? {};
    },
    async hash(ns: string, kind: string, name: string): Promise<string | undefined> {
      return (await api.templateAnnotations(ns, kind, name))[HASH];
    },
    /** ReplicaSets of a Deployment, once the controller has seen its latest generation. */
    async replicaSets(
      ns: string,
      name: string,
    ): Promise<{ revision: string; hash: string | undefined }[]> {
      return (await observedDeployment(ns, name)).replicaSets;
    },
    async revision(ns: string, name: string): Promise<number> {
      return (await observedDeployment(ns, name)).revision;
    },
    /** Who holds Lease `ns/name`; '' when nobody does or there is no such Lease. */
    async leaseHolder(ns: string, name: string): Promise<string> {
      type Lease = { spec?: { holderIdentity?: string } };
      return (
        (await readObject<Lease>(await asAdmin(), ns, 'lease', name))?.spec?.holderIdentity ?? ''
      );
    },
  };
  /**
   * A Deployment's revision and ReplicaSets (their revisions, and the hash in their templates,
   * in revision order), once the controller has seen its latest generation and made the
   * ReplicaSet of its revision: read together, two GETs a try.
   */
  async function observedDeployment(ns: string, name: string) {
    let observed: ReturnType<typeof replicaSetsIfObserved>;
    await waitUntil(async () => {
      const tls = await asAdmin();
      const items = [
        ...(await listObjects<AppsObject>(tls, ns, 'deployment')),
        ...(await listObjects<AppsObject>(tls, ns, 'replicaset')),
      ];
      observed = replicaSetsIfObserved(items, name);
      return observed !== undefined;
    }, `deployment ${ns}/${name} to be observed`);
    return observed!;
  }
  return api;
}

/** A kubeconfig for the control plane (its address and CA) with one user, as JSON. */
export function localKubeconfig(
  controlPlane: Pick<ControlPlane, 'server' | 'caCert'>,
  name: string,
  user: object,
  namespace?: string,
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'local',
        cluster: {
          server: controlPlane.server,
          'certificate-authority-data': Buffer.from(controlPlane.caCert).toString('base64'),
        },
      },
    ],
    users: [{ name, user }],
    contexts: [
      {
        name: 'local',
        context: { cluster: 'local', user: name, ...(namespace ? { namespace } : {}) },
      },
    ],
    'current-context': 'local',
  });
}

/** A kubeconfig file with the control plane's address and CA and a token of a ServiceAccount. */
export async function serviceAccountKubeconfig(
  controlPlane: ClusterAccess,
  k: (args: readonly string[]) => Promise<string>,
  dir: string,
  namespace: string,
  name: string,
): Promise<string> {
  const token = (await k(['create', 'token', name, '-n', namespace, '--duration=2h'])).trim();
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(path, localKubeconfig(controlPlane, name, { token }), { mode: 0o600 });
  return path;
}
