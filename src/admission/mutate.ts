// The admission use case (docs/design.md §4), top to bottom: select the workload a
// request writes, check its namespace as confighash itself sees it (opted in, and for
// a namespace that opts workloads in one at a time, this one annotated), ask the evaluator
// for the hash now, decide the annotations. Knows nothing of HTTP; follow mode never
// imports it.

import { createEvaluator, type Evaluation, type EvaluatorDependencies } from '../evaluate/index.js';
import { isWorkloadHandled, notAnnotatedReason, type WorkloadKind } from '../workload/index.js';
import { decideAnnotations } from './decide.js';
import type { NamespaceCheck } from './namespace-check.js';
import type { MutationResult, Mutator, SkipCode } from './result.js';
import { selectTarget, type Target } from './target.js';

interface MutatorDependencies extends EvaluatorDependencies {
  /** The kinds handled (default: the apps/v1 ones; `--kind` adds more). */
  readonly kinds?: readonly WorkloadKind[];
  /** Whether the request's namespace is opted in, as confighash itself sees it (docs/design.md §4, §10). */
  readonly namespaces: NamespaceCheck;
}

export function createMutator({
  kinds,
  namespaces,
  ...dependencies
}: MutatorDependencies): Mutator {
  const evaluate = createEvaluator(dependencies);
  return {
    async review(request, signal) {
      const target = selectTarget(request, kinds);
      if ('skipReason' in target) return skipped(target.skipReason, target.warning);
      // Before any lookup: a review POSTed straight to the port learns nothing of a namespace not opted in.
      const verdict = await namespaces.check(target.namespace, signal);
      if (verdict.status === 'not-opted-in') {
        return skipped(
          `namespace ${target.namespace} is not opted in (${verdict.why})`,
          undefined,
          'namespace-not-opted-in',
        );
      }
      if (verdict.status === 'unknown') {
        return decideAnnotations(target, namespaceUnreadable(target, verdict.detail));
      }
      if (!isWorkloadHandled(target.workload.annotations, verdict.workloads)) {
        return skipped(`not handled: ${notAnnotatedReason(target.namespace)}`, undefined);
      }
      const evaluation = await evaluate(target.workload, target.namespace, signal);
      return decideAnnotations(target, evaluation);
    },
  };
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
