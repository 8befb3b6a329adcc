// How plan and explain name things for people: `deployment/web`, a selection as
// `all keys` or `keys a, b`, a list of key names. Names only, never values.

import {
  compareBytewise,
  formatSource,
  type KeySelection,
  type SourceRef,
} from '../sources/index.js';
import type { WorkloadKind } from '../workload/index.js';

/**
 * `deployment/web`, as kubectl names it; other groups' kinds with their group
 * (`rollout.argoproj.io/web`), so that Kruise's StatefulSet is not read as apps/v1's.
 */
export function formatWorkload(kind: Pick<WorkloadKind, 'kind' | 'group'>, name: string): string {
  const qualified = kind.group === 'apps' ? '' : `.${kind.group}`;
  return `${kind.kind.toLowerCase()}${qualified}/${name}`;
}

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
