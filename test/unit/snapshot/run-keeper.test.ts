// The keeper's loop (docs/design.md §13, "Ownership and collection"): its first resync at a
// random offset within one period, then one every period, one at a time; what names a snapshot
// carried from one resync to the next; failures counted and logged, never thrown; stopped with
// the server.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../src/runtime/index.js';
import {
  type KeeperActionName,
  type KeptSnapshot,
  type OwnerReference,
  startKeeper,
} from '../../../src/snapshot/index.js';
import { MemoryKeeperApi } from '../../support/memory-keeper-api.js';

const PERIOD = 60_000;
const SNAP = 'app-snap-0123456789abcdef';
const rs1 = owner('ReplicaSet', 'web-1');
const web = owner('Deployment', 'web');

function owner(kind: string, name: string): OwnerReference {
  return { apiVersion: 'apps/v1', kind, name, uid: `uid-${name}` };
}

function snapshot(
  namespace: string,
  owners: OwnerReference[] = [],
): Omit<KeptSnapshot, 'resourceVersion'> {
  return {
    namespace,
    name: SNAP,
    uid: `uid-${namespace}-${SNAP}`,
    createdMs: 0,
    owners,
    snapshotOf: 'configmap/app',
    deleting: false,
  };
}

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function start(api: MemoryKeeperApi, options: { random?: number; graceMs?: number } = {}) {
  const lines: Line[] = [];
  const log = (level: string) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  const actions: KeeperActionName[] = [];
  const seen: number[] = [];
  const keeper = startKeeper({
    api,
    resyncMs: PERIOD,
    graceMs: options.graceMs ?? 0,
    clock: systemClock,
    random: () => options.random ?? 0,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    metrics: {
      observeKeeperAction: (action) => actions.push(action),
      observeSnapshots: (count) => seen.push(count),
    },
  });
  return { keeper, lines, actions, seen };
}

const resyncs = (api: MemoryKeeperApi) =>
  api.calls.filter((call) => call === 'list snapshots').length;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('startKeeper', () => {
  it('resyncs first at a random offset within one period, then every period', async () => {
    const api = new MemoryKeeperApi();
    const { keeper } = start(api, { random: 0.25 });
    await vi.advanceTimersByTimeAsync(PERIOD * 0.25 - 1);
    expect(resyncs(api)).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(resyncs(api)).toBe(1);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(resyncs(api)).toBe(2);
    await keeper.stop();
  });

  it('runs one resync at a time: a slow one delays the next, never overlaps it', async () => {
    const api = new MemoryKeeperApi();
    let release = () => {};
    api.gate = new Promise((resolve) => {
      release = resolve;
    });
    const { keeper } = start(api);
    await vi.advanceTimersByTimeAsync(10 * PERIOD);
    expect(resyncs(api)).toBe(1);
    api.gate = undefined;
    release();
    await vi.advanceTimersByTimeAsync(PERIOD - 1);
    expect(resyncs(api)).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(resyncs(api)).toBe(2);
    await keeper.stop();
  });

  it('owns, then drops, then deletes at the second resync after, as the resyncs go', async () => {
    const api = new MemoryKeeperApi();
    api.put(snapshot('team'));
    api.namers.set('team', { revisions: [{ owner: rs1, names: [SNAP] }], workloads: [] });
    const { keeper, actions, seen } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    expect(api.snapshots.get(`team/${SNAP}`)?.owners).toEqual([rs1]);
    api.namers.delete('team'); // the ReplicaSet pruned
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(api.snapshots.get(`team/${SNAP}`)?.owners).toEqual([]);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(api.snapshots.has(`team/${SNAP}`)).toBe(true);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(api.snapshots.has(`team/${SNAP}`)).toBe(false);
    expect(actions).toEqual(['set-owners', 'drop-owners', 'delete']);
    expect(seen).toEqual([1, 1, 1, 1]);
    await keeper.stop();
  });

  it('a namespace that cannot be read is skipped and named in one warn line; the others are kept', async () => {
    const api = new MemoryKeeperApi();
    api.put(snapshot('a'));
    api.put(snapshot('b'));
    api.unreadable.add('a');
    api.namers.set('b', { revisions: [], workloads: [{ owner: web, names: [SNAP] }] });
    const { keeper, lines } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    expect(api.snapshots.get(`b/${SNAP}`)?.owners).toEqual([web]);
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'snapshot resync incomplete; the next one retries',
        fields: {
          snapshots: 2,
          namespaces: 2,
          namespacesRead: 1,
          'set-owners': 1,
          'drop-owners': 0,
          delete: 0,
          conflicts: 0,
          failures: 1,
          firstError: 'cannot list ReplicaSets in a',
        },
      },
    ]);
    await keeper.stop();
  });

  it('a namespace unread forgets what it saw: its delete waits for two readable resyncs in a row', async () => {
    const api = new MemoryKeeperApi();
    api.put(snapshot('a'));
    const { keeper } = start(api);
    await vi.advanceTimersByTimeAsync(0); // seen unnamed
    api.unreadable.add('a');
    await vi.advanceTimersByTimeAsync(PERIOD); // unread
    api.unreadable.delete('a');
    await vi.advanceTimersByTimeAsync(PERIOD); // seen unnamed again: not yet
    expect(api.snapshots.has(`a/${SNAP}`)).toBe(true);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(api.snapshots.has(`a/${SNAP}`)).toBe(false);
    await keeper.stop();
  });

  it('never throws: a list that fails, or an adapter that throws, is a warn line and the loop goes on', async () => {
    const api = new MemoryKeeperApi();
    api.listFailure = new Error('cannot list snapshots: HTTP 403: forbidden');
    const { keeper, lines } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    api.listFailure = undefined;
    api.put(snapshot('team', [rs1]));
    api.setOwners = () => {
      throw new Error('adapter bug');
    };
    await vi.advanceTimersByTimeAsync(PERIOD);
    await vi.advanceTimersByTimeAsync(PERIOD);
    expect(lines.map(({ level, fields }) => [level, fields.firstError])).toEqual([
      ['warn', 'cannot list snapshots: HTTP 403: forbidden'],
      ['warn', 'adapter bug'],
      ['warn', 'adapter bug'],
    ]);
    await keeper.stop();
  });

  it('a write that finds the snapshot changed since listed is a conflict: counted, not a failure', async () => {
    const api = new MemoryKeeperApi();
    api.put(snapshot('team', [rs1]));
    const listSnapshots = api.listSnapshots.bind(api);
    api.listSnapshots = async () => {
      const listed = await listSnapshots();
      api.put(snapshot('team', [rs1, web])); // a review added its workload in between
      return listed;
    };
    const { keeper, lines, actions } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    expect(actions).toEqual([]);
    expect(api.snapshots.get(`team/${SNAP}`)?.owners).toEqual([rs1, web]);
    expect(lines.map(({ level, fields }) => [level, fields.conflicts, fields.failures])).toEqual([
      ['debug', 1, 0],
    ]);
    await keeper.stop();
  });

  it('stops on shutdown: a resync in flight writes nothing more, and none starts after', async () => {
    const api = new MemoryKeeperApi();
    api.put(snapshot('team', [rs1]));
    let release = () => {};
    api.gate = new Promise((resolve) => {
      release = resolve;
    });
    const { keeper, lines } = start(api);
    await vi.advanceTimersByTimeAsync(0);
    const stopped = keeper.stop();
    release();
    await stopped;
    await vi.advanceTimersByTimeAsync(10 * PERIOD);
    expect(api.calls).toEqual(['list snapshots']);
    expect(lines).toEqual([]);
  });
});
