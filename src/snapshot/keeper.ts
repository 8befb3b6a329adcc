// The keeper's decision for one namespace at one resync (docs/design.md §13, "Ownership and
// collection"): each snapshot is owned by exactly what names it now — the revisions whose
// templates name it and the workloads whose current templates do — and one that nothing names
// loses its owners, then, seen so at two resyncs in a row and older than the grace, is deleted.
// Every write the actions become is conditional on the resourceVersion listed. Pure.

import type { KeptSnapshot, Namer, OwnerReference } from './ports.js';
import { isSnapshotNameOf } from './snapshot.js';

export interface KeeperInput {
  /** The namespace's snapshots, listed before its namers (a namer stored later made sure of its snapshots first). */
  readonly snapshots: readonly KeptSnapshot[];
  readonly revisions: readonly Namer[];
  /** The workloads, each with what its current template names. */
  readonly workloads: readonly Namer[];
  readonly nowMs: number;
  readonly graceMs: number;
  /** The uids of the snapshots the previous resync found named by nothing and owned by nobody. */
  readonly unnamedBefore: ReadonlySet<string>;
}

export type KeeperAction =
  /** Its owners become exactly these: everything that names it. */
  | {
      readonly action: 'set-owners';
      readonly snapshot: KeptSnapshot;
      readonly owners: readonly OwnerReference[];
    }
  /** Nothing names it: its owners go, the first step to its collection. */
  | { readonly action: 'drop-owners'; readonly snapshot: KeptSnapshot }
  | { readonly action: 'delete'; readonly snapshot: KeptSnapshot };

export type KeeperActionName = KeeperAction['action'];

export interface KeeperDecision {
  readonly actions: readonly KeeperAction[];
  /** The uids of the snapshots found named by nothing and owned by nobody: the next resync's `unnamedBefore`. */
  readonly unnamed: ReadonlySet<string>;
}

export function decideKeeping(input: KeeperInput): KeeperDecision {
  const namers = namersByName([...input.revisions, ...input.workloads]);
  const actions: KeeperAction[] = [];
  const unnamed = new Set<string>();
  for (const snapshot of input.snapshots) {
    if (snapshot.deleting || !isSnapshotNameOf(snapshot.name, snapshot.snapshotOf)) continue;
    const wanted = namers.get(snapshot.name) ?? [];
    if (wanted.length > 0) {
      if (!sameUids(wanted, snapshot.owners)) {
        actions.push({ action: 'set-owners', snapshot, owners: wanted });
      }
    } else if (snapshot.owners.length > 0) {
      actions.push({ action: 'drop-owners', snapshot });
    } else {
      unnamed.add(snapshot.uid);
      if (input.unnamedBefore.has(snapshot.uid) && isPastGrace(snapshot, input)) {
        actions.push({ action: 'delete', snapshot });
      }
    }
  }
  return { actions, unnamed };
}

/** ConfigMap name → the owners that name it, each once, in the order given. */
function namersByName(namers: readonly Namer[]): Map<string, OwnerReference[]> {
  const byName = new Map<string, OwnerReference[]>();
  for (const { owner, names } of namers) {
    for (const name of new Set(names)) {
      const owners = byName.get(name) ?? [];
      if (!owners.some(({ uid }) => uid === owner.uid)) owners.push(owner);
      byName.set(name, owners);
    }
  }
  return byName;
}

function sameUids(a: readonly OwnerReference[], b: readonly OwnerReference[]): boolean {
  const left = new Set(a.map(({ uid }) => uid));
  const right = new Set(b.map(({ uid }) => uid));
  return left.size === right.size && [...left].every((uid) => right.has(uid));
}

/** At least the grace old; a creationTimestamp that cannot be read never is. */
function isPastGrace(snapshot: KeptSnapshot, { nowMs, graceMs }: KeeperInput): boolean {
  return nowMs - snapshot.createdMs >= graceMs;
}
