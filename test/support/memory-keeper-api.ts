// An in-memory KeeperApi for unit tests of the keeper's loop: snapshots whose writes are
// conditional on their resourceVersion as the API's are, what names them per namespace, every
// call recorded, and failures to inject. Integration rows use the API adapter.

import type {
  KeeperApi,
  KeeperWrite,
  KeptSnapshot,
  Namer,
  OwnerReference,
} from '../../src/snapshot/index.js';

export class MemoryKeeperApi implements KeeperApi {
  readonly snapshots = new Map<string, KeptSnapshot>();
  readonly namers = new Map<string, { revisions: Namer[]; workloads: Namer[] }>();
  readonly calls: string[] = [];
  /** listSnapshots throws this, once set. */
  listFailure: Error | undefined;
  /** listNamers of these namespaces throws. */
  readonly unreadable = new Set<string>();
  /** When set, each listSnapshots waits for it (to hold a resync in flight). */
  gate: Promise<void> | undefined;
  #version = 100;

  async listSnapshots(): Promise<KeptSnapshot[]> {
    this.calls.push('list snapshots');
    await this.gate;
    if (this.listFailure) throw this.listFailure;
    return [...this.snapshots.values()];
  }

  async listNamers(namespace: string) {
    this.calls.push(`list ${namespace}`);
    if (this.unreadable.has(namespace)) throw new Error(`cannot list ReplicaSets in ${namespace}`);
    return this.namers.get(namespace) ?? { revisions: [], workloads: [] };
  }

  async setOwners(snapshot: KeptSnapshot, owners: readonly OwnerReference[]): Promise<KeeperWrite> {
    this.calls.push(`owners ${snapshot.name} [${owners.map(({ name }) => name).join(',')}]`);
    const stored = this.#current(snapshot);
    if (stored.status !== 'found') return stored;
    this.put({ ...stored.snapshot, owners: [...owners] });
    return { status: 'done' };
  }

  async delete(snapshot: KeptSnapshot): Promise<KeeperWrite> {
    this.calls.push(`delete ${snapshot.name}`);
    const stored = this.#current(snapshot);
    if (stored.status !== 'found') return stored;
    this.snapshots.delete(`${snapshot.namespace}/${snapshot.name}`);
    return { status: 'done' };
  }

  /** Stores a snapshot at a new resourceVersion, as a write would. */
  put(snapshot: Omit<KeptSnapshot, 'resourceVersion'>): KeptSnapshot {
    const stored = { ...snapshot, resourceVersion: String(this.#version++) };
    this.snapshots.set(`${snapshot.namespace}/${snapshot.name}`, stored);
    return stored;
  }

  #current(
    snapshot: KeptSnapshot,
  ): { status: 'found'; snapshot: KeptSnapshot } | { status: 'gone' } | { status: 'conflict' } {
    const stored = this.snapshots.get(`${snapshot.namespace}/${snapshot.name}`);
    if (!stored) return { status: 'gone' };
    if (stored.resourceVersion !== snapshot.resourceVersion) return { status: 'conflict' };
    return { status: 'found', snapshot: stored };
  }
}
