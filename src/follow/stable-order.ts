// The one order of a source's readers (docs/design.md §6): canaries are chosen in it, the
// rest of a fan-out is touched in it, and approval evaluates readers in it.

import type { Reader } from './reference-index.js';

/** Kind, then name. */
export function inStableOrder<T extends Pick<Reader, 'ref'>>(readers: readonly T[]): T[] {
  return [...readers].sort((a, b) => {
    const byKind = a.ref.kind.kind.localeCompare(b.ref.kind.kind);
    return byKind !== 0 ? byKind : a.ref.name.localeCompare(b.ref.name);
  });
}
