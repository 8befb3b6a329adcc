export { type Ensured, ensureSnapshot, NAME_TAKEN } from './ensure.js';
export { formatListed, readListed } from './listed.js';
export { type LiveView, liveView, renameReferences } from './live-view.js';
export type { FoundSnapshot, OwnerReference, SnapshotStore, Written } from './ports.js';
export {
  type DigestOne,
  holdsContentOf,
  isSnapshotOf,
  planSnapshot,
  type Snapshot,
  snapshotBody,
  snapshotName,
} from './snapshot.js';
export { type SnapshotStanding, snapshotStanding } from './standing.js';
