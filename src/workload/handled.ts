// "Is this workload handled" (docs/design.md §2, §4, §6): one decision table for admission,
// follow mode, plan and explain. What a namespace is to the one asking comes first (its
// labels, or excluded whatever they say); then the rows below, asked in order, give the
// first reason a workload is left alone. Pure: the askers read the labels and annotations.

import {
  ALWAYS_EXCLUDED,
  ENABLED,
  type NamespaceMode,
  namespaceModeOf,
  WORKLOAD_OPTED_IN,
  type WorkloadsMode,
  workloadsModeOf,
} from './annotations.js';

type Labels = Readonly<Record<string, string>>;

/** Admission hashes in every opted-in namespace; follow mode follows only `follow` ones (§2). */
export type Asker = 'admission' | 'follow';

/**
 * What a namespace is to an asker: excluded (kube-system, the webhook's own, every
 * `--excluded-namespace`: never opted in whatever its labels, §4), not opted in for it, or
 * opted in with the workloads its `confighash.dev/workloads` label hands over.
 */
export type NamespaceStanding = 'excluded' | 'not-opted-in' | WorkloadsMode;

/** Why a workload is left alone: the first row of the table that applies. */
export type NotHandledReason =
  /** `confighash.dev/enabled: "false"` on the workload (§2): the webhook changes nothing on it. */
  | 'opted-out'
  | 'namespace-excluded'
  | 'namespace-not-opted-in'
  /** In a namespace labelled `confighash.dev/workloads: annotated`, not annotated `enabled: "true"`. */
  | 'not-annotated';

export type Handled =
  | { readonly handled: true }
  | { readonly handled: false; readonly reason: NotHandledReason };

/** The namespaces never opted in: ALWAYS_EXCLUDED and `extra` (the webhook's own, `--excluded-namespace`). */
export function excludedNamespaceSet(extra: readonly string[] = []): ReadonlySet<string> {
  return new Set([...ALWAYS_EXCLUDED, ...extra]);
}

/** A namespace's standing from what its labels make of it (`excluded`: it is one of the set). */
export function standingOf(
  asker: Asker,
  mode: NamespaceMode,
  workloads: WorkloadsMode,
  excluded = false,
): NamespaceStanding {
  if (excluded) return 'excluded';
  if (mode === 'none' || (asker === 'follow' && mode !== 'follow')) return 'not-opted-in';
  return workloads;
}

/** A namespace's standing from its labels, as confighash itself sees them. */
export function namespaceStandingOf(
  asker: Asker,
  name: string,
  labels: Labels | undefined,
  excluded: ReadonlySet<string>,
): NamespaceStanding {
  return standingOf(asker, namespaceModeOf(labels), workloadsModeOf(labels), excluded.has(name));
}

/** Row 1, the only one that needs nothing but the workload: admission and plan ask it before any read. */
export function isOptedOut(annotations: Labels): boolean {
  return annotations[ENABLED] === 'false';
}

/**
 * The per-workload opt-in rule (row 4): whether a workload with these annotations is handled
 * in a namespace whose workloads are `workloads`. The opt-out is row 1, a reason of its own.
 */
export function isWorkloadHandled(annotations: Labels, workloads: WorkloadsMode): boolean {
  return workloads === 'all' || annotations[ENABLED] === WORKLOAD_OPTED_IN;
}

interface Row {
  readonly reason: NotHandledReason;
  applies(annotations: Labels, namespace: NamespaceStanding): boolean;
}

/** The table, in the order its reasons are told: the workload's own word before the namespace's. */
const NOT_HANDLED: readonly Row[] = [
  { reason: 'opted-out', applies: (annotations) => isOptedOut(annotations) },
  { reason: 'namespace-excluded', applies: (_, namespace) => namespace === 'excluded' },
  { reason: 'namespace-not-opted-in', applies: (_, namespace) => namespace === 'not-opted-in' },
  {
    reason: 'not-annotated',
    applies: (annotations, namespace) =>
      namespace === 'annotated' && !isWorkloadHandled(annotations, namespace),
  },
];

const HANDLED: Handled = { handled: true };

/** Whether a workload with these annotations, in a namespace of this standing, is handled; if not, why. */
export function decideHandled(annotations: Labels, namespace: NamespaceStanding): Handled {
  const row = NOT_HANDLED.find((candidate) => candidate.applies(annotations, namespace));
  return row ? { handled: false, reason: row.reason } : HANDLED;
}
