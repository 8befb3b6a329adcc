// The admission use case (docs/design.md §4): select the workload a request writes,
// ask the evaluator for the hash now, and decide the annotations — a minimal
// patch with warnings. Knows nothing of HTTP; follow mode never imports it.

import { type AdmissionRequest, PREVIOUS_KEY_WARNING, warning } from './admission/index.js';
import {
  type CurrentHash,
  createEvaluator,
  type Digests,
  type Evaluation,
  type EvaluatorDependencies,
  isCurrentHash,
  MAX_SOURCES,
} from './evaluate.js';
import type { NamespaceCheck } from './namespaces.js';
import { buildAnnotationPatch } from './patch/index.js';
import type { LookupRecord, MutationResult, Mutator, Outcome, SkipCode } from './review.js';
import { describeSource } from './sources.js';
import {
  ADOPTED_HASH,
  annotationsAt,
  ENABLED,
  findWorkloadKind,
  HASH,
  isObject,
  objectAt,
  parseRolloutWindow,
  ROLLOUT_WINDOW,
  readWorkload,
  rolloutNotice,
  SOURCES,
  templatesEqualIgnoringOurs,
  type Workload,
  type WorkloadKind,
} from './workload/index.js';

export const MAX_WARNING_LENGTH = 120;
const MAX_WARNINGS = 10;

export interface MutatorDependencies extends EvaluatorDependencies {
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

// --- which requests are ours -------------------------------------------------

export interface Target {
  readonly workload: Workload;
  readonly namespace: string;
  readonly isUpdate: boolean;
  /** oldObject's parts, for an UPDATE that carries one. */
  readonly old: Workload | undefined;
}

export type Skip = { readonly skipReason: string; readonly warning?: string };

export function selectTarget(
  request: AdmissionRequest,
  kinds?: readonly WorkloadKind[],
): Target | Skip {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') {
    return { skipReason: `operation ${request.operation}` };
  }
  if (request.subResource) return { skipReason: `subresource ${request.subResource}` };
  const kind = findWorkloadKind(request.kind, kinds);
  if (!kind) {
    const { group, version, kind: name } = request.kind;
    return { skipReason: `kind ${group || 'core'}/${version} ${name} is not handled` };
  }
  const object = request.object;
  if (!isObject(object)) return { skipReason: 'request has no object' };
  const workload = readWorkload(object, kind);
  if (workload.annotations[ENABLED] === 'false') {
    return { skipReason: `opted out by ${ENABLED}: "false"` };
  }
  const elsewhere = templateElsewhere(workload);
  if (elsewhere) return elsewhere;
  if (!workload.template) return { skipReason: 'object has no pod template' };
  const namespace = request.namespace ?? objectNamespace(object);
  if (!namespace) return { skipReason: 'request has no namespace' };
  const isUpdate = request.operation === 'UPDATE';
  const old =
    isUpdate && isObject(request.oldObject) ? readWorkload(request.oldObject, kind) : undefined;
  return { workload, namespace, isUpdate, old };
}

/** A Rollout with `workloadRef` takes its pods from a Deployment: hashing that is the Deployment's write. */
function templateElsewhere(workload: Workload): Skip | undefined {
  const field = workload.kind.templateElsewhere;
  if (!field || objectAt(workload.object, field) === undefined) return undefined;
  const path = field.slice(1).join('.');
  return {
    skipReason: `${path}: the pod template is in another object`,
    warning: warning(
      `${workload.kind.kind} with ${path} left alone; its pod template is not in it`,
    ),
  };
}

function objectNamespace(object: unknown): string | undefined {
  const metadata = isObject(object) ? object.metadata : undefined;
  return isObject(metadata) && typeof metadata.namespace === 'string'
    ? metadata.namespace
    : undefined;
}

// --- what to write --------------------------------------------------------------

interface Annotations {
  readonly hash: string | undefined;
  readonly sources: string | undefined;
  readonly adoptedHash: string | undefined;
}

interface Decision {
  readonly outcome: Exclude<Outcome, 'unchanged' | 'skipped'>;
  readonly desired: Annotations;
  readonly warnings: readonly string[];
  /** The hash kept was made with a previous hash key. */
  readonly previousKeyHash?: true;
}

/** The annotations a review writes, as a patch, given the hash now. */
export function decideAnnotations(target: Target, evaluation: Evaluation): MutationResult {
  const previous = target.old ? currentAnnotations(target.old) : undefined;
  const decision = decide(target, previous, evaluation);
  const patch = buildAnnotationPatch(target.workload.object, [
    {
      metadataPath: [...target.workload.kind.templatePath, 'metadata'],
      desired: { [HASH]: decision.desired.hash, [SOURCES]: decision.desired.sources },
    },
    { metadataPath: ['metadata'], desired: { [ADOPTED_HASH]: decision.desired.adoptedHash } },
  ]);
  const hashChanged = previous !== undefined && decision.desired.hash !== previous.hash;
  const warnings = [
    // First: plan and explain look for it, and limitWarnings keeps the first ones.
    ...(decision.previousKeyHash ? [PREVIOUS_KEY_WARNING] : []),
    ...evaluation.problems.map(warning),
    ...windowWarnings(target.workload),
    ...decision.warnings,
    ...(hashChanged ? rolloutWarnings(target.workload) : []),
  ];
  return {
    outcome: patch.length === 0 && decision.outcome !== 'kept-old' ? 'unchanged' : decision.outcome,
    patch,
    warnings: limitWarnings(warnings),
    lookups: evaluation.lookups.map(toLookupRecord),
    hashChanged,
    ...(decision.previousKeyHash ? { previousKeyHash: true } : {}),
  };
}

function decide(
  target: Target,
  previous: Annotations | undefined,
  evaluation: Evaluation,
): Decision {
  switch (evaluation.status) {
    case 'unreadable': {
      const consequence = target.isUpdate ? 'kept the previous hash' : 'no hash written';
      const warnings = [
        ...(evaluation.tooManySources === undefined
          ? []
          : [
              warning(
                `too many sources (${evaluation.tooManySources}, at most ${MAX_SOURCES}); none read, ${consequence}`,
              ),
            ]),
        ...evaluation.failures.map(({ ref, detail }) =>
          warning(`could not read ${describeSource(ref)} (${detail}); ${consequence}`),
        ),
        ...evaluation.missingRequired.map((ref) =>
          warning(`${describeSource(ref)} not found; kept the previous hash`),
        ),
      ];
      return keepOld(target, previous, warnings);
    }
    case 'no-sources':
      return write(target, previous, undefined, []);
    case 'hashed': {
      const missing = evaluation.missingRequired.map(describeSource);
      // Never roll into pods that cannot start: keep what was there.
      if (target.isUpdate && missing.length > 0) {
        const warnings = missing.map((name) =>
          warning(`${name} not found; kept the previous hash`),
        );
        return keepOld(target, previous, warnings);
      }
      const warnings = missing.map((name) =>
        warning(`${name} not found; pods will not start until it exists`),
      );
      return write(target, previous, evaluation, warnings);
    }
  }
}

/** Nothing is written on a guess. With no oldObject (CREATE) that is whatever the request carries. */
function keepOld(
  target: Target,
  previous: Annotations | undefined,
  warnings: readonly string[],
): Decision {
  return {
    outcome: 'kept-old',
    desired: previous ?? currentAnnotations(target.workload),
    warnings,
  };
}

/** `now` undefined: the workload reads no sources. */
function write(
  target: Target,
  previous: Annotations | undefined,
  now: (Digests & { readonly sources: string }) | undefined,
  warnings: readonly string[],
): Decision {
  const otherwiseUnchanged =
    previous !== undefined &&
    templatesEqualIgnoringOurs(target.workload.template, target.old?.template);
  // A value that stands for the content now stays, whichever key made it: a key rotation
  // rolls nothing; the first write that changes the hash for a real reason uses the current key.
  if (otherwiseUnchanged && now) {
    const current = isCurrentHash(previous.hash ?? previous.adoptedHash, now);
    if (current !== undefined) return keepCurrent(previous, current, warnings);
  }
  // Labelling a namespace must not restart every workload in it.
  if (otherwiseUnchanged && previous.hash === undefined && previous.adoptedHash === undefined) {
    return { outcome: 'adopted', desired: { ...previous, adoptedHash: now?.hash }, warnings };
  }
  return {
    outcome: 'patched',
    desired: { hash: now?.hash, sources: now?.sources, adoptedHash: undefined },
    warnings,
  };
}

/** The annotations stay as they are; a hash made with a previous key says so. */
function keepCurrent(
  previous: Annotations,
  current: CurrentHash,
  warnings: readonly string[],
): Decision {
  const outcome = previous.hash ? 'patched' : 'adopted';
  const kept = { outcome, desired: previous, warnings } as const;
  return current === 'previous-key' ? { ...kept, previousKeyHash: true } : kept;
}

/** Follow mode holds changes outside a window it cannot read: say so at write time. */
function windowWarnings(workload: Workload): string[] {
  const window = workload.annotations[ROLLOUT_WINDOW];
  const parsed = window === undefined ? undefined : parseRolloutWindow(window);
  return parsed && !parsed.ok ? [warning(parsed.error)] : [];
}

/** A new hash that no pod will follow by itself, or that every pod follows at once (docs/design.md §4). */
function rolloutWarnings(workload: Workload): string[] {
  const notice = rolloutNotice(workload.object, workload.kind);
  return notice ? [warning(notice.text)] : [];
}

function currentAnnotations(workload: Workload): Annotations {
  const template = annotationsAt(workload.template, ['metadata']);
  return {
    hash: template[HASH],
    sources: template[SOURCES],
    adoptedHash: workload.annotations[ADOPTED_HASH],
  };
}

function toLookupRecord({ ref, result }: Evaluation['lookups'][number]): LookupRecord {
  return { kind: ref.kind, result: result.status === 'failed' ? result.failure : result.status };
}

/** Warnings are short and name objects; a long name is cut rather than dropped. */
export function limitWarnings(warnings: readonly string[]): string[] {
  const shortened = warnings.map((text) =>
    text.length <= MAX_WARNING_LENGTH ? text : `${text.slice(0, MAX_WARNING_LENGTH - 1)}…`,
  );
  if (shortened.length <= MAX_WARNINGS) return shortened;
  const rest = shortened.length - (MAX_WARNINGS - 1);
  return [...shortened.slice(0, MAX_WARNINGS - 1), warning(`and ${rest} more problems`)];
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
