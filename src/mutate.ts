// The use case: an admission request becomes sources, live lookups, a hash,
// and a minimal patch with warnings (DESIGN.md §4). Knows nothing of HTTP.

import type { AdmissionRequest } from './admission/index.js';
import {
  computeHash,
  formatSourceList,
  type HashInput,
  HashMemo,
  type SourceRef,
} from './hash/index.js';
import type { ConfigSource, LookupFailure, LookupResult } from './kube/config-source.js';
import { buildAnnotationPatch, type JsonPatchOperation } from './patch/index.js';
import {
  ADOPTED_HASH,
  ENABLED,
  findSources,
  findWorkloadKind,
  HASH,
  isObject,
  parseRolloutWindow,
  podTemplateOf,
  ROLLOUT_WINDOW,
  SOURCES,
  templateAnnotations,
  type WorkloadKind,
  workloadAnnotations,
} from './workload/index.js';

export type Outcome =
  /** The patch writes a new hash or sources into the template. */
  | 'patched'
  /** The workload was adopted: `adopted-hash` written, template untouched. */
  | 'adopted'
  /** Everything already as it should be. */
  | 'unchanged'
  /** A lookup failed or a required source is missing: previous values kept. */
  | 'kept-old'
  /** Not ours to touch: other kind, subresource, DELETE, opted out. */
  | 'skipped';

export interface LookupRecord {
  readonly kind: SourceRef['kind'];
  readonly result: 'found' | 'absent' | LookupFailure;
}

export interface MutationResult {
  readonly outcome: Outcome;
  readonly patch: readonly JsonPatchOperation[];
  readonly warnings: readonly string[];
  readonly lookups: readonly LookupRecord[];
  /** An UPDATE whose template hash now differs from oldObject's: it will roll. */
  readonly hashChanged: boolean;
  /** Why nothing was looked at, for `skipped`. */
  readonly skipReason?: string;
}

export interface MutatorDependencies {
  readonly configSource: ConfigSource;
  readonly hashKey: Uint8Array;
  readonly memo?: HashMemo;
}

export interface Mutator {
  review(request: AdmissionRequest, signal: AbortSignal): Promise<MutationResult>;
}

export const MAX_WARNING_LENGTH = 120;
const MAX_WARNINGS = 10;

export function createMutator(dependencies: MutatorDependencies): Mutator {
  const evaluate = createWorkloadEvaluator(dependencies);
  return {
    async review(request, signal) {
      const target = selectTarget(request);
      if ('skipReason' in target) return skipped(target.skipReason);
      const evaluation = await evaluate(target.object, target.kind, target.namespace, signal);
      return decide(request, target, evaluation);
    },
  };
}

// --- which requests are ours -------------------------------------------------

interface Target {
  readonly kind: WorkloadKind;
  readonly object: unknown;
  readonly namespace: string;
}

function selectTarget(request: AdmissionRequest): Target | { skipReason: string } {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') {
    return { skipReason: `operation ${request.operation}` };
  }
  if (request.subResource) return { skipReason: `subresource ${request.subResource}` };
  const kind = findWorkloadKind(request.kind);
  if (!kind) {
    const { group, version, kind: name } = request.kind;
    return { skipReason: `kind ${group || 'core'}/${version} ${name} is not handled` };
  }
  const object = request.object;
  if (!isObject(object)) return { skipReason: 'request has no object' };
  if (workloadAnnotations(object)[ENABLED] === 'false') {
    return { skipReason: `opted out by ${ENABLED}: "false"` };
  }
  if (!podTemplateOf(object, kind)) return { skipReason: 'object has no pod template' };
  const namespace = request.namespace ?? objectNamespace(object);
  if (!namespace) return { skipReason: 'request has no namespace' };
  return { kind, object, namespace };
}

function objectNamespace(object: unknown): string | undefined {
  const metadata = isObject(object) ? object.metadata : undefined;
  return isObject(metadata) && typeof metadata.namespace === 'string'
    ? metadata.namespace
    : undefined;
}

// --- what the hash is now ------------------------------------------------------

export interface SourceLookup {
  readonly ref: SourceRef;
  readonly result: LookupResult;
}

/** What the template's hash should be now, from live lookups. */
export interface WorkloadEvaluation {
  readonly lookups: readonly SourceLookup[];
  /** Annotation entries that were ignored, as warning text. */
  readonly problems: readonly string[];
  /** undefined when the workload has no sources. */
  readonly hash: string | undefined;
  readonly sources: string | undefined;
}

export type WorkloadEvaluator = (
  object: unknown,
  kind: WorkloadKind,
  namespace: string,
  signal: AbortSignal,
) => Promise<WorkloadEvaluation>;

/** Shared by admission and follow mode: one definition of "the hash now". */
export function createWorkloadEvaluator({
  configSource,
  hashKey,
  memo = new HashMemo(),
}: MutatorDependencies): WorkloadEvaluator {
  return async (object, kind, namespace, signal) => {
    const template = podTemplateOf(object, kind);
    const discovery = findSources(template?.spec, workloadAnnotations(object));
    const lookups = await Promise.all(
      discovery.sources.map(async (ref) => ({
        ref,
        result: await configSource.get(ref.kind, namespace, ref.name, signal),
      })),
    );
    const problems = discovery.problems;
    if (lookups.length === 0) return { lookups, problems, hash: undefined, sources: undefined };
    const sources = formatSourceList(discovery.sources);
    if (lookups.some(({ result }) => result.status === 'failed')) {
      return { lookups, problems, hash: undefined, sources };
    }
    return { lookups, problems, hash: hashLookups(hashKey, memo, lookups), sources };
  };
}

function hashLookups(
  hashKey: Uint8Array,
  memo: HashMemo,
  lookups: readonly SourceLookup[],
): string {
  // Only objects that say which version they are can be recognised again.
  const identifiable = lookups.every(
    ({ result }) =>
      result.status !== 'found' || (result.uid !== '' && result.resourceVersion !== ''),
  );
  const identity = identifiable ? lookups.map(lookupIdentity).sort().join('\n') : undefined;
  const remembered = identity === undefined ? undefined : memo.get(identity);
  if (remembered !== undefined) return remembered;
  const inputs: HashInput[] = lookups.map(({ ref, result }) => ({
    kind: ref.kind,
    name: ref.name,
    selection: ref.selection,
    content: result.status === 'found' ? result.content : undefined,
  }));
  const hash = computeHash(hashKey, inputs);
  if (identity !== undefined) memo.set(identity, hash);
  return hash;
}

function lookupIdentity({ ref, result }: SourceLookup): string {
  const selection = ref.selection.all ? '*' : [...ref.selection.keys].sort().join('\0');
  const version =
    result.status === 'found' ? `${result.uid}@${result.resourceVersion}` : result.status;
  return `${ref.kind}/${ref.name}\t${version}\t${selection}`;
}

// --- what to write --------------------------------------------------------------

interface Annotations {
  readonly hash: string | undefined;
  readonly sources: string | undefined;
  readonly adoptedHash: string | undefined;
}

function decide(
  request: AdmissionRequest,
  target: Target,
  evaluation: WorkloadEvaluation,
): MutationResult {
  const isUpdate = request.operation === 'UPDATE';
  const old = isUpdate && isObject(request.oldObject) ? request.oldObject : undefined;
  const previous = old ? currentAnnotations(old, target.kind) : undefined;
  const warnings = [...evaluation.problems.map((problem) => `confighash: ${problem}`)];
  // Follow mode holds changes outside a window it cannot read: say so at write time.
  const window = workloadAnnotations(target.object)[ROLLOUT_WINDOW];
  const parsedWindow = window === undefined ? undefined : parseRolloutWindow(window);
  if (parsedWindow && !parsedWindow.ok) warnings.push(`confighash: ${parsedWindow.error}`);
  const failed = evaluation.lookups.filter(({ result }) => result.status === 'failed');
  const missingRequired = evaluation.lookups.filter(
    ({ ref, result }) => result.status === 'absent' && !ref.optional,
  );
  const lookups = evaluation.lookups.map(toLookupRecord);

  let desired: Annotations;
  let outcome: Outcome;
  if (failed.length > 0 || (isUpdate && missingRequired.length > 0)) {
    // Never roll into pods that cannot start, nor on a guess: keep what was there.
    // With no oldObject (CREATE) that is whatever the request carries.
    desired = previous ?? currentAnnotations(target.object, target.kind);
    outcome = 'kept-old';
    const consequence = isUpdate ? 'kept the previous hash' : 'no hash written';
    for (const { ref, result } of failed) {
      const detail = result.status === 'failed' ? result.detail : '';
      warnings.push(`confighash: could not read ${describeRef(ref)} (${detail}); ${consequence}`);
    }
    for (const { ref } of missingRequired) {
      warnings.push(`confighash: ${describeRef(ref)} not found; kept the previous hash`);
    }
  } else {
    for (const { ref } of missingRequired) {
      warnings.push(
        `confighash: ${describeRef(ref)} not found; pods will not start until it exists`,
      );
    }
    const adopting =
      previous !== undefined &&
      previous.hash === undefined &&
      (previous.adoptedHash === undefined || previous.adoptedHash === evaluation.hash) &&
      templatesEqualIgnoringOurs(request.object, old, target.kind);
    if (adopting) {
      // Labelling a namespace must not restart every workload in it.
      desired = { ...previous, adoptedHash: evaluation.hash };
      outcome = 'adopted';
    } else {
      desired = { hash: evaluation.hash, sources: evaluation.sources, adoptedHash: undefined };
      outcome = 'patched';
    }
  }

  const patch = buildAnnotationPatch(target.object, [
    {
      metadataPath: [...target.kind.templatePath, 'metadata'],
      desired: { [HASH]: desired.hash, [SOURCES]: desired.sources },
    },
    { metadataPath: ['metadata'], desired: { [ADOPTED_HASH]: desired.adoptedHash } },
  ]);
  if (patch.length === 0 && outcome !== 'kept-old') outcome = 'unchanged';
  return {
    outcome,
    patch,
    warnings: limitWarnings(warnings),
    lookups,
    hashChanged: previous !== undefined && desired.hash !== previous.hash,
  };
}

function currentAnnotations(object: unknown, kind: WorkloadKind): Annotations {
  const template = templateAnnotations(object, kind);
  return {
    hash: template[HASH],
    sources: template[SOURCES],
    adoptedHash: workloadAnnotations(object)[ADOPTED_HASH],
  };
}

/** "Otherwise unchanged": the templates agree once confighash's own keys are set aside. */
export function templatesEqualIgnoringOurs(a: unknown, b: unknown, kind: WorkloadKind): boolean {
  return deepEqual(
    withoutOurAnnotations(podTemplateOf(a, kind)),
    withoutOurAnnotations(podTemplateOf(b, kind)),
  );
}

function withoutOurAnnotations(template: unknown): unknown {
  if (!isObject(template) || !isObject(template.metadata)) return template;
  const annotations = template.metadata.annotations;
  if (!isObject(annotations)) return template;
  const { [HASH]: _hash, [SOURCES]: _sources, ...others } = annotations;
  const metadata = { ...template.metadata, annotations: others };
  if (Object.keys(others).length === 0) delete (metadata as { annotations?: unknown }).annotations;
  return { ...template, metadata };
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  if (keysA.length !== Object.keys(b).length) return false;
  return keysA.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
}

function describeRef(ref: SourceRef): string {
  return `${ref.kind} ${ref.name}`;
}

function toLookupRecord({ ref, result }: SourceLookup): LookupRecord {
  return { kind: ref.kind, result: result.status === 'failed' ? result.failure : result.status };
}

/** Warnings are short and name objects; a long name is cut rather than dropped. */
export function limitWarnings(warnings: readonly string[]): string[] {
  const shortened = warnings.map((warning) =>
    warning.length <= MAX_WARNING_LENGTH ? warning : `${warning.slice(0, MAX_WARNING_LENGTH - 1)}…`,
  );
  if (shortened.length <= MAX_WARNINGS) return shortened;
  const rest = shortened.length - (MAX_WARNINGS - 1);
  return [...shortened.slice(0, MAX_WARNINGS - 1), `confighash: and ${rest} more problems`];
}

function skipped(skipReason: string): MutationResult {
  return {
    outcome: 'skipped',
    patch: [],
    warnings: [],
    lookups: [],
    hashChanged: false,
    skipReason,
  };
}
