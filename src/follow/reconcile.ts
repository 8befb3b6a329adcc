// The follow-mode decision for one workload, given the hash the webhook would
// write now (the same evaluator admission uses): touch it, or leave it. The
// webhook stays the single judge of what the new annotations are.

import type { WorkloadEvaluation } from '../mutate.js';
import {
  ADOPTED_HASH,
  ENABLED,
  HASH,
  templateAnnotations,
  type WorkloadKind,
  workloadAnnotations,
} from '../workload/index.js';

export type ReconcileDecision =
  | { readonly touch: true; readonly why: 'config-changed' | 'not-yet-hashed' }
  | {
      readonly touch: false;
      readonly why: 'up-to-date' | 'no-sources' | 'opted-out' | 'lookup-failed' | 'source-missing';
    };

export function decideReconcile(
  object: unknown,
  kind: WorkloadKind,
  evaluation: WorkloadEvaluation,
): ReconcileDecision {
  if (workloadAnnotations(object)[ENABLED] === 'false') return { touch: false, why: 'opted-out' };
  if (evaluation.sources === undefined) return { touch: false, why: 'no-sources' };
  if (evaluation.lookups.some(({ result }) => result.status === 'failed')) {
    return { touch: false, why: 'lookup-failed' };
  }
  // The webhook keeps the old hash while a required source is missing: a touch would change nothing.
  if (evaluation.lookups.some(({ ref, result }) => result.status === 'absent' && !ref.optional)) {
    return { touch: false, why: 'source-missing' };
  }
  const current =
    templateAnnotations(object, kind)[HASH] ?? workloadAnnotations(object)[ADOPTED_HASH];
  if (current === undefined) return { touch: true, why: 'not-yet-hashed' };
  return current === evaluation.hash
    ? { touch: false, why: 'up-to-date' }
    : { touch: true, why: 'config-changed' };
}
