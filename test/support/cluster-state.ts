// What a test file leaves in a cluster it shares with the other files of its suite: the
// objects it made are found by difference with what was there when it began, and removed when
// it ends, so that the next file starts from the same cluster (once the namespaces it deleted
// are gone: the next file waits for that before it begins). Files of a suite run one after
// another on one cluster (per-worker.ts), so whatever is new was made by the file that is
// ending. What a file changes of what was there before it is its own to put back.

import type { Kubectl } from '../../tools/cluster/kubectl.js';
import { poll } from '../../tools/lib/poll.js';
import { type AdminTls, adminRequest, adminTls, listNames } from './admin-api.js';
import { restAfterTry } from './poll.js';

/**
 * A kind the clean-up reads: its API collection, and the name kubectl gives its objects
 * (`-o name`), which `kubectl delete` takes back.
 */
interface Kind {
  readonly collection: string;
  readonly kubectlName: string;
}

const kind = (collection: string, kubectlName: string): Kind => ({ collection, kubectlName });
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const IN_DEFAULT = 'namespaces/default';

const NAMESPACES = kind('/api/v1/namespaces', 'namespace');
/** Cluster-scoped kinds that an install or a test makes (RBAC, webhooks, policies, CRDs). */
const CLUSTER_KINDS = [
  kind(
    `${ADMISSION}/mutatingwebhookconfigurations`,
    'mutatingwebhookconfiguration.admissionregistration.k8s.io',
  ),
  kind(
    `${ADMISSION}/validatingwebhookconfigurations`,
    'validatingwebhookconfiguration.admissionregistration.k8s.io',
  ),
  kind(
    `${ADMISSION}/validatingadmissionpolicies`,
    'validatingadmissionpolicy.admissionregistration.k8s.io',
  ),
  kind(
    `${ADMISSION}/validatingadmissionpolicybindings`,
    'validatingadmissionpolicybinding.admissionregistration.k8s.io',
  ),
  kind(`${RBAC}/clusterroles`, 'clusterrole.rbac.authorization.k8s.io'),
  kind(`${RBAC}/clusterrolebindings`, 'clusterrolebinding.rbac.authorization.k8s.io'),
  kind(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    'customresourcedefinition.apiextensions.k8s.io',
  ),
];
/** What tests make in `default`: follow Leases (--lease-namespace=default) and their Events. */
const DEFAULT_NAMESPACE_KINDS = [
  kind(`/apis/coordination.k8s.io/v1/${IN_DEFAULT}/leases`, 'lease.coordination.k8s.io'),
  kind(`/api/v1/${IN_DEFAULT}/events`, 'event'),
  kind(`/api/v1/${IN_DEFAULT}/configmaps`, 'configmap'),
  kind(`/api/v1/${IN_DEFAULT}/secrets`, 'secret'),
  kind(`/apis/apps/v1/${IN_DEFAULT}/deployments`, 'deployment.apps'),
  kind(`/api/v1/${IN_DEFAULT}/serviceaccounts`, 'serviceaccount'),
  kind(`${RBAC}/${IN_DEFAULT}/roles`, 'role.rbac.authorization.k8s.io'),
  kind(`${RBAC}/${IN_DEFAULT}/rolebindings`, 'rolebinding.rbac.authorization.k8s.io'),
];
/** Namespaces are gone once their objects are; a namespace still there after this is stuck. */
const NAMESPACE_DELETION_TIMEOUT_MS = 120_000;
const TERMINATING = kind(
  `${NAMESPACES.collection}?fieldSelector=status.phase%3DTerminating`,
  NAMESPACES.kubectlName,
);

export interface ClusterState {
  readonly namespaces: ReadonlySet<string>;
  readonly clusterObjects: ReadonlySet<string>;
  readonly defaultObjects: ReadonlySet<string>;
}

/**
 * What is in the cluster now, once the namespaces a file before deleted are gone: a file may
 * make one of the same name.
 */
export async function snapshotCluster(kubeconfig: string): Promise<ClusterState> {
  const admin = await adminTls(kubeconfig);
  await waitForTerminatingNamespaces(admin);
  return readCluster(admin);
}

/**
 * What is in the cluster now, terminating namespaces included. Read in this process, every kind
 * side by side: a file's start and end each take a snapshot, and a kubectl run costs a
 * quarter of a second of CPU, more on a loaded machine.
 */
async function readCluster(admin: AdminTls): Promise<ClusterState> {
  const all = (kinds: readonly Kind[]) =>
    Promise.all(kinds.map((listed) => names(admin, listed))).then((found) => new Set(found.flat()));
  const [namespaces, clusterObjects, defaultObjects] = await Promise.all([
    all([NAMESPACES]),
    all(CLUSTER_KINDS),
    all(DEFAULT_NAMESPACE_KINDS),
  ]);
  return { namespaces, clusterObjects, defaultObjects };
}

/**
 * Removes what was made since `before`: webhook configurations first (so that no write of the
 * clean-up is sent to a webhook that is gone), then, side by side, namespaces — their pods
 * without the grace period a drain would take — and the rest. It does not wait for the
 * namespaces to go: the namespace controller looks at a deleted namespace only after a fixed
 * 5 s (namespaceDeletionGracePeriod, kube-controller-manager), which the next file's start,
 * its imports and hooks, takes anyway; it waits then (snapshotCluster), and the last file not
 * at all. Those 5 s count from the namespaces' deletion, so it comes before anything else
 * that can wait.
 */
export async function restoreCluster(
  kubectl: Kubectl,
  before: ClusterState,
  kubeconfig: string,
): Promise<void> {
  const started = Date.now();
  const admin = await adminTls(kubeconfig);
  // Not waiting for namespaces the file itself deleted (an uninstall): their pods may wait out
  // preStop and their grace period, and the clean-up below deletes those pods at once.
  const now = await readCluster(admin);
  const added = (was: ReadonlySet<string>, is: ReadonlySet<string>) =>
    [...is].filter((name) => !was.has(name));
  const clusterObjects = added(before.clusterObjects, now.clusterObjects);
  const namespaces = added(before.namespaces, now.namespaces);
  const webhooks = clusterObjects.filter((name) => name.includes('webhookconfiguration'));
  // A CRD is gone only once its objects are; the next file may make it again, which a
  // terminating CRD refuses ("create not allowed while custom resource definition is
  // terminating"): waited for, beside the rest.
  const crds = clusterObjects.filter((name) => name.includes('customresourcedefinition'));
  await deleteObjects(kubectl, webhooks);
  await Promise.all([
    deleteNamespaces(kubectl, namespaces, admin),
    deleteObjects(
      kubectl,
      clusterObjects.filter((name) => !webhooks.includes(name) && !crds.includes(name)),
    ),
    deleteObjects(kubectl, crds, undefined, true),
    deleteObjects(kubectl, added(before.defaultObjects, now.defaultObjects), 'default'),
  ]);
  // What a file's clean-up costs is part of what the suite costs: said, so that it can be seen.
  console.info(
    `clean-up: ${clusterObjects.length} cluster objects and namespaces ` +
      `${namespaces.join(' ') || '(none)'} deleted in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** The objects of a kind, as kubectl names them. */
async function names(admin: AdminTls, listed: Kind): Promise<string[]> {
  return (await listNames(admin, listed.collection)).map((name) => `${listed.kubectlName}/${name}`);
}

async function deleteObjects(
  kubectl: Kubectl,
  objects: readonly string[],
  namespace?: string,
  wait = false,
): Promise<void> {
  if (objects.length === 0) return;
  const result = await kubectl([
    'delete',
    ...(namespace ? ['-n', namespace] : []),
    '--ignore-not-found',
    ...(wait ? ['--wait=true', '--timeout=120s'] : ['--wait=false']),
    ...objects,
  ]);
  if (result.code !== 0)
    throw new Error(`cleaning up ${objects.join(' ')}: ${result.stderr.trim()}`);
}

/**
 * The namespaces first, so that the namespace controller's 5 s start at once (a terminating
 * namespace takes no new object: its ReplicaSets can make no pod in place of those deleted),
 * then their workloads, which the controller finds gone when it looks.
 */
async function deleteNamespaces(
  kubectl: Kubectl,
  namespaces: readonly string[],
  admin: AdminTls,
): Promise<void> {
  if (namespaces.length === 0) return;
  await deleteObjects(kubectl, namespaces);
  await Promise.all(
    namespaces.map((namespace) => deleteWorkloads(admin, namespace.replace('namespace/', ''))),
  );
}

/** Waits until no namespace is terminating; says how long that took, when it took any time. */
async function waitForTerminatingNamespaces(admin: AdminTls): Promise<void> {
  const started = Date.now();
  let terminating: string[] = [];
  await poll(
    async () => {
      terminating = await names(admin, TERMINATING);
      return terminating.length === 0 ? true : undefined;
    },
    {
      restMs: restAfterTry,
      timeoutMs: NAMESPACE_DELETION_TIMEOUT_MS,
      timedOut: () => {
        throw new Error(
          `namespaces a file before deleted still terminating: ${terminating.join(' ')}`,
        );
      },
    },
  );
  const waited = Date.now() - started;
  if (waited > 1000) {
    console.info(`waited ${(waited / 1000).toFixed(1)} s for the namespaces of the file before`);
  }
}

/**
 * A namespace's Deployments, ReplicaSets and pods, in that order, each kind in one request (a
 * DELETE of the collection, which kubectl does not send: its `delete --all` deletes object by
 * object, 68 s for the 1,360 Deployments the node suite's load rows leave). The Deployments and
 * ReplicaSets first, or the ReplicaSets make new pods in place of those deleted, which then wait
 * out preStop and their grace period (two Deployments in a follow install) — and the namespace
 * controller, finding pods still there, waits half their grace period before it looks again.
 * Background: they are gone at once; orphaning them instead waits for the garbage collector to
 * patch each pod and ReplicaSet (119 s and 167 s of two node files' clean-ups). Pods without a
 * grace period: on a node they wait out preStop and their grace period otherwise (up to 110 s).
 */
async function deleteWorkloads(admin: AdminTls, namespace: string): Promise<void> {
  for (const collection of [
    `/apis/apps/v1/namespaces/${namespace}/deployments?propagationPolicy=Background`,
    `/apis/apps/v1/namespaces/${namespace}/replicasets?propagationPolicy=Background`,
    `/api/v1/namespaces/${namespace}/pods?gracePeriodSeconds=0`,
  ]) {
    const response = await adminRequest(admin, collection, {
      method: 'DELETE',
      timeoutMs: 120_000,
    });
    // 404: the namespace controller was first (a namespace of many objects).
    if (response.status >= 300 && response.status !== 404) {
      throw new Error(`DELETE ${collection}: ${response.status} ${response.body.slice(0, 300)}`);
    }
  }
}
