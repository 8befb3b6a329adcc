// The source vocabulary (docs/design.md §2, §3): what a source is, which of its keys
// count, how sources are ordered, and the `configmap/NAME` text that the
// include/exclude and sources annotations use and follow mode matches watch
// events on. Discovery, hashing, admission and follow mode all import it from
// here; nothing else spells these out.

export type SourceKind = 'ConfigMap' | 'Secret';

/** The API's plural resource name of each kind, as in its URL paths. */
export type SourceResource = 'configmaps' | 'secrets';

export const SOURCE_RESOURCE: Readonly<Record<SourceKind, SourceResource>> = {
  ConfigMap: 'configmaps',
  Secret: 'secrets',
};

/** All keys of the object, or exactly these (unsorted; the encoder sorts). */
export type KeySelection =
  | { readonly all: true }
  | { readonly all: false; readonly keys: ReadonlySet<string> };

export interface NamedSource {
  readonly kind: SourceKind;
  readonly name: string;
}

export interface SourceRef extends NamedSource {
  readonly selection: KeySelection;
  /** True only when every reference to the object is marked optional. */
  readonly optional: boolean;
  /**
   * Keys a reference not marked optional names (`items[].key`, a key ref): pods do not start
   * while the object lacks one (docs/design.md §3 "Required keys"). Beside the selection, not
   * in it: a whole reference makes the selection "all" and leaves them required, and the
   * encoding never reads them, so optionality changes no hash.
   */
  readonly requiredKeys: ReadonlySet<string>;
}

// --- order ----------------------------------------------------------------------

// Byte order of UTF-8 strings, which is code point order. JavaScript's `<`
// compares UTF-16 code units and disagrees with it for astral characters, so it
// is used only when both strings are free of surrogates (always, for names and
// keys the API accepts).
const SURROGATE = /[\uD800-\uDFFF]/;

export function compareBytewise(a: string, b: string): number {
  if (a === b) return 0;
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const KIND_ORDER: Readonly<Record<SourceKind, number>> = { ConfigMap: 0, Secret: 1 };

/** ConfigMap before Secret, then by name in byte order (docs/design.md §3). */
export function compareSources(a: NamedSource, b: NamedSource): number {
  return KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || compareBytewise(a.name, b.name);
}

// --- text -----------------------------------------------------------------------

const PREFIX: Readonly<Record<SourceKind, string>> = { ConfigMap: 'configmap', Secret: 'secret' };

/** `configmap/NAME` or `secret/NAME`. */
export function formatSource(source: NamedSource): string {
  return `${PREFIX[source.kind]}/${source.name}`;
}

/** The source a watch event of `resource` names. */
export function sourceOfResource(resource: SourceResource, name: string): NamedSource {
  return { kind: resource === 'configmaps' ? 'ConfigMap' : 'Secret', name };
}

/** `sources` annotation value: `configmap/a,secret/b`, in hash order. */
export function formatSourceList(sources: readonly NamedSource[]): string {
  return [...sources].sort(compareSources).map(formatSource).join(',');
}

/** How warnings name a source: `ConfigMap app-config`. */
export function describeSource(source: NamedSource): string {
  return `${source.kind} ${source.name}`;
}

/**
 * Parses `configmap/NAME,secret/NAME` (the include/exclude annotations).
 * Kinds are case-insensitive; blanks around entries and empty entries are ignored.
 */
export function parseSourceList(value: string | undefined): {
  refs: NamedSource[];
  invalid: string[];
} {
  const refs: NamedSource[] = [];
  const invalid: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const match = /^(configmap|secret)\/([^/\s]+)$/i.exec(entry);
    if (!match) {
      invalid.push(entry);
      continue;
    }
    const kind: SourceKind = match[1]!.toLowerCase() === 'configmap' ? 'ConfigMap' : 'Secret';
    refs.push({ kind, name: match[2]! });
  }
  return { refs, invalid };
}
