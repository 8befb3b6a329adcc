// "waits for approval" (docs/design.md §6 and §9): with the follower's --follow-max-fanout,
// a change of a source in a follow namespace that more handled workloads read than that
// waits for someone to approve it before follow mode rolls any of them. The same rule as
// the follower's (src/follow/approval.ts), counted from what the plan already read: the
// content changes (any key: the digest is of the whole source), and the readers are those
// the namespace hands over.

import { compareSources, formatSource, type NamedSource } from '../sources/index.js';
import { ENABLED, findSources, isWorkloadHandled } from '../workload/index.js';
import { changesHash, compareContent } from './compare.js';
import type { Context, Target } from './context.js';
import { sourceKey } from './manifests.js';

/** The manifests' sources whose change waits for approval: `sourceKey` → how many workloads read it. */
export async function findApprovalWaits(
  context: Context,
  targets: readonly Target[],
): Promise<ReadonlyMap<string, number>> {
  const waits = new Map<string, number>();
  if (context.options.maxFanout === 0 || !context.cluster) return waits;
  for (const { namespace, source } of context.manifests.configs) {
    const mode = await context.mode(namespace);
    if (mode.status !== 'found' || mode.value !== 'follow') continue;
    const readers = targets.filter(
      (target) =>
        target.namespace === namespace &&
        target.workload.annotations[ENABLED] !== 'false' &&
        isWorkloadHandled(target.workload.annotations, mode.workloads) &&
        readsSource(target, source),
    ).length;
    if (readers <= context.options.maxFanout) continue;
    const key = sourceKey(namespace, source);
    if (await contentChanges(context, namespace, source, key)) waits.set(key, readers);
  }
  return waits;
}

export interface ApprovalWait {
  /** `configmap/NAME` or `secret/NAME`. */
  readonly source: string;
  readonly readers: number;
}

/** The waiting sources a live reader reads: the manifests' own workloads roll by their write. */
export function waitsOf(target: Target, waits: ReadonlyMap<string, number>): ApprovalWait[] {
  if (waits.size === 0 || target.live === undefined) return [];
  const { sources } = findSources(target.workload.template?.spec, target.workload.annotations);
  return sources.flatMap((ref) => {
    const readers = waits.get(sourceKey(target.namespace, ref));
    return readers === undefined ? [] : [{ source: formatSource(ref), readers }];
  });
}

/** The plan's line for one wait. */
export function describeWait({ source, readers }: ApprovalWait, maxFanout: number): string {
  return `waits for approval: ${readers} workloads read ${source}, more than --follow-max-fanout ${maxFanout}; follow mode rolls them once the digest its FanoutAwaitsApproval Event names is approved`;
}

function readsSource(target: Target, source: NamedSource): boolean {
  const { sources } = findSources(target.workload.template?.spec, target.workload.annotations);
  return sources.some((ref) => compareSources(ref, source) === 0);
}

async function contentChanges(
  context: Context,
  namespace: string,
  source: NamedSource,
  key: string,
): Promise<boolean> {
  const live = await context.liveSource(namespace, source);
  if (live.status === 'failed') return false;
  const before = live.status === 'found' ? live.content : undefined;
  return changesHash(compareContent({ all: true }, before, context.manifests.sources.get(key)));
}
