// The inputs of the hash (docs/design.md §3): a source's content once fetched.
// What a source is and which of its keys count is src/sources/vocabulary.ts.

import type { KeySelection, SourceKind } from '../sources/index.js';

/**
 * A key's value as the API returns it, left in its wire form so that hashing
 * can feed it to HMAC without building intermediate buffers.
 */
export interface EncodedValue {
  readonly text: string;
  readonly encoding: 'utf8' | 'base64';
}

/** The hash-relevant content of a ConfigMap or Secret: its keys and values only. */
export type SourceContent = ReadonlyMap<string, EncodedValue>;

export interface HashInput {
  readonly kind: SourceKind;
  readonly name: string;
  readonly selection: KeySelection;
  /** undefined: the object does not exist. */
  readonly content: SourceContent | undefined;
}
