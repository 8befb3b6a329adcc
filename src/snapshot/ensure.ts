// Making sure a snapshot a write names exists (docs/design.md §13, "Who creates them"): read it,
// create it when absent (never in a dry run), take a name found taken only when the object is that
// snapshot, and add the workload as an owner when its uid is known.

import type { FoundSnapshot, OwnerReference, SnapshotStore } from './ports.js';
import { type DigestOne, isSnapshotOf, type Snapshot, snapshotBody } from './snapshot.js';

export type Ensured =
  | { readonly status: 'created' | 'reused' | 'would-create' }
  | { readonly status: 'failed'; readonly detail: string };

export const NAME_TAKEN = 'name taken by an object that is not its snapshot';

export async function ensureSnapshot(
  store: SnapshotStore,
  snapshot: Snapshot,
  context: {
    readonly owner: OwnerReference | undefined;
    readonly digestOne: DigestOne;
    readonly dryRun: boolean;
    readonly signal: AbortSignal;
  },
): Promise<Ensured> {
  const { owner, dryRun, signal } = context;
  const found = await store.read(snapshot.namespace, snapshot.name, signal);
  if (found.status === 'found') return reuse(store, snapshot, found, context);
  if (found.status === 'failed') return found;
  if (dryRun) return { status: 'would-create' };
  const created = await store.create(snapshotBody(snapshot, owner), signal);
  if (created.status === 'done') return { status: 'created' };
  if (created.status === 'failed') return created;
  // Made by another review in between, or the name is someone else's.
  const raced = await store.read(snapshot.namespace, snapshot.name, signal);
  if (raced.status === 'found') return reuse(store, snapshot, raced, context);
  return raced.status === 'failed' ? raced : { status: 'failed', detail: 'created and gone' };
}

async function reuse(
  store: SnapshotStore,
  snapshot: Snapshot,
  found: Extract<FoundSnapshot, { status: 'found' }>,
  { owner, digestOne, dryRun, signal }: Parameters<typeof ensureSnapshot>[2],
): Promise<Ensured> {
  if (!isSnapshotOf(found, snapshot, digestOne)) return { status: 'failed', detail: NAME_TAKEN };
  // An owner added changes its resourceVersion, so a collection that saw nothing name it fails.
  if (owner && !dryRun && !found.owners.includes(owner.uid)) {
    const added = await store.addOwner(snapshot, found, owner, signal);
    if (added.status === 'failed')
      return { status: 'failed', detail: `owner not added (${added.detail})` };
  }
  return { status: 'reused' };
}
