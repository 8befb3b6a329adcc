// The follow-mode decision for one workload, given the hash the webhook would
// write now (the same evaluator admission uses): touch it, or leave it. The
// webhook stays the single judge of what the new annotations are.

import { type Evaluation, isCurrentHash } from '../evaluate/index.js';
import { type LiveView, snapshotStanding } from '../snapshot/index.js';
import {
  ADOPTED_HASH,
  annotationsAt,
  HASH,
  HASHED_VERSIONS,
  isOptedOut,
  SNAPSHOT,
  type Workload,
} from '../workload/index.js';

export type ReconcileDecision =
  | { readonly touch: true; readonly why: 'config-changed' | 'not-yet-hashed' }
  | {
      readonly touch: false;
      readonly why:
        | 'up-to-date'
        /** A snapshot workload rolled back to an earlier revision's config, which is the content it last rolled to (docs/design.md §13). */
        | 'pinned'
        /** Up to date, with a hash made with a previous hash key: the rotation is not done. */
        | 'up-to-date-previous-key'
        | 'no-sources'
        | 'opted-out'
        | 'lookup-failed'
        | 'source-missing';
    };

/**
 * `evaluation` is of the template's live view (`view`, docs/design.md §13): for a snapshot
 * workload whose template names its snapshots, the webhook's own rule decides (snapshotStanding).
 */
export function decideReconcile(
  workload: Pick<Workload, 'template' | 'annotations'>,
  evaluation: Evaluation,
  view?: LiveView,
): ReconcileDecision {
  if (isOptedOut(workload.annotations)) return { touch: false, why: 'opted-out' };
  if (view && view.named.size > 0 && workload.annotations[SNAPSHOT] === 'true') {
    return decideSnapshotWorkload(workload, evaluation, view);
  }
  switch (evaluation.status) {
    case 'no-sources':
      return { touch: false, why: 'no-sources' };
    case 'unreadable':
      return { touch: false, why: 'lookup-failed' };
    case 'hashed': {
      // The webhook keeps the old hash while a required source is missing: a touch would change nothing.
      if (evaluation.missingRequired.length > 0) return { touch: false, why: 'source-missing' };
      const current =
        annotationsAt(workload.template, ['metadata'])[HASH] ?? workload.annotations[ADOPTED_HASH];
      if (current === undefined) return { touch: true, why: 'not-yet-hashed' };
      // A previous key's digest of the content now is up to date too: the webhook would keep it.
      switch (isCurrentHash(current, evaluation)) {
        case 'current-key':
          return { touch: false, why: 'up-to-date' };
        case 'previous-key':
          return { touch: false, why: 'up-to-date-previous-key' };
        case undefined:
          return { touch: true, why: 'config-changed' };
      }
    }
  }
}

function decideSnapshotWorkload(
  workload: Pick<Workload, 'template' | 'annotations'>,
  evaluation: Evaluation,
  view: LiveView,
): ReconcileDecision {
  const templateHash = annotationsAt(workload.template, ['metadata'])[HASH];
  const stored = workload.annotations[HASHED_VERSIONS];
  switch (snapshotStanding(view, templateHash, stored, evaluation)) {
    case 'current':
      return { touch: false, why: 'up-to-date' };
    case 'pinned':
      return { touch: false, why: 'pinned' };
    case 'kept':
      return evaluation.status === 'hashed'
        ? { touch: false, why: 'source-missing' }
        : { touch: false, why: 'lookup-failed' };
    case 'roll-forward':
      return { touch: true, why: 'config-changed' };
  }
}
