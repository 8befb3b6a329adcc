// What `plan` says of a snapshot workload that rolls (docs/design.md §13): which of its
// ConfigMaps get a new snapshot, and which revision a `kubectl rollout undo` after the apply
// brings back. Names need the hash key, which plan never has: the sources are named instead. Pure.

import { formatSource, type SourceRef } from '../sources/index.js';
import { annotationsAt, type JsonObject, SNAPSHOT, type Workload } from '../workload/index.js';

/** The deployment controller's record of a Deployment's revision. */
const REVISION = 'deployment.kubernetes.io/revision';

export function snapshotNotes(
  workload: Workload,
  live: JsonObject,
  changed: readonly { readonly ref: SourceRef }[],
): string[] {
  if (workload.annotations[SNAPSHOT] !== 'true') return [];
  const copied = changed.filter(({ ref }) => ref.kind === 'ConfigMap').map(({ ref }) => ref);
  if (copied.length === 0) return [];
  const revision = annotationsAt(live, ['metadata'])[REVISION];
  const undo =
    revision === undefined
      ? '`kubectl rollout undo` after it brings back the config the workload reads now'
      : `\`kubectl rollout undo\` after it brings back revision ${revision}, with the config it reads now`;
  return [`new snapshots of ${copied.map(formatSource).join(', ')}; ${undo}`];
}
