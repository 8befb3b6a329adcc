// The workload kinds confighash handles, as a table of accessors rather than
// switches spread through the code. A kind is a row: where its pod template
// sits, how its pods follow a template change (rollout-held.ts), and whether
// some objects of it keep their template elsewhere. The apps/v1 kinds are on
// by default; the others (docs/design.md §7 "Kinds") are turned on by `--kind`.

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Which fields say that a template change rolls nothing, some, or all pods at once. */
type RolloutModel =
  | 'deployment'
  | 'statefulset'
  | 'daemonset'
  | 'argo-rollout'
  | 'cloneset'
  /** A kind named by its path only: confighash cannot tell how it rolls. */
  | 'unknown';

export interface WorkloadKind extends GroupVersionKind {
  /** The API's plural resource name, as in its URL paths. */
  readonly resource: string;
  /** JSON path segments from the object's root to its pod template. */
  readonly templatePath: readonly string[];
  /** kubectl's short names (`deploy`, `sts`, `ds`). */
  readonly shortNames: readonly string[];
  readonly rollout: RolloutModel;
  /** A field that, when set, means the pod template lives in another object (Rollout `workloadRef`). */
  readonly templateElsewhere?: readonly string[];
}

const TEMPLATE = ['spec', 'template'] as const;

const DEPLOYMENT: WorkloadKind = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  templatePath: TEMPLATE,
  shortNames: ['deploy'],
  rollout: 'deployment',
};

/** The kinds handled without any `--kind`. */
export const HANDLED_KINDS: readonly WorkloadKind[] = [
  DEPLOYMENT,
  {
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    resource: 'statefulsets',
    templatePath: TEMPLATE,
    shortNames: ['sts'],
    rollout: 'statefulset',
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    resource: 'daemonsets',
    templatePath: TEMPLATE,
    shortNames: ['ds'],
    rollout: 'daemonset',
  },
];

/** Kinds of other projects that `--kind GROUP/VERSION/Kind` turns on without a path. */
export const KNOWN_KINDS: readonly WorkloadKind[] = [
  {
    group: 'argoproj.io',
    version: 'v1alpha1',
    kind: 'Rollout',
    resource: 'rollouts',
    templatePath: TEMPLATE,
    shortNames: ['ro'],
    rollout: 'argo-rollout',
    templateElsewhere: ['spec', 'workloadRef'],
  },
  {
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    kind: 'CloneSet',
    resource: 'clonesets',
    templatePath: TEMPLATE,
    shortNames: ['clone'],
    rollout: 'cloneset',
  },
  {
    group: 'apps.kruise.io',
    version: 'v1beta1',
    kind: 'StatefulSet',
    resource: 'statefulsets',
    templatePath: TEMPLATE,
    shortNames: ['asts'],
    rollout: 'statefulset',
  },
];

/**
 * What the CLI (plan, explain) reads: every kind confighash knows, since it cannot
 * see the webhook's flags. Listing a kind the cluster lacks finds nothing (404).
 */
export const EVERY_KNOWN_KIND: readonly WorkloadKind[] = [...HANDLED_KINDS, ...KNOWN_KINDS];

function sameKind(a: GroupVersionKind, b: GroupVersionKind): boolean {
  return a.group === b.group && a.version === b.version && a.kind === b.kind;
}

export function findWorkloadKind(
  gvk: GroupVersionKind,
  kinds: readonly WorkloadKind[] = HANDLED_KINDS,
): WorkloadKind | undefined {
  return kinds.find((k) => sameKind(k, gvk));
}

/**
 * The kind a user names as kubectl spells it: `deploy`, `deployment`, `deployments`,
 * `Deployment`, or any of them with the group (`deployments.apps`). A bare name
 * prefers the apps/v1 kinds (`statefulset` is apps/v1, `statefulsets.apps.kruise.io` is Kruise's).
 */
export function findWorkloadKindByName(
  text: string,
  kinds: readonly WorkloadKind[] = HANDLED_KINDS,
): WorkloadKind | undefined {
  const lower = text.toLowerCase();
  const qualified = kinds.find((kind) => namesOf(kind).some((n) => lower === `${n}.${kind.group}`));
  return qualified ?? kinds.find((kind) => namesOf(kind).includes(lower));
}

function namesOf(kind: WorkloadKind): string[] {
  return [kind.kind.toLowerCase(), kind.resource, ...kind.shortNames];
}

// --- --kind ------------------------------------------------------------------------

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^v\d+((alpha|beta)\d+)?$/;
const KIND_NAME = /^[A-Z][A-Za-z0-9]*$/;
const RESOURCE = /^[a-z][a-z0-9]*$/;
const FIELD = /^[A-Za-z][A-Za-z0-9]*$/;

export const KIND_OPTION_FORMAT = 'GROUP/VERSION/Kind[/resource][=path.to.template]';

type KindParse =
  | { readonly ok: true; readonly kind: WorkloadKind }
  | { readonly ok: false; readonly error: string };

/**
 * One `--kind` value: a known kind by `GROUP/VERSION/Kind` (argoproj.io/v1alpha1/Rollout),
 * or any kind with the path of its pod template (`example.com/v1/Worker=spec.pod.template`;
 * the resource defaults to the lowercased kind plus `s`).
 */
export function parseKindOption(text: string): KindParse {
  const [name = '', path, ...extra] = text.trim().split('=');
  const [group = '', version = '', kind = '', resource, ...more] = name.split('/');
  const bad = (why: string): KindParse => ({
    ok: false,
    error: `--kind ${text}: ${why} (expected ${KIND_OPTION_FORMAT})`,
  });
  if (extra.length > 0 || more.length > 0) return bad('too many parts');
  if (!DNS_SUBDOMAIN.test(group))
    return bad(`'${group}' is not an API group (core kinds have none to name)`);
  if (!VERSION.test(version)) return bad(`'${version}' is not an API version`);
  if (!KIND_NAME.test(kind)) return bad(`'${kind}' is not a Kind`);
  if (resource !== undefined && !RESOURCE.test(resource))
    return bad(`'${resource}' is not a resource name`);
  const gvk = { group, version, kind };
  const known = findWorkloadKind(gvk, EVERY_KNOWN_KIND);
  if (path === undefined) {
    return known
      ? { ok: true, kind: known }
      : bad(`${kind} is not a kind confighash knows; give the path of its pod template`);
  }
  const templatePath = path.split('.');
  if (!templatePath.every((field) => FIELD.test(field)))
    return bad(`'${path}' is not a field path`);
  return {
    ok: true,
    kind: {
      ...gvk,
      resource: resource ?? known?.resource ?? `${kind.toLowerCase()}s`,
      templatePath,
      shortNames: known?.shortNames ?? [],
      rollout: known?.rollout ?? 'unknown',
      ...(known?.templateElsewhere ? { templateElsewhere: known.templateElsewhere } : {}),
    },
  };
}

/** `base` (the default kinds) plus those of `--kind` values; a later value for the same kind wins. */
export function withKinds(
  extra: readonly WorkloadKind[],
  base: readonly WorkloadKind[] = HANDLED_KINDS,
): readonly WorkloadKind[] {
  const kinds = [...base];
  for (const kind of extra) {
    const index = kinds.findIndex((k) => sameKind(k, kind));
    if (index >= 0) kinds[index] = kind;
    else kinds.push(kind);
  }
  return kinds;
}

/**
 * `deployment/web`, as kubectl names it; other groups' kinds with their group
 * (`rollout.argoproj.io/web`), so that Kruise's StatefulSet is not read as apps/v1's.
 */
export function formatWorkload(kind: Pick<WorkloadKind, 'kind' | 'group'>, name: string): string {
  const qualified = kind.group === 'apps' ? '' : `.${kind.group}`;
  return `${kind.kind.toLowerCase()}${qualified}/${name}`;
}
