// Where a snapshot workload's template stands against the content now (docs/design.md §13,
// "The write"): kept as it is, or rolled forward. The one rule admission writes by and follow
// mode decides by. Pure.

import { type Evaluation, isCurrentHash } from '../evaluate/index.js';
import type { SourceRef } from '../sources/index.js';
import { readHashedVersions } from '../workload/index.js';
import type { LiveView } from './live-view.js';

export type SnapshotStanding =
  /** It names its snapshots and its hash is the content now (any key): nothing to do. */
  | 'current'
  /** It names the snapshots of an earlier revision while the content now is what it last rolled to. */
  | 'pinned'
  /** It names its snapshots and the content now cannot be told: what it names is immutable, so it stays. */
  | 'kept'
  /** Everything else: written as §4 decides on the live view, its references renamed. */
  | 'roll-forward';

export function snapshotStanding(
  view: LiveView,
  /** The template's `confighash.dev/hash`. */
  templateHash: string | undefined,
  /** The workload's own `hashed-versions` as stored (oldObject's): an undo does not change it. */
  storedHashedVersions: string | undefined,
  evaluation: Evaluation,
): SnapshotStanding {
  if (view.named.size === 0) return 'roll-forward';
  if (evaluation.status !== 'hashed' || evaluation.missingRequired.length > 0) return 'kept';
  if (isCurrentHash(templateHash, evaluation) !== undefined) return 'current';
  const sources: SourceRef[] = evaluation.lookups.map(({ ref }) => ref);
  const rolled = readHashedVersions(
    storedHashedVersions,
    { keyId: evaluation.keyId, hash: evaluation.hash },
    sources,
  );
  return rolled === undefined ? 'roll-forward' : 'pinned';
}
