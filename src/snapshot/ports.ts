// The ports snapshots are made and kept through (adapters: src/kube/snapshot-store.ts,
// src/kube/snapshot-keeper-api.ts; in memory: test/support/memory-snapshots.ts,
// test/support/memory-keeper-api.ts). Writes' outcomes are values, never exceptions.

import type { SourceContent } from '../hash/index.js';
import type { JsonObject } from '../workload/index.js';

/** Who keeps a snapshot alive (docs/design.md §13): a workload or one of its revisions. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

export type FoundSnapshot =
  | {
      readonly status: 'found';
      readonly object: JsonObject;
      readonly content: SourceContent;
      readonly resourceVersion: string;
      /** The uids of its owners. */
      readonly owners: readonly string[];
    }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly detail: string };

export type Written =
  | { readonly status: 'done' }
  | { readonly status: 'failed'; readonly detail: string };

export interface SnapshotStore {
  read(namespace: string, name: string, signal: AbortSignal): Promise<FoundSnapshot>;
  /** `exists`: the name is taken (409), by whatever object. */
  create(body: JsonObject, signal: AbortSignal): Promise<Written | { readonly status: 'exists' }>;
  /** Adds `owner` to the snapshot as it was read, if it is still at that resourceVersion. */
  addOwner(
    snapshot: { readonly namespace: string; readonly name: string },
    read: Extract<FoundSnapshot, { status: 'found' }>,
    owner: OwnerReference,
    signal: AbortSignal,
  ): Promise<Written>;
}

/** A snapshot as the keeper lists it: its metadata only. */
export interface KeptSnapshot {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** creationTimestamp in ms since the epoch; NaN when it cannot be read. */
  readonly createdMs: number;
  readonly owners: readonly OwnerReference[];
  /** Its `confighash.dev/snapshot-of` annotation. */
  readonly snapshotOf: string | undefined;
  /** It has a deletionTimestamp: the garbage collector has it already. */
  readonly deleting: boolean;
}

/** A revision or a workload, as its owner reference, and the ConfigMaps its pod template names. */
export interface Namer {
  readonly owner: OwnerReference;
  readonly names: readonly string[];
}

/** What the API answered to a keeper's write conditional on a resourceVersion. */
export type KeeperWrite =
  | { readonly status: 'done' }
  /** Changed since it was listed (another replica, a review adding an owner): the next resync sees it. */
  | { readonly status: 'conflict' }
  /** Deleted since it was listed. */
  | { readonly status: 'gone' }
  | { readonly status: 'failed'; readonly detail: string };

/** What the keeper reads and writes (docs/design.md §13, "Ownership and collection"). */
export interface KeeperApi {
  /** Every snapshot in the cluster (by its label); throws when they cannot be listed. */
  listSnapshots(signal: AbortSignal): Promise<KeptSnapshot[]>;
  /**
   * The revisions (ReplicaSets, ControllerRevisions) of `namespace`, and its workloads of the
   * handled kinds with what their current templates name; throws when any cannot be listed.
   */
  listNamers(
    namespace: string,
    signal: AbortSignal,
  ): Promise<{ readonly revisions: readonly Namer[]; readonly workloads: readonly Namer[] }>;
  /** Makes `owners` the snapshot's owners (none: removes them), if it is still as listed. */
  setOwners(
    snapshot: KeptSnapshot,
    owners: readonly OwnerReference[],
    signal: AbortSignal,
  ): Promise<KeeperWrite>;
  /** Deletes the snapshot, if it is still as listed. */
  delete(snapshot: KeptSnapshot, signal: AbortSignal): Promise<KeeperWrite>;
}
