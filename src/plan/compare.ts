// "Compares selected content directly" (docs/design.md §9): which keys of one source
// differ between the cluster now and the manifests, split by whether the
// workload selects them. Values are compared as the bytes the hash reads, and
// never leave this module: only key names do.

import type { EncodedValue, SourceContent } from '../hash/index.js';
import { compareBytewise, type KeySelection } from '../sources/index.js';

export interface SourceComparison {
  /** The object exists on one side only (created by the manifests). */
  readonly presenceChanged: boolean;
  /** Changed keys the workload selects, in byte order. */
  readonly selected: readonly string[];
  /** Changed keys it does not select. */
  readonly unselected: readonly string[];
}

/** `undefined` content: the object does not exist. */
export function compareContent(
  selection: KeySelection,
  before: SourceContent | undefined,
  after: SourceContent | undefined,
): SourceComparison {
  const keys = new Set([...(before?.keys() ?? []), ...(after?.keys() ?? [])]);
  const changed = [...keys]
    .filter((key) => !sameValue(before?.get(key), after?.get(key)))
    .sort(compareBytewise);
  const isSelected = (key: string) => selection.all || selection.keys.has(key);
  return {
    presenceChanged: (before === undefined) !== (after === undefined),
    selected: changed.filter(isSelected),
    unselected: changed.filter((key) => !isSelected(key)),
  };
}

/** True when the hash of the selection differs: a selected key or the object's presence. */
export function changesHash(change: SourceComparison): boolean {
  return change.presenceChanged || change.selected.length > 0;
}

function sameValue(a: EncodedValue | undefined, b: EncodedValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.encoding === b.encoding && a.text === b.text) return true;
  return Buffer.from(a.text, a.encoding).equals(Buffer.from(b.text, b.encoding));
}
