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

const KIND_ORDER = { ConfigMap: 0, Secret: 1 } as const;

/** ConfigMap before Secret, then by name in byte order (DESIGN.md §3). */
export function compareSources(
  a: { readonly kind: keyof typeof KIND_ORDER; readonly name: string },
  b: { readonly kind: keyof typeof KIND_ORDER; readonly name: string },
): number {
  return KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || compareBytewise(a.name, b.name);
}
