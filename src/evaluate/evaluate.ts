// "The hash now" (docs/design.md §3, §6): a workload's sources, read live through the
// ConfigSource port, become one answer — no sources, unreadable (which lookups
// failed and why), or hashed (the hash, the sources list, and what new pods need
// and cannot find: a required source absent, a required key missing). Admission
// and follow mode both take this answer as it is; neither works out again what
// failed, nor whether a hash they find is current.

import {
  computeHash,
  type HashInput,
  HashMemo,
  NamespaceKeys,
  type SourceContent,
} from '../hash/index.js';
import { Slots } from '../runtime/index.js';
import {
  compareBytewise,
  formatSource,
  formatSourceList,
  type SourceRef,
} from '../sources/index.js';
import { findSources, type Workload } from '../workload/index.js';
import type { ConfigSource, LookupFailure, LookupResult } from './ports.js';

// --- the answer -------------------------------------------------------------------

interface SourceLookup {
  readonly ref: SourceRef;
  readonly result: LookupResult;
}

interface FailedLookup {
  readonly ref: SourceRef;
  readonly failure: LookupFailure;
  readonly detail: string;
}

interface EvaluationBase {
  /** Every lookup made, for metrics. */
  readonly lookups: readonly SourceLookup[];
  /** Annotation entries that were ignored, as warning text. */
  readonly problems: readonly string[];
}

/**
 * What new pods need and cannot find, so they will not start until it exists (docs/design.md
 * §4): a required source that is absent, or a required key (§3) of one that exists.
 */
export interface MissingRequired {
  readonly ref: SourceRef;
  /** The required key the object lacks; undefined when the object itself is absent. */
  readonly key?: string;
}

export type Evaluation = EvaluationBase &
  (
    | { readonly status: 'no-sources' }
    | {
        readonly status: 'unreadable';
        readonly failures: readonly FailedLookup[];
        readonly missingRequired: readonly MissingRequired[];
        /** How many sources the template names, when that is over MAX_SOURCES and nothing was read. */
        readonly tooManySources?: number;
      }
    | ({
        readonly status: 'hashed';
        /** The `sources` annotation value. */
        readonly sources: string;
        readonly missingRequired: readonly MissingRequired[];
      } & Digests)
  );

/** The content now, digested: what a write gets, and what the previous hash keys made of it. */
export interface Digests {
  /** The digest with the current hash key (docs/design.md §3): the `hash` a write gets. */
  readonly hash: string;
  /** The current hash key's id (hashKeyId): what `hash` was made with. */
  readonly keyId: string;
  /**
   * Whether `value` is the digest of the content now with one of the previous hash keys.
   * Their digests are computed when first asked: only a value other than `hash` needs them.
   */
  madeWithPreviousKey(value: string): boolean;
  /**
   * The digest of one source as selected, with the current key: what names its snapshot
   * (docs/design.md §13), for the content read now or an object found under that name.
   */
  digestOne(input: HashInput): string;
}

/** Which key made a hash that is current: the one writes use, or a previous one. */
export type CurrentHash = 'current-key' | 'previous-key';

/**
 * Whether a `hash` or `adopted-hash` value stands for the content now (docs/design.md §3,
 * "Digest"), and by which key; undefined when it does not. A digest with a previous key
 * is current, so that rotating the key rolls nothing. The one definition of "current"
 * that admission and follow mode share, and that plan and explain read through the
 * webhook's dry-run answer.
 */
export function isCurrentHash(
  value: string | undefined,
  digests: Digests,
): CurrentHash | undefined {
  if (value === undefined) return undefined;
  if (value === digests.hash) return 'current-key';
  return digests.madeWithPreviousKey(value) ? 'previous-key' : undefined;
}

export type Evaluator = (
  workload: Pick<Workload, 'template' | 'annotations'>,
  namespace: string,
  signal: AbortSignal,
) => Promise<Evaluation>;

export interface EvaluatorDependencies {
  readonly configSource: ConfigSource;
  /** The key every hash is written with. */
  readonly hashKey: Uint8Array;
  /** Keys hashes were written with before `hashKey`: their hashes stay current (a rotation). */
  readonly previousHashKeys?: readonly Uint8Array[];
  readonly memo?: HashMemo;
  /** Lookups in flight at once across all evaluations (default MAX_LOOKUPS_IN_FLIGHT of its own). */
  readonly lookupSlots?: Slots;
  /** Answer bytes held at once across all evaluations, one slot a byte (default MAX_ANSWER_BYTES of its own). */
  readonly answerBytes?: Slots;
}

// Bounds (docs/design.md §4): one review cannot drive thousands of GETs, nor take every socket.
/** A template naming more distinct sources is not read at all. */
export const MAX_SOURCES = 256;
/** Lookups of one evaluation in flight at once. */
export const MAX_LOOKUPS_PER_EVALUATION = 16;
/** Lookups in flight at once in the process (one evaluator per process serves admission). */
export const MAX_LOOKUPS_IN_FLIGHT = 256;
/**
 * Bytes of lookup answers held at once in the process, from their first byte until the
 * evaluation that read them is done with their content (a failed read's, at once). Without
 * it, 256 lookups of objects up to the API's ~1.5 MiB could hold 384 MiB, past the serving
 * container's 256 MiB limit; 32 MiB is what the request bodies read at once may hold too
 * (§4), so answers and bodies together stay at twice that, and 32 MiB is still a review
 * reading 32 full 1 MiB ConfigMaps, far past any real workload's config. A read that finds
 * no room fails at once rather than wait: an answer waits holding the bytes it already has,
 * so answers waiting on each other would hold the budget until every review's deadline.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** Shared by admission and follow mode: one definition of "the hash now". */
export function createEvaluator({
  configSource,
  hashKey,
  previousHashKeys = [],
  memo = new HashMemo(),
  lookupSlots = new Slots(MAX_LOOKUPS_IN_FLIGHT),
  answerBytes = new Slots(MAX_ANSWER_BYTES),
}: EvaluatorDependencies): Evaluator {
  const keys = createKeyring(hashKey, previousHashKeys);
  return async (workload, namespace, signal) => {
    const { sources, problems } = findSources(workload.template?.spec, workload.annotations);
    if (sources.length > MAX_SOURCES) {
      const tooManySources = sources.length;
      return {
        status: 'unreadable',
        failures: [],
        missingRequired: [],
        tooManySources,
        lookups: [],
        problems,
      };
    }
    const answers = new HeldAnswerBytes(answerBytes);
    const lookUp = async (ref: SourceRef): Promise<SourceLookup> => {
      // A lookup waiting for a slot at the deadline is a lookup that timed out; it sends nothing.
      if (!lookupSlots.tryTake() && !(await lookupSlots.take(signal))) {
        return { ref, result: WAITED_PAST_DEADLINE };
      }
      const answer = answers.forLookup();
      let kept = false;
      try {
        const result = await configSource.get(ref.kind, namespace, ref.name, signal, answer.count);
        kept = result.status !== 'failed';
        return { ref, result };
      } finally {
        answer.end(kept);
        lookupSlots.release();
      }
    };
    try {
      const lookups = await lookUpAll(sources, lookUp);
      return judge(keys, memo, namespace, { sources, lookups, problems });
    } finally {
      answers.releaseAll();
    }
  };
}

/**
 * What of `ref` new pods need and cannot find, given its content (undefined: the object is
 * absent). A required key of an absent object is the object's case: the object is what is
 * missing. The one definition admission, follow mode, plan and explain share.
 */
export function findMissingRequired(
  ref: SourceRef,
  content: SourceContent | undefined,
): MissingRequired[] {
  if (content === undefined) return ref.optional ? [] : [{ ref }];
  return [...ref.requiredKeys]
    .filter((key) => !content.has(key))
    .sort(compareBytewise)
    .map((key) => ({ ref, key }));
}

/** `configmap/app has no key "LOG_LEVEL"`, or `secret/db does not exist`: names, never values. */
export function formatMissingRequired({ ref, key }: MissingRequired): string {
  const what = key === undefined ? 'does not exist' : `has no key "${key}"`;
  return `${formatSource(ref)} ${what}`;
}

const WAITED_PAST_DEADLINE: LookupResult = {
  status: 'failed',
  failure: 'timeout',
  detail: 'deadline reached',
};

/**
 * In parallel, at most MAX_LOOKUPS_PER_EVALUATION at once: the deadline is for
 * all lookups together (docs/design.md §4). Results in the order of `sources`.
 */
/** What the lookups make of a workload's sources: no sources, unreadable, or hashed. */
function judge(
  keys: Keyring,
  memo: HashMemo,
  namespace: string,
  read: {
    readonly sources: readonly SourceRef[];
    readonly lookups: SourceLookup[];
    readonly problems: Evaluation['problems'];
  },
): Evaluation {
  const { sources, lookups, problems } = read;
  if (lookups.length === 0) return { status: 'no-sources', lookups, problems };
  const failures = lookups.flatMap(({ ref, result }) =>
    result.status === 'failed' ? [{ ref, failure: result.failure, detail: result.detail }] : [],
  );
  const missingRequired = lookups.flatMap(({ ref, result }) =>
    result.status === 'failed'
      ? []
      : findMissingRequired(ref, result.status === 'found' ? result.content : undefined),
  );
  if (failures.length > 0) {
    return { status: 'unreadable', failures, missingRequired, lookups, problems };
  }
  return {
    status: 'hashed',
    ...digestLookups(keys, memo, namespace, lookups),
    sources: formatSourceList(sources),
    missingRequired,
    lookups,
    problems,
  };
}

/**
 * The answer bytes one evaluation holds in the process's budget (MAX_ANSWER_BYTES): a kept
 * answer's stay until the evaluation is done with its content, a failed one's go back when
 * its lookup ends, and so do those of a lookup that ends after the evaluation is done (one
 * left running when another threw).
 */
class HeldAnswerBytes {
  #held = 0;
  #done = false;

  constructor(private readonly budget: Slots) {}

  /** `count` for one lookup's answer (false: no room), and `end` once the lookup is over. */
  forLookup() {
    let taken = 0;
    return {
      count: (bytes: number): boolean => {
        if (!this.budget.tryTake(bytes)) return false;
        taken += bytes;
        return true;
      },
      end: (kept: boolean): void => {
        if (kept && !this.#done) this.#held += taken;
        else if (taken > 0) this.budget.release(taken);
      },
    };
  }

  releaseAll(): void {
    this.#done = true;
    if (this.#held > 0) this.budget.release(this.#held);
    this.#held = 0;
  }
}

async function lookUpAll(
  sources: readonly SourceRef[],
  lookUp: (ref: SourceRef) => Promise<SourceLookup>,
): Promise<SourceLookup[]> {
  if (sources.length <= MAX_LOOKUPS_PER_EVALUATION) return Promise.all(sources.map(lookUp));
  const results: SourceLookup[] = new Array(sources.length);
  let next = 0;
  const worker = async () => {
    while (next < sources.length) {
      const index = next++;
      results[index] = await lookUp(sources[index]!);
    }
  };
  await Promise.all(Array.from({ length: MAX_LOOKUPS_PER_EVALUATION }, worker));
  return results;
}

interface Keyring {
  readonly current: NamespaceKeys;
  readonly previous: readonly NamespaceKeys[];
}

/** A previous key given twice, or equal to the current one, is digested once (or not at all). */
function createKeyring(hashKey: Uint8Array, previousHashKeys: readonly Uint8Array[]): Keyring {
  const current = new NamespaceKeys(hashKey);
  const previous = new Map<string, NamespaceKeys>();
  for (const key of previousHashKeys) {
    const keys = new NamespaceKeys(key);
    if (keys.id !== current.id && !previous.has(keys.id)) previous.set(keys.id, keys);
  }
  return { current, previous: [...previous.values()] };
}

function digestLookups(
  keyring: Keyring,
  memo: HashMemo,
  namespace: string,
  lookups: readonly SourceLookup[],
): Digests {
  const identity = lookupsIdentity(lookups);
  const digest = (keys: NamespaceKeys): string => {
    const remembered = identity === undefined ? undefined : memo.get(keys.id, namespace, identity);
    if (remembered !== undefined) return remembered;
    const hash = computeHash(keys.get(namespace), hashInputs(lookups));
    if (identity !== undefined) memo.set(keys.id, namespace, identity, hash);
    return hash;
  };
  // Per answer too: the memo cannot keep a digest whose objects have no identity.
  const previousDigests = new Map<NamespaceKeys, string>();
  const previousDigest = (keys: NamespaceKeys): string => {
    let hash = previousDigests.get(keys);
    if (hash === undefined) {
      hash = digest(keys);
      previousDigests.set(keys, hash);
    }
    return hash;
  };
  return {
    hash: digest(keyring.current),
    keyId: keyring.current.id,
    madeWithPreviousKey: (value) => keyring.previous.some((keys) => previousDigest(keys) === value),
    digestOne: (input) => computeHash(keyring.current.get(namespace), [input]),
  };
}

function hashInputs(lookups: readonly SourceLookup[]): HashInput[] {
  return lookups.map(({ ref, result }) => ({
    kind: ref.kind,
    name: ref.name,
    selection: ref.selection,
    content: result.status === 'found' ? result.content : undefined,
  }));
}

/** What went into a hash, by uid and resourceVersion; undefined when some object cannot say. */
function lookupsIdentity(lookups: readonly SourceLookup[]): string | undefined {
  const parts: string[] = [];
  for (const { ref, result } of lookups) {
    if (result.status === 'found' && (result.uid === '' || result.resourceVersion === '')) {
      return undefined;
    }
    const selection = ref.selection.all ? '*' : [...ref.selection.keys].sort().join('\0');
    const version =
      result.status === 'found' ? `${result.uid}@${result.resourceVersion}` : result.status;
    parts.push(`${ref.kind}/${ref.name}\t${version}\t${selection}`);
  }
  return parts.sort().join('\n');
}
