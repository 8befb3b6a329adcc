// The keeper's decision (docs/design.md §13, "Ownership and collection"), read as a spec: a
// snapshot is owned by exactly what names it — the revisions whose templates name it and the
// workloads whose current templates do —, one nothing names loses its owners, and is deleted
// only once found named by nothing and owned by nobody at two resyncs in a row, past the grace.

import { describe, expect, it } from 'vitest';
import {
  decideKeeping,
  type KeeperInput,
  type KeptSnapshot,
  type Namer,
  type OwnerReference,
} from '../../../src/snapshot/index.js';

const NOW = Date.parse('2026-12-10T12:00:00Z');
const MINUTE = 60_000;
const GRACE = 10 * MINUTE;
const SNAP = 'app-snap-0123456789abcdef';
const OLDER = 'app-snap-fedcba9876543210';

const deployment = owner('apps/v1', 'Deployment', 'web', 'uid-web');
const api = owner('apps/v1', 'Deployment', 'api', 'uid-api');
const statefulSet = owner('apps/v1', 'StatefulSet', 'db', 'uid-db');
const rs1 = owner('apps/v1', 'ReplicaSet', 'web-1', 'uid-rs1');
const rs2 = owner('apps/v1', 'ReplicaSet', 'web-2', 'uid-rs2');
const apiRs = owner('apps/v1', 'ReplicaSet', 'api-1', 'uid-api-rs');
const cr1 = owner('apps/v1', 'ControllerRevision', 'db-1', 'uid-cr1');

function owner(apiVersion: string, kind: string, name: string, uid: string): OwnerReference {
  return { apiVersion, kind, name, uid };
}

function snapshot(options: Partial<KeptSnapshot> = {}): KeptSnapshot {
  return {
    namespace: 'team',
    name: SNAP,
    uid: `uid-${options.name ?? SNAP}`,
    resourceVersion: '41',
    createdMs: NOW - 60 * MINUTE,
    owners: [],
    snapshotOf: 'configmap/app',
    deleting: false,
    ...options,
  };
}

function names(ref: OwnerReference, ...named: string[]): Namer {
  return { owner: ref, names: named };
}

/** What a row expects: the actions by snapshot name (owners by name), and what is remembered. */
interface Decided {
  readonly actions: readonly {
    action: string;
    name: string;
    resourceVersion: string;
    owners?: string[];
  }[];
  readonly unnamed: readonly string[];
}

function decide(input: Partial<KeeperInput>): Decided {
  const { actions, unnamed } = decideKeeping({
    snapshots: [snapshot()],
    revisions: [],
    workloads: [],
    nowMs: NOW,
    graceMs: GRACE,
    unnamedBefore: new Set(),
    ...input,
  });
  return {
    actions: actions.map((action) => ({
      action: action.action,
      name: action.snapshot.name,
      resourceVersion: action.snapshot.resourceVersion,
      ...('owners' in action ? { owners: action.owners.map(({ name }) => name) } : {}),
    })),
    unnamed: [...unnamed],
  };
}

const setOwners = (...owners: string[]) => ({
  actions: [{ action: 'set-owners', name: SNAP, resourceVersion: '41', owners }],
  unnamed: [],
});
const dropOwners = {
  actions: [{ action: 'drop-owners', name: SNAP, resourceVersion: '41' }],
  unnamed: [],
};
const nothing = { actions: [], unnamed: [] };
const seenUnnamed = { actions: [], unnamed: [`uid-${SNAP}`] };
const deleted = {
  actions: [{ action: 'delete', name: SNAP, resourceVersion: '41' }],
  unnamed: [`uid-${SNAP}`],
};

describe('decideKeeping', () => {
  it.each<[string, Partial<KeeperInput>, Decided]>([
    // Owners: exactly what names it.
    [
      'CREATE: no owners yet, named by the new ReplicaSet and the workload: both become owners',
      { revisions: [names(rs1, SNAP)], workloads: [names(deployment, SNAP)] },
      setOwners('web-1', 'web'),
    ],
    [
      'owned by the workload the review added, now also named by its ReplicaSet: the ReplicaSet added',
      {
        snapshots: [snapshot({ owners: [deployment] })],
        revisions: [names(rs1, SNAP)],
        workloads: [names(deployment, SNAP)],
      },
      setOwners('web-1', 'web'),
    ],
    [
      'owned by exactly what names it, in another order: nothing to write',
      {
        snapshots: [snapshot({ owners: [deployment, rs1] })],
        revisions: [names(rs1, SNAP)],
        workloads: [names(deployment, SNAP)],
      },
      nothing,
    ],
    [
      'paused Deployment: named only by the workload’s template, no ReplicaSet yet: the workload owns it',
      { workloads: [names(deployment, SNAP)] },
      setOwners('web'),
    ],
    [
      'rolled forward: the workload’s current template names a newer snapshot, an old ReplicaSet this one: the workload goes',
      {
        snapshots: [snapshot({ owners: [rs1, deployment] })],
        revisions: [names(rs1, SNAP), names(rs2, OLDER)],
        workloads: [names(deployment, OLDER)],
      },
      setOwners('web-1'),
    ],
    [
      'its revision pruned (owner gone) while the workload’s current template still names it: the workload alone',
      {
        snapshots: [snapshot({ owners: [rs1, deployment] })],
        workloads: [names(deployment, SNAP)],
      },
      setOwners('web'),
    ],
    [
      'two workloads share it: both, and each one’s revision',
      {
        snapshots: [snapshot({ owners: [deployment] })],
        revisions: [names(rs1, SNAP), names(apiRs, SNAP)],
        workloads: [names(deployment, SNAP), names(api, SNAP)],
      },
      setOwners('web-1', 'api-1', 'web', 'api'),
    ],
    [
      'a StatefulSet: its ControllerRevision and itself',
      { revisions: [names(cr1, SNAP)], workloads: [names(statefulSet, SNAP)] },
      setOwners('db-1', 'db'),
    ],
    [
      'a template that names it twice counts its owner once',
      { revisions: [names(rs1, SNAP, SNAP)], workloads: [names(deployment, 'app', SNAP)] },
      setOwners('web-1', 'web'),
    ],
    [
      'an owner that does not name it (a hand-added one) is replaced, never kept beside',
      {
        snapshots: [snapshot({ owners: [owner('v1', 'Pod', 'x', 'uid-x')] })],
        revisions: [names(rs1, SNAP)],
      },
      setOwners('web-1'),
    ],
    // Collection: owners dropped first, deleted at a later resync.
    [
      'named by nothing, owned: its owners are dropped (first step), whatever its age',
      { snapshots: [snapshot({ owners: [rs1], createdMs: NOW })] },
      dropOwners,
    ],
    ['named by nothing, no owners, first seen so: remembered, not deleted', {}, seenUnnamed],
    [
      'named by nothing, no owners, seen so at the previous resync, past the grace: deleted',
      { unnamedBefore: new Set([`uid-${SNAP}`]) },
      deleted,
    ],
    [
      'exactly the grace old: deleted',
      {
        snapshots: [snapshot({ createdMs: NOW - GRACE })],
        unnamedBefore: new Set([`uid-${SNAP}`]),
      },
      deleted,
    ],
    [
      'younger than the grace: remembered, kept',
      {
        snapshots: [snapshot({ createdMs: NOW - GRACE + 1 })],
        unnamedBefore: new Set([`uid-${SNAP}`]),
      },
      seenUnnamed,
    ],
    [
      'a creationTimestamp that cannot be read: never old enough',
      { snapshots: [snapshot({ createdMs: Number.NaN })], unnamedBefore: new Set([`uid-${SNAP}`]) },
      seenUnnamed,
    ],
    [
      'the previous resync saw another object of the same name (another uid): remembered, kept',
      { unnamedBefore: new Set(['uid-of-a-snapshot-deleted-and-made-again']) },
      seenUnnamed,
    ],
    [
      'seen unnamed before, named again now (a write named it): owners set, not deleted, forgotten',
      { unnamedBefore: new Set([`uid-${SNAP}`]), workloads: [names(deployment, SNAP)] },
      setOwners('web'),
    ],
    // What is never touched.
    [
      'being deleted (a deletionTimestamp): left to the garbage collector',
      { snapshots: [snapshot({ deleting: true })], unnamedBefore: new Set([`uid-${SNAP}`]) },
      nothing,
    ],
    [
      'labelled a snapshot but not named after its snapshot-of source: never touched',
      {
        snapshots: [snapshot({ snapshotOf: 'configmap/other' })],
        unnamedBefore: new Set([`uid-${SNAP}`]),
      },
      nothing,
    ],
    [
      'labelled a snapshot with no snapshot-of: never touched',
      { snapshots: [snapshot({ snapshotOf: undefined, owners: [rs1] })] },
      nothing,
    ],
    [
      'a snapshot-of a Secret: never touched',
      { snapshots: [snapshot({ snapshotOf: 'secret/app', owners: [rs1] })] },
      nothing,
    ],
  ])('%s', (_name, input, expected) => {
    expect(decide(input)).toEqual(expected);
  });

  it('a delete only at the second resync: drop, remember, delete, as the resyncs go', () => {
    const input = { revisions: [], workloads: [], nowMs: NOW, graceMs: 0 };
    const owned = snapshot({ owners: [rs1], resourceVersion: '41' });
    const first = decideKeeping({ ...input, snapshots: [owned], unnamedBefore: new Set() });
    expect(first.actions.map(({ action }) => action)).toEqual(['drop-owners']);
    const ownerless = snapshot({ resourceVersion: '42' });
    const second = decideKeeping({
      ...input,
      snapshots: [ownerless],
      unnamedBefore: first.unnamed,
    });
    expect(second.actions).toEqual([]);
    const third = decideKeeping({
      ...input,
      snapshots: [ownerless],
      unnamedBefore: second.unnamed,
    });
    expect(third.actions).toEqual([{ action: 'delete', snapshot: ownerless }]);
  });

  it('never leaves a snapshot something names without that something as owner', () => {
    // Every mix of namers (two revisions, two workloads) against every mix of owners found.
    const everyOwners = [[], [rs1], [deployment, rs2], [rs1, rs2, deployment, api]];
    for (let mask = 1; mask < 16; mask++) {
      const naming = [rs1, rs2, deployment, api].filter((_, i) => mask & (1 << i));
      const revisions = naming
        .filter(({ kind }) => kind === 'ReplicaSet')
        .map((r) => names(r, SNAP));
      const workloads = naming
        .filter(({ kind }) => kind !== 'ReplicaSet')
        .map((w) => names(w, SNAP));
      for (const owners of everyOwners) {
        const { actions } = decideKeeping({
          snapshots: [snapshot({ owners })],
          revisions,
          workloads,
          nowMs: NOW,
          graceMs: 0,
          unnamedBefore: new Set([`uid-${SNAP}`]),
        });
        const set = actions.find((action) => action.action === 'set-owners');
        const after = set && 'owners' in set ? set.owners : owners;
        expect(actions.every(({ action }) => action === 'set-owners')).toBe(true);
        expect(after.map(({ uid }) => uid).sort()).toEqual(naming.map(({ uid }) => uid).sort());
      }
    }
  });
});
