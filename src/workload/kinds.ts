// The workload kinds confighash handles, as a table of accessors rather than
// switches spread through the code. Adding a kind (Argo Rollouts, OpenKruise
// CloneSet) is one row: any kind whose pod template sits at a known path.

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface WorkloadKind extends GroupVersionKind {
  /** The API's plural resource name, as in its URL paths. */
  readonly resource: string;
  /** JSON path segments from the object's root to its pod template. */
  readonly templatePath: readonly string[];
  /** kubectl's short names (`deploy`, `sts`, `ds`). */
  readonly shortNames: readonly string[];
}

export const HANDLED_KINDS: readonly WorkloadKind[] = [
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    resource: 'deployments',
    templatePath: ['spec', 'template'],
    shortNames: ['deploy'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    resource: 'statefulsets',
    templatePath: ['spec', 'template'],
    shortNames: ['sts'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    resource: 'daemonsets',
    templatePath: ['spec', 'template'],
    shortNames: ['ds'],
  },
];

export function findWorkloadKind(gvk: GroupVersionKind): WorkloadKind | undefined {
  return HANDLED_KINDS.find(
    (k) => k.group === gvk.group && k.version === gvk.version && k.kind === gvk.kind,
  );
}

/**
 * The kind a user names as kubectl spells it: `deploy`, `deployment`, `deployments`,
 * `Deployment`, or any of them with the group (`deployments.apps`).
 */
export function findWorkloadKindByName(text: string): WorkloadKind | undefined {
  const lower = text.toLowerCase();
  return HANDLED_KINDS.find((kind) => {
    const names = [kind.kind.toLowerCase(), kind.resource, ...kind.shortNames];
    return names.some((name) => lower === name || lower === `${name}.${kind.group}`);
  });
}
