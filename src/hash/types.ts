// The vocabulary of the v1 hash (DESIGN.md §3): what a source is, which of its
// keys count, and what its content is once fetched.

export type SourceKind = 'ConfigMap' | 'Secret';

/** All keys of the object, or exactly these (unsorted; the encoder sorts). */
export type KeySelection =
  | { readonly all: true }
  | { readonly all: false; readonly keys: ReadonlySet<string> };

export interface SourceRef {
  readonly kind: SourceKind;
  readonly name: string;
  readonly selection: KeySelection;
  /** True only when every reference to the object is marked optional. */
  readonly optional: boolean;
}

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
