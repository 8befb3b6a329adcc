// The annotation names of the cluster contract (docs/design.md §2). They are API:
// never rename them casually.

export const ENABLED = 'confighash.dev/enabled';
export const INCLUDE = 'confighash.dev/include';
export const EXCLUDE = 'confighash.dev/exclude';
export const HASH = 'confighash.dev/hash';
export const SOURCES = 'confighash.dev/sources';
export const ADOPTED_HASH = 'confighash.dev/adopted-hash';
/** On the workload: the versions of the sources its hash was computed from (hashed-versions.ts). */
export const HASHED_VERSIONS = 'confighash.dev/hashed-versions';
export const ROLLOUT_WINDOW = 'confighash.dev/rollout-window';
/** `"true"`: touched first when a change of a source it reads fans out (docs/design.md §6). */
export const CANARY = 'confighash.dev/canary';
/** On a namespace: how many canaries a fan-out touches first; `"0"` turns them off. */
export const CANARIES = 'confighash.dev/canaries';
/** On a namespace: how long a canary is watched from its touch (`90s`, `5m`; docs/design.md §6). */
export const CANARY_WINDOW = 'confighash.dev/canary-window';
/**
 * On a ConfigMap or Secret: the digest of the content whose large fan-out someone approved
 * (`--follow-max-fanout`, docs/design.md §6). Metadata: writing it changes no digest.
 */
export const APPROVED_CHANGE = 'confighash.dev/approved-change';
/**
 * On a workload: `"true"` points its pod template at snapshots of the ConfigMaps it reads
 * (docs/design.md §13). On a snapshot ConfigMap, the label `"true"` that marks it one.
 */
export const SNAPSHOT = 'confighash.dev/snapshot';
/** On a workload, beside SNAPSHOT: reserved for copying Secrets too; nothing reads it yet. */
export const SNAPSHOT_SECRETS = 'confighash.dev/snapshot-secrets';
/** On a pod template: each source and the snapshot its references name (`configmap/app=app-snap-…`). */
export const SNAPSHOTS = 'confighash.dev/snapshots';
/** On a snapshot: the source it copies, `configmap/NAME`. */
export const SNAPSHOT_OF = 'confighash.dev/snapshot-of';
/** `"true"`: the app reloads its mounted files; only config a running pod cannot see change counts. */
export const LIVE_RELOAD = 'confighash.dev/live-reload';

/** The namespace label that opts a namespace in, and its values (docs/design.md §2). */
export const NAMESPACE_LABEL = 'confighash.dev/enabled';
export const NAMESPACE_MODE = {
  /** Admission only. */
  admission: 'true',
  /** Admission and follow mode (docs/design.md §6). */
  follow: 'follow',
} as const;

/**
 * The namespace label, beside NAMESPACE_LABEL, that opts workloads in one at a time
 * (docs/design.md §2): with `annotated`, only workloads annotated `confighash.dev/enabled:
 * "true"` are handled there; any other value, or none, handles every workload not opted out.
 */
const WORKLOADS_LABEL = 'confighash.dev/workloads';
const WORKLOADS_ANNOTATED = 'annotated';
/** The workload annotation value that opts a workload in, in an `annotated` namespace. */
export const WORKLOAD_OPTED_IN = 'true';

/** The label selector of every opted-in namespace (admission's namespace check). */
export const OPTED_IN_NAMESPACE_SELECTOR = `${NAMESPACE_LABEL} in (${NAMESPACE_MODE.admission},${NAMESPACE_MODE.follow})`;

/** The label selector of follow namespaces. */
export const FOLLOW_NAMESPACE_SELECTOR = `${NAMESPACE_LABEL}=${NAMESPACE_MODE.follow}`;

/** Never opted in, whatever their labels (docs/design.md §7): neither hashed in nor followed. */
export const ALWAYS_EXCLUDED = ['kube-system'] as const;

/** kubectl's record of the last client-side apply, on the workload's own metadata. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** `none` | `true` | `follow`: what a namespace's labels make of it. */
export type NamespaceMode = 'none' | 'true' | 'follow';

export function namespaceModeOf(
  labels: Readonly<Record<string, string>> | undefined,
): NamespaceMode {
  const value = labels?.[NAMESPACE_LABEL];
  if (value === NAMESPACE_MODE.admission) return 'true';
  if (value === NAMESPACE_MODE.follow) return 'follow';
  return 'none';
}

/** `all` | `annotated`: which workloads an opted-in namespace's labels hand to confighash. */
export type WorkloadsMode = 'all' | 'annotated';

export function workloadsModeOf(
  labels: Readonly<Record<string, string>> | undefined,
): WorkloadsMode {
  return labels?.[WORKLOADS_LABEL] === WORKLOADS_ANNOTATED ? 'annotated' : 'all';
}

/** Why a workload the rule leaves out is not handled: the admission skip, plan and explain say it. */
export function notAnnotatedReason(namespace: string): string {
  return `namespace ${namespace} handles annotated workloads only; this one is not annotated ${ENABLED}: "${WORKLOAD_OPTED_IN}"`;
}
