// "waits for approval" (docs/design.md §6 and §9): with the follower's --follow-max-fanout,
// a change of a source in a follow namespace that more handled workloads read than that
// waits for someone to approve it before follow mode rolls any of them. The follower's
// rule (workload/fanout-size.ts), counted from what the plan already read: the content
// changes (any key: the digest is of the whole source), and the readers are those the
// decision table hands to follow mode (workload/handled.ts).

import { findLiveSources } from '../snapshot/index.js';
import type { NamedSource } from '../sources/index.js';
import { decideHandled, isFanoutLimitOff, isLargeFanout, standingOf } from '../workload/index.js';
import { changesHash, compareContent } from './compare.js';
import type { Context, PlanTarget } from './context.js';
import { sourceKey } from './manifests.js';

interface ApprovalWait {
  /** `configmap/NAME` or `secret/NAME`. */
  readonly source: string;
  readonly readers: number;
}

/** The waiting sources a target reads; none for a workload of the manifests (its write rolls it). */
export type WaitsOf = (target: PlanTarget) => ApprovalWait[];

/**
 * Which of the manifests' sources wait for approval, and so which live readers wait: each
 * target's sources are discovered once, for the counts and the answers alike.
 */
export async function findApprovalWaits(
  context: Context,
  targets: readonly PlanTarget[],
): Promise<WaitsOf> {
  if (isFanoutLimitOff(context.options.maxFanout) || !context.cluster) return () => [];
  const reads = new Map(targets.map((target) => [target, sourcesRead(target)]));
  const waits = new Map<string, number>();
  for (const { namespace, source } of context.manifests.configs) {
    const mode = await context.mode(namespace);
    if (mode.status !== 'found') continue;
    const standing = standingOf('follow', mode.value, mode.workloads);
    if (standing === 'not-opted-in') continue;
    const key = sourceKey(namespace, source);
    const readers = targets.filter(
      (target) =>
        target.namespace === namespace &&
        decideHandled(target.workload.annotations, standing).handled &&
        reads.get(target)!.has(key),
    ).length;
    if (!isLargeFanout(readers, context.options.maxFanout)) continue;
    if (await contentChanges(context, namespace, source, key)) waits.set(key, readers);
  }
  return (target) => {
    if (target.live === undefined) return [];
    return [...(reads.get(target) ?? [])].flatMap((key) => {
      const readers = waits.get(key);
      const source = key.slice(target.namespace.length + 1);
      return readers === undefined ? [] : [{ source, readers }];
    });
  };
}

/** The plan's line for one wait. */
export function describeWait({ source, readers }: ApprovalWait, maxFanout: number): string {
  return `waits for approval: ${readers} workloads read ${source}, more than --follow-max-fanout ${maxFanout}; follow mode rolls them once the digest its FanoutAwaitsApproval Event names is approved`;
}

/** The `sourceKey`s of what the target reads, by the webhook's discovery. */
function sourcesRead(target: PlanTarget): ReadonlySet<string> {
  const { sources } = findLiveSources(target.workload.template, target.workload.annotations);
  return new Set(sources.map((ref) => sourceKey(target.namespace, ref)));
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
