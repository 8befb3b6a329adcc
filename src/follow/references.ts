// What one workload references (docs/design.md §6 "A reference index, not a cache"): read from a listed or
// watched object with the same discovery code as admission, and nothing more is
// kept of it — its ref, the sources it reads, the hash it carries and the versions
// the webhook read for that hash.

import { findLiveSources } from '../snapshot/index.js';
import { formatSource } from '../sources/index.js';
import {
  ADOPTED_HASH,
  annotationsAt,
  CANARY,
  HASH,
  HASHED_VERSIONS,
  isObject,
  readHashedVersions,
  readWorkload,
  rolloutIsObservable,
  type WorkloadKind,
} from '../workload/index.js';
import { refOf, type WorkloadRef } from './workload-ref.js';

/** A workload, the sources it reads (`configmap/NAME` / `secret/NAME`) and its hash. */
export interface References {
  readonly ref: WorkloadRef;
  readonly sources: readonly string[];
  /** The template's `confighash.dev/hash` (or `adopted-hash`); undefined when it has none. */
  readonly hash: string | undefined;
  /**
   * The version of each of `sources` (same order) the webhook read for `hash`, from its
   * `confighash.dev/hashed-versions` (docs/design.md §6); undefined when it has none that
   * matches the hash and the sources as the template selects them now.
   */
  readonly hashedVersions: readonly (string | undefined)[] | undefined;
  /** Annotated `confighash.dev/canary: "true"`: touched first in a fan-out (docs/design.md §6). */
  readonly canary: boolean;
  /** Its kind's status tells when its rollout finished, so it can be a canary. */
  readonly observable: boolean;
}

/**
 * What a listed or watched object references; undefined when it has no name or namespace.
 * `hashKeyId`: of the key the follower hashes with (its hashed-versions count only for it).
 */
export function readReferences(
  object: unknown,
  kind: WorkloadKind,
  hashKeyId: string,
): References | undefined {
  if (!isObject(object)) return undefined;
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const ref = namespace === '' ? undefined : refOf(object, kind, namespace);
  if (!ref) return undefined;
  const workload = readWorkload(object, kind);
  // A snapshot workload reads its sources through its copies: the index holds the sources (§13).
  const sources = findLiveSources(workload.template, workload.annotations).sources;
  const hash =
    annotationsAt(workload.template, ['metadata'])[HASH] ?? workload.annotations[ADOPTED_HASH];
  return {
    ref,
    sources: sources.map(formatSource),
    hash,
    hashedVersions: readHashedVersions(
      workload.annotations[HASHED_VERSIONS],
      { keyId: hashKeyId, hash },
      sources,
    ),
    canary: workload.annotations[CANARY] === 'true',
    observable: rolloutIsObservable(object, kind),
  };
}
