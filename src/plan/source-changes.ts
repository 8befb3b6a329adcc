// What the manifests change in a workload's sources: the webhook's own discovery,
// the selected content compared live now against as the manifests leave it.

import { formatSource, type SourceRef } from '../sources.js';
import { EXCLUDE, findSources, type Workload } from '../workload/index.js';
import { changesHash, compareContent, type SourceChange } from './compare.js';
import type { Context } from './context.js';
import { sourceKey } from './manifests.js';

export interface Compared {
  readonly ref: SourceRef;
  readonly change: SourceChange;
  /** Absent after the apply although required. */
  readonly missingRequired: boolean;
}

export interface Discovery {
  readonly sources: readonly SourceRef[];
  /** Sources the `exclude` annotation removes. */
  readonly excluded: readonly SourceRef[];
  readonly notes: readonly string[];
}

/** The webhook's discovery, and once more without `exclude` to name what it removes. */
export function discover(workload: Workload): Discovery {
  const { sources, problems } = findSources(workload.template?.spec, workload.annotations);
  const { [EXCLUDE]: _exclude, ...withoutExclude } = workload.annotations;
  const kept = new Set(sources.map(formatSource));
  const excluded = findSources(workload.template?.spec, withoutExclude).sources.filter(
    (ref) => !kept.has(formatSource(ref)),
  );
  return { sources, excluded, notes: [...problems] };
}

/** One source, live now against as the manifests leave it; a string when it cannot be read. */
export async function compareSource(
  context: Context,
  namespace: string,
  ref: SourceRef,
): Promise<Compared | string> {
  const before = await context.liveSource(namespace, ref);
  if (before.status === 'failed') return `cannot read ${formatSource(ref)}: ${before.detail}`;
  const beforeContent = before.status === 'found' ? before.content : undefined;
  const fromManifests = context.manifests.sources.get(sourceKey(namespace, ref));
  const after = fromManifests ?? beforeContent;
  return {
    ref,
    change: compareContent(ref.selection, beforeContent, after),
    missingRequired: after === undefined && !ref.optional,
  };
}

/** Excluded sources whose content changes: worth saying why they roll nothing. */
export async function excludedChanges(
  context: Context,
  namespace: string,
  discovery: Discovery,
): Promise<string[]> {
  const notes: string[] = [];
  for (const ref of discovery.excluded) {
    const compared = await compareSource(context, namespace, ref);
    if (typeof compared !== 'string' && changesHash(compared.change)) {
      notes.push(`${formatSource(ref)} changes, but ${EXCLUDE} leaves it out`);
    }
  }
  return notes;
}

export function unchangedReasons(results: readonly Compared[]): string[] {
  const unselected = results.filter(({ change }) => change.unselected.length > 0);
  if (unselected.length === 0) return ['no selected key changes'];
  return unselected.map(
    ({ ref, change }) =>
      `only unselected keys of ${formatSource(ref)} change (${change.unselected.join(', ')})`,
  );
}

export function describeChange({ ref, change }: Compared): string {
  if (change.presenceChanged) return `${formatSource(ref)} is created`;
  return `${formatSource(ref)} changes: ${change.selected.join(', ')}`;
}
