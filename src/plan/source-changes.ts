// What the manifests change in a workload's sources: the webhook's own discovery,
// the selected content compared live now against as the manifests leave it.

import { findMissingRequired, type MissingRequired } from '../evaluate/index.js';
import { findLiveSources } from '../snapshot/index.js';
import { formatSource, type SourceRef } from '../sources/index.js';
import { EXCLUDE, LIVE_RELOAD, type Workload } from '../workload/index.js';
import { changesHash, compareContent, type SourceComparison } from './compare.js';
import type { Context } from './context.js';
import { sourceKey } from './manifests.js';

export interface Compared {
  readonly ref: SourceRef;
  readonly change: SourceComparison;
  /** Absent after the apply although required, or lacking a required key (docs/design.md §4). */
  readonly missingRequired: readonly MissingRequired[];
}

export interface Discovery {
  readonly sources: readonly SourceRef[];
  /** Sources the `exclude` or `live-reload` annotation leaves out, and which of them does. */
  readonly leftOut: readonly { readonly ref: SourceRef; readonly why: string }[];
  readonly notes: readonly string[];
}

/** The webhook's discovery, and once more without each annotation that drops sources, to name them. */
export function discover(workload: Workload): Discovery {
  const { sources, problems } = findLiveSources(workload.template, workload.annotations);
  const kept = new Set(sources.map(formatSource));
  const leftOut = LEAVING_OUT.flatMap(({ annotation, why }) => {
    const { [annotation]: _dropped, ...without } = workload.annotations;
    return findLiveSources(workload.template, without)
      .sources.filter((ref) => !kept.has(formatSource(ref)))
      .map((ref) => ({ ref, why }));
  });
  return { sources, leftOut, notes: [...problems] };
}

const LEAVING_OUT = [
  { annotation: EXCLUDE, why: `${EXCLUDE} leaves it out` },
  {
    annotation: LIVE_RELOAD,
    why: `${LIVE_RELOAD}: mounted without subPath, the pods reload it without a restart`,
  },
] as const;

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
    missingRequired: findMissingRequired(ref, after),
  };
}

/** Left-out sources whose content changes: worth saying why they roll nothing. */
export async function leftOutChanges(
  context: Context,
  namespace: string,
  discovery: Discovery,
): Promise<string[]> {
  const notes: string[] = [];
  for (const { ref, why } of discovery.leftOut) {
    const compared = await compareSource(context, namespace, ref);
    if (typeof compared !== 'string' && changesHash(compared.change)) {
      notes.push(`${formatSource(ref)} changes, but ${why}`);
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

/** Why the webhook keeps the previous hash: what pods would need and not find. */
export function describeMissing({ ref, key }: MissingRequired): string {
  const what = key === undefined ? 'does not exist' : `has no key "${key}"`;
  return `${formatSource(ref)} ${what}: the webhook keeps the previous hash`;
}

export function describeChange({ ref, change }: Compared): string {
  if (change.presenceChanged) return `${formatSource(ref)} is created`;
  return `${formatSource(ref)} changes: ${change.selected.join(', ')}`;
}
