export { type Ensured, ensureSnapshot, NAME_TAKEN } from './ensure.js';
export {
  decideKeeping,
  type KeeperAction,
  type KeeperActionName,
  type KeeperDecision,
  type KeeperInput,
} from './keeper.js';
export { formatListed, readListed } from './listed.js';
export { findLiveSources, type LiveView, liveView, renameReferences } from './live-view.js';
export type {
  FoundSnapshot,
  KeeperApi,
  KeeperWrite,
  KeptSnapshot,
  Namer,
  OwnerReference,
  SnapshotStore,
  Written,
} from './ports.js';
export {
  type KeeperMetrics,
  type KeeperOptions,
  type Resynced,
  type ResyncReport,
  resyncSnapshots,
  startKeeper,
} from './run-keeper.js';
export {
  type DigestOne,
  holdsContentOf,
  isSnapshotNameOf,
  isSnapshotOf,
  planSnapshot,
  type Snapshot,
  snapshotBody,
  snapshotName,
} from './snapshot.js';
export { type SnapshotStanding, snapshotStanding } from './standing.js';
