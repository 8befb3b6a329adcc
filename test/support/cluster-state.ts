// What a test file leaves in a cluster it shares with the other files of its suite: the
// objects it made are found by difference with what was there when it began, and removed when
// it ends, so that the next file starts from the same cluster. Files of a suite run one after
// another on one cluster (per-worker.ts), so whatever is new was made by the file that is
// ending. What a file changes of what was there before it is its own to put back.

import type { Kubectl } from '../../tools/cluster/kubectl.js';

/** Cluster-scoped kinds that an install or a test makes (RBAC, webhooks, policies, CRDs). */
const CLUSTER_KINDS = [
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'clusterroles',
  'clusterrolebindings',
  'customresourcedefinitions',
];
/** What tests make in `default`: follow Leases (--lease-namespace=default) and their Events. */
const DEFAULT_NAMESPACE_KINDS = [
  'leases.coordination.k8s.io',
  'events',
  'configmaps',
  'secrets',
  'deployments',
  'serviceaccounts',
  'roles',
  'rolebindings',
];
/** Namespaces are gone once their objects are; a namespace still there after this is stuck. */
const NAMESPACE_DELETION_TIMEOUT_MS = 120_000;

export interface ClusterState {
  readonly namespaces: ReadonlySet<string>;
  readonly clusterObjects: ReadonlySet<string>;
  readonly defaultObjects: ReadonlySet<string>;
}

export async function snapshotCluster(kubectl: Kubectl): Promise<ClusterState> {
  return {
    namespaces: await names(kubectl, ['get', 'namespaces']),
    clusterObjects: await names(kubectl, ['get', CLUSTER_KINDS.join(',')]),
    defaultObjects: await names(kubectl, [
      'get',
      '-n',
      'default',
      DEFAULT_NAMESPACE_KINDS.join(','),
    ]),
  };
}

/**
 * Removes what was made since `before`: webhook configurations first (so that no write of the
 * clean-up is sent to a webhook that is gone), then namespaces — their pods without the grace
 * period a drain would take, and waiting until each is gone, so that the next file can make
 * one of the same name — then the rest.
 */
export async function restoreCluster(kubectl: Kubectl, before: ClusterState): Promise<void> {
  const started = Date.now();
  const now = await snapshotCluster(kubectl);
  const added = (was: ReadonlySet<string>, is: ReadonlySet<string>) =>
    [...is].filter((name) => !was.has(name));
  const clusterObjects = added(before.clusterObjects, now.clusterObjects);
  const namespaces = added(before.namespaces, now.namespaces);
  const webhooks = clusterObjects.filter((name) => name.includes('webhookconfiguration'));
  await deleteObjects(kubectl, webhooks);
  await deleteNamespaces(kubectl, namespaces, before.namespaces);
  await deleteObjects(
    kubectl,
    clusterObjects.filter((name) => !webhooks.includes(name)),
  );
  await deleteObjects(kubectl, added(before.defaultObjects, now.defaultObjects), 'default');
  // What a file's clean-up costs is part of what the suite costs: said, so that it can be seen.
  console.info(
    `clean-up: ${clusterObjects.length} cluster objects and namespaces ` +
      `${namespaces.join(' ') || '(none)'} removed in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function names(kubectl: Kubectl, args: readonly string[]): Promise<Set<string>> {
  const result = await kubectl([...args, '-o', 'name']);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr.trim()}`);
  return new Set(result.stdout.split('\n').filter(Boolean));
}

async function deleteObjects(
  kubectl: Kubectl,
  objects: readonly string[],
  namespace?: string,
): Promise<void> {
  if (objects.length === 0) return;
  const result = await kubectl([
    'delete',
    ...(namespace ? ['-n', namespace] : []),
    '--ignore-not-found',
    '--wait=false',
    ...objects,
  ]);
  if (result.code !== 0)
    throw new Error(`cleaning up ${objects.join(' ')}: ${result.stderr.trim()}`);
}

async function deleteNamespaces(
  kubectl: Kubectl,
  namespaces: readonly string[],
  keep: ReadonlySet<string>,
): Promise<void> {
  if (namespaces.length === 0) return;
  await deleteWorkloadsOutside(kubectl, keep);
  await deleteObjects(kubectl, namespaces);
  const deadline = Date.now() + NAMESPACE_DELETION_TIMEOUT_MS;
  let left = namespaces;
  while (left.length > 0) {
    const present = await names(kubectl, ['get', 'namespaces']);
    left = left.filter((namespace) => present.has(namespace));
    if (left.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`namespaces still terminating after the file ended: ${left.join(' ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The Deployments, ReplicaSets and pods of every namespace but `keep`'s, in that order, in one
 * kubectl run (a run per namespace cost 16 namespaces 4–12 s of a file's clean-up). The
 * Deployments and ReplicaSets first, or the ReplicaSets make new pods in place of those
 * force-deleted, which then wait out preStop and their grace period (two Deployments in a
 * follow install) — and the namespace controller, finding pods still there, waits half their
 * grace period before it looks again. Background, without waiting: they are gone at once.
 * Orphaning them instead waits for the garbage collector to patch each pod and ReplicaSet:
 * 119 s and 167 s of two node files' clean-ups. Pods without a grace period: on a node they
 * wait out preStop and their grace period otherwise (up to 110 s).
 */
async function deleteWorkloadsOutside(kubectl: Kubectl, keep: ReadonlySet<string>): Promise<void> {
  const outside = [...keep]
    .map((namespace) => `metadata.namespace!=${namespace.replace('namespace/', '')}`)
    .join(',');
  const result = await kubectl([
    'delete',
    'deployments,replicasets,pods',
    '--all-namespaces',
    `--field-selector=${outside}`,
    '--cascade=background',
    '--grace-period=0',
    '--force',
    '--wait=false',
  ]);
  if (result.code !== 0) throw new Error(`cleaning up workloads: ${result.stderr.trim()}`);
}
