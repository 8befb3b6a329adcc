// The port snapshots are made through (adapter: src/kube/snapshot-store.ts; in memory:
// test/support/memory-snapshots.ts). Outcomes are values, never exceptions.

import type { SourceContent } from '../hash/index.js';
import type { JsonObject } from '../workload/index.js';

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

/** Who keeps a snapshot alive (docs/design.md §13): a workload or one of its revisions. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}
