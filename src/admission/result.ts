// What an admission review produces, as the server sees it: the contract
// between the use case (mutate.ts builds it) and the HTTP edge (server/ turns it
// into a response, a log line and metrics). Types only.

import type { LookupFailure } from '../evaluate/index.js';
import type { JsonPatchOperation } from '../patch/index.js';
import type { SourceKind } from '../sources/index.js';
import type { AdmissionRequest } from './review-types.js';

export type Outcome =
  /** The patch writes a new hash or sources into the template. */
  | 'patched'
  /** The workload was adopted: `adopted-hash` written, template untouched. */
  | 'adopted'
  /** Everything already as it should be. */
  | 'unchanged'
  /** A lookup failed or a required source is missing: previous values kept. */
  | 'kept-old'
  /** Not ours to touch: other kind, subresource, DELETE, opted out, not annotated where that is required. */
  | 'skipped';

export interface LookupRecord {
  readonly kind: SourceKind;
  readonly result: 'found' | 'absent' | LookupFailure;
}

export interface MutationResult {
  readonly outcome: Outcome;
  readonly patch: readonly JsonPatchOperation[];
  readonly warnings: readonly string[];
  readonly lookups: readonly LookupRecord[];
  /** An UPDATE whose template hash now differs from oldObject's: it will roll. */
  readonly hashChanged: boolean;
  /** The hash kept is current but was made with a previous hash key (a rotation not yet done). */
  readonly previousKeyHash?: true;
  /** Why nothing was looked at, for `skipped`. */
  readonly skipReason?: string;
  /** The same, as one of a few words: a metric label. */
  readonly skipCode?: SkipCode;
  /** What became of each snapshot the review made sure of (docs/design.md §13). */
  readonly snapshots?: readonly SnapshotResult[];
}

/** A snapshot made, found made, to be made (a dry run), or not made. */
export type SnapshotResult = 'created' | 'reused' | 'would-create' | 'failed';

/** Why a review was skipped, in few enough words for a metric label. */
export type SkipCode =
  /** Not a write confighash handles: operation, subresource, kind, opted out, not annotated where the namespace opts workloads in one at a time, no template. */
  | 'not-handled'
  /** The namespace is not opted in as confighash sees it, or is excluded (docs/design.md §4). */
  | 'namespace-not-opted-in';

export interface Mutator {
  review(request: AdmissionRequest, signal: AbortSignal): Promise<MutationResult>;
}
