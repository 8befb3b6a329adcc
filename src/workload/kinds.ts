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
}

export const HANDLED_KINDS: readonly WorkloadKind[] = [
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    resource: 'deployments',
    templatePath: ['spec', 'template'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    resource: 'statefulsets',
    templatePath: ['spec', 'template'],
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    resource: 'daemonsets',
    templatePath: ['spec', 'template'],
  },
];

export function findWorkloadKind(gvk: GroupVersionKind): WorkloadKind | undefined {
  return HANDLED_KINDS.find(
    (k) => k.group === gvk.group && k.version === gvk.version && k.kind === gvk.kind,
  );
}
