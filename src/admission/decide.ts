// What a review writes (docs/design.md §4), given the hash now: the annotations as a
// minimal patch, with the warnings people read in kubectl's output. Pure.

import {
  type CurrentHash,
  type Evaluation,
  isCurrentHash,
  MAX_SOURCES,
  type MissingRequired,
} from '../evaluate/index.js';
import { buildAnnotationPatch, type JsonPatchOperation } from '../patch/index.js';
import { describeSource } from '../sources/index.js';
import {
  ADOPTED_HASH,
  annotationsAt,
  formatHashedVersions,
  HASH,
  HASHED_VERSIONS,
  PREVIOUS_KEY_WARNING,
  parseRolloutWindow,
  ROLLOUT_WINDOW,
  rolloutNotice,
  SOURCES,
  templatesEqualIgnoringOurs,
  type Workload,
  warning,
} from '../workload/index.js';
import type { LookupRecord, MutationResult, Outcome } from './result.js';
import type { Target } from './target.js';

const MAX_WARNING_LENGTH = 120;
const MAX_WARNINGS = 10;

interface Annotations {
  readonly hash: string | undefined;
  readonly sources: string | undefined;
  readonly adoptedHash: string | undefined;
  /** What the hash (or adopted hash) was computed from (docs/design.md §2). */
  readonly hashedVersions: string | undefined;
}

type Hashed = Extract<Evaluation, { readonly status: 'hashed' }>;

export interface Decision {
  readonly outcome: Exclude<Outcome, 'unchanged' | 'skipped'>;
  readonly desired: Annotations;
  readonly warnings: readonly string[];
  /** The hash kept was made with a previous hash key. */
  readonly previousKeyHash?: true;
}

/** The annotations a review writes, as a patch, given the hash now. */
export function decideAnnotations(target: Target, evaluation: Evaluation): MutationResult {
  return annotationResult(target, evaluation, decideWrite(target, evaluation));
}

/** What a write does besides the annotations: a snapshot workload's (snapshot/, docs/design.md §13). */
export interface TemplateExtension {
  /** More pod template annotations, undefined: absent. */
  readonly annotations: Readonly<Record<string, string | undefined>>;
  readonly patch: readonly JsonPatchOperation[];
  readonly warnings: readonly string[];
}

/** The outcome and the annotations a review decides on, before any patch is built. */
export function decideWrite(target: Target, evaluation: Evaluation): Decision {
  const previous = target.old ? currentAnnotations(target.old) : undefined;
  return decide(target, previous, evaluation);
}

/** The decision as the review's answer: its patch, warnings and records. */
export function annotationResult(
  target: Target,
  evaluation: Evaluation,
  decision: Decision,
  extension?: TemplateExtension,
): MutationResult {
  const previous = target.old ? currentAnnotations(target.old) : undefined;
  const patch = [
    ...buildAnnotationPatch(target.workload.object, [
      {
        metadataPath: [...target.workload.kind.templatePath, 'metadata'],
        desired: {
          [HASH]: decision.desired.hash,
          [SOURCES]: decision.desired.sources,
          ...extension?.annotations,
        },
      },
      {
        metadataPath: ['metadata'],
        desired: {
          [ADOPTED_HASH]: decision.desired.adoptedHash,
          [HASHED_VERSIONS]: decision.desired.hashedVersions,
        },
      },
    ]),
    ...(extension?.patch ?? []),
  ];
  const hashChanged = previous !== undefined && decision.desired.hash !== previous.hash;
  const warnings = [
    // First: plan and explain look for it, and limitWarnings keeps the first ones.
    ...(decision.previousKeyHash ? [PREVIOUS_KEY_WARNING] : []),
    ...evaluation.problems.map(warning),
    ...windowWarnings(target.workload),
    ...decision.warnings,
    ...(extension?.warnings ?? []),
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
        ...evaluation.missingRequired.map((missing) =>
          warning(`${describeMissing(missing)} not found; kept the previous hash`),
        ),
      ];
      return keepOld(target, previous, warnings);
    }
    case 'no-sources':
      return write(target, previous, undefined, []);
    case 'hashed': {
      const missing = evaluation.missingRequired.map(describeMissing);
      // Never roll into pods that cannot start (a required object or key): keep what was there.
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

/** `ConfigMap app`, or `ConfigMap app key "LOG_LEVEL"`: what new pods need and cannot find. */
function describeMissing({ ref, key }: MissingRequired): string {
  return key === undefined ? describeSource(ref) : `${describeSource(ref)} key "${key}"`;
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
  now: Hashed | undefined,
  warnings: readonly string[],
): Decision {
  const otherwiseUnchanged =
    previous !== undefined &&
    templatesEqualIgnoringOurs(target.workload.template, target.old?.template);
  // A value that stands for the content now stays, whichever key made it: a key rotation
  // rolls nothing; the first write that changes the hash for a real reason uses the current key.
  if (otherwiseUnchanged && now) {
    const current = isCurrentHash(previous.hash ?? previous.adoptedHash, now);
    if (current !== undefined) return keepCurrent(previous, current, now, warnings);
  }
  const hashedVersions = now && hashedVersionsOf(now.hash, now);
  // Labelling a namespace must not restart every workload in it.
  if (otherwiseUnchanged && previous.hash === undefined && previous.adoptedHash === undefined) {
    const adopted = { ...previous, adoptedHash: now?.hash, hashedVersions };
    return { outcome: 'adopted', desired: adopted, warnings };
  }
  return {
    outcome: 'patched',
    desired: { hash: now?.hash, sources: now?.sources, adoptedHash: undefined, hashedVersions },
    warnings,
  };
}

/**
 * `hash`, made with the current key, stands for the content `now` read: the versions it read
 * are what `hash` was computed from.
 */
function hashedVersionsOf(hash: string, now: Hashed): string | undefined {
  return formatHashedVersions(
    { keyId: now.keyId, hash },
    now.lookups.map(({ ref, result }) => ({
      ref,
      version: result.status === 'found' ? result.resourceVersion : undefined,
    })),
  );
}

/**
 * The annotations stay as they are, but for an `adopted-hash` beside a template hash: the
 * template's hash is the one that counts (docs/design.md §4, adoption). A hash made with a
 * previous key says so.
 */
function keepCurrent(
  previous: Annotations,
  current: CurrentHash,
  now: Hashed,
  warnings: readonly string[],
): Decision {
  const hashed = previous.hash !== undefined;
  // Recorded anew only for a hash of the current key. A previous key's hash keeps the record
  // its key wrote, which counts for nothing to a follower hashing with the current key: that
  // follower evaluates it, and touches it once the previous key is dropped.
  const hashedVersions =
    current === 'current-key'
      ? hashedVersionsOf(previous.hash ?? previous.adoptedHash!, now)
      : previous.hashedVersions;
  const decision = {
    outcome: hashed ? 'patched' : 'adopted',
    desired: hashed
      ? { ...previous, adoptedHash: undefined, hashedVersions }
      : { ...previous, hashedVersions },
    warnings,
  } as const;
  return current === 'previous-key' ? { ...decision, previousKeyHash: true } : decision;
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
    hashedVersions: workload.annotations[HASHED_VERSIONS],
  };
}

export function toLookupRecord({ ref, result }: Evaluation['lookups'][number]): LookupRecord {
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
