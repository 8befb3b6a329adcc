// How plan and explain name things for people: a selection as `all keys` or
// `keys a, b`, a list of key names (a workload: workload/kinds.ts formatWorkload). Names only, never values.

import {
  compareBytewise,
  formatSource,
  type KeySelection,
  type SourceRef,
} from '../sources/index.js';

/** The selected keys: `all`, or the list in byte order. */
export function selectionKeys(selection: KeySelection): 'all' | string[] {
  return selection.all ? 'all' : [...selection.keys].sort(compareBytewise);
}

export function describeSelection(ref: SourceRef): string {
  const keys = selectionKeys(ref.selection);
  const what =
    keys === 'all' ? 'all keys' : `${keys.length === 1 ? 'key' : 'keys'} ${keys.join(', ')}`;
  return `${formatSource(ref)} (${what})`;
}
