// The follow-mode decision for one workload, given the hash the webhook would
// write now (the same evaluator admission uses): touch it, or leave it. The
// webhook stays the single judge of what the new annotations are.

import { type Evaluation, isCurrentHash } from '../evaluate.js';
import { ADOPTED_HASH, annotationsAt, ENABLED, HASH, type Workload } from '../workload/index.js';

export type ReconcileDecision =
  | { readonly touch: true; readonly why: 'config-changed' | 'not-yet-hashed' }
  | {
      readonly touch: false;
      readonly why: 'up-to-date' | 'no-sources' | 'opted-out' | 'lookup-failed' | 'source-missing';
    };

export function decideReconcile(
  workload: Pick<Workload, 'template' | 'annotations'>,
  evaluation: Evaluation,
): ReconcileDecision {
  if (workload.annotations[ENABLED] === 'false') return { touch: false, why: 'opted-out' };
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
      // A v1 value of the content now is up to date too: the webhook would keep it.
      return isCurrentHash(current, evaluation)
        ? { touch: false, why: 'up-to-date' }
        : { touch: true, why: 'config-changed' };
    }
  }
}
