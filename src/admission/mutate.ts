// The admission use case (docs/design.md §4), top to bottom: select the workload a
// request writes, check its namespace as confighash itself sees it (opted in, and for
// a namespace that opts workloads in one at a time, this one annotated), ask the evaluator
// for the hash now, decide the annotations. Knows nothing of HTTP; follow mode never
// imports it.

import { createEvaluator, type Evaluation, type EvaluatorDependencies } from '../evaluate/index.js';
import type { SnapshotStore } from '../snapshot/index.js';
import {
  decideHandled,
  ENABLED,
  type NamespaceStanding,
  type NotHandledReason,
  notAnnotatedReason,
  type WorkloadKind,
} from '../workload/index.js';
import { decideAnnotations } from './decide.js';
import type { NamespaceCheck, NamespaceVerdict } from './namespace-check.js';
import type { MutationResult, Mutator, SkipCode } from './result.js';
import { involvesSnapshots, reviewSnapshotWorkload } from './snapshot-review.js';
import { selectTarget, type Target } from './target.js';

interface MutatorDependencies extends EvaluatorDependencies {
  /** The kinds handled (default: the apps/v1 ones; `--kind` adds more). */
  readonly kinds?: readonly WorkloadKind[];
  /** Whether the request's namespace is opted in, as confighash itself sees it (docs/design.md §4, §10). */
  readonly namespaces: NamespaceCheck;
  /** Where snapshots are made (docs/design.md §13); undefined: snapshots are off in this install. */
  readonly snapshots?: SnapshotStore;
}

export function createMutator({
  kinds,
  namespaces,
  snapshots,
  ...dependencies
}: MutatorDependencies): Mutator {
  const evaluate = createEvaluator(dependencies);
  return {
    async review(request, signal) {
      const target = selectTarget(request, kinds);
      if ('skipReason' in target) return skipped(target.skipReason, target.warning);
      // Before any lookup: a review POSTed straight to the port learns nothing of a namespace not opted in.
      const verdict = await namespaces.check(target.namespace, signal);
      if (verdict.status === 'unknown') {
        return decideAnnotations(target, namespaceUnreadable(target, verdict.detail));
      }
      const handled = decideHandled(target.workload.annotations, standingOf(verdict));
      if (!handled.handled) return notHandled(handled.reason, target.namespace, verdict);
      if (involvesSnapshots(target.workload)) {
        return reviewSnapshotWorkload(target, {
          evaluate,
          store: snapshots,
          dryRun: request.dryRun,
          signal,
        });
      }
      const evaluation = await evaluate(target.workload, target.namespace, signal);
      return decideAnnotations(target, evaluation);
    },
  };
}

/** The namespace check's verdict as the decision table's standing (workload/handled.ts). */
function standingOf(verdict: Exclude<NamespaceVerdict, { status: 'unknown' }>): NamespaceStanding {
  if (verdict.status === 'opted-in') return verdict.workloads;
  return verdict.why === 'excluded' ? 'excluded' : 'not-opted-in';
}

/** The skip of a workload the table leaves alone: its reason said, and counted by its code. */
function notHandled(
  reason: NotHandledReason,
  namespace: string,
  verdict: NamespaceVerdict,
): MutationResult {
  switch (reason) {
    case 'opted-out':
      return skipped(`opted out by ${ENABLED}: "false"`, undefined);
    case 'namespace-excluded':
    case 'namespace-not-opted-in': {
      const why = verdict.status === 'not-opted-in' ? verdict.why : 'not labelled';
      return skipped(
        `namespace ${namespace} is not opted in (${why})`,
        undefined,
        'namespace-not-opted-in',
      );
    }
    case 'not-annotated':
      return skipped(`not handled: ${notAnnotatedReason(namespace)}`, undefined);
  }
}

/**
 * The namespace could not be read: like a failed lookup, keep oldObject's
 * values, and read nothing (a forged review must not get lookups by making
 * the namespace read fail; a real one loses nothing it had).
 */
function namespaceUnreadable(target: Target, detail: string): Evaluation {
  const consequence = target.isUpdate ? 'kept the previous hash' : 'no hash written';
  return {
    status: 'unreadable',
    failures: [],
    missingRequired: [],
    lookups: [],
    problems: [`could not read namespace ${target.namespace} (${detail}); ${consequence}`],
  };
}

function skipped(
  skipReason: string,
  warning: string | undefined,
  skipCode: SkipCode = 'not-handled',
): MutationResult {
  return {
    outcome: 'skipped',
    patch: [],
    warnings: warning ? [warning] : [],
    lookups: [],
    hashChanged: false,
    skipReason,
    skipCode,
  };
}
