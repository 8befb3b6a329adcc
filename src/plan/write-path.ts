// Whether a write that changes the hash reaches the pods: it must reach the webhook
// (server-side, a changed client-side apply, or follow mode's touch) and the
// workload's rollout must not be held.

import {
  ADOPTED_HASH,
  annotationsAt,
  deepEqual,
  HASH,
  isObject,
  type JsonObject,
  LAST_APPLIED,
  type NamespaceMode,
  readWorkload,
  rolloutHeld,
} from '../workload/index.js';
import type { Context, PlanTarget } from './context.js';
import type { FollowLeader, Read } from './ports.js';
import { describeTemplateChange } from './template-change.js';

interface WriteDecision {
  readonly rolls: boolean;
  readonly reasons: readonly string[];
}

/**
 * The selected content changes; whether that reaches the pods. `leader`: the follower's
 * Lease, read in a follow namespace.
 */
export function decideWrite(
  context: Context,
  target: PlanTarget,
  live: JsonObject,
  mode: Exclude<NamespaceMode, 'none'>,
  leader?: Read<FollowLeader>,
): WriteDecision {
  const liveWorkload = readWorkload(live, target.workload.kind);
  const templateHash = annotationsAt(liveWorkload.template, ['metadata'])[HASH];
  if (templateHash === undefined && liveWorkload.annotations[ADOPTED_HASH] === undefined) {
    return {
      rolls: false,
      reasons: ['never hashed yet: the next write adopts it without a restart'],
    };
  }
  const written = writtenBy(context, target, live);
  if (written !== 'webhook') {
    if (mode === 'true') {
      const why = target.live
        ? `nothing writes it: ${written}, and namespace ${target.namespace} is "true" (touch it or apply it server-side)`
        : `the write will not reach the webhook: ${written}`;
      return { rolls: false, reasons: [why] };
    }
    if (leader?.status === 'found' && leader.value.holder === null) {
      const why = `${leader.value.lease}: ${leader.value.vacant ?? 'no holder'}`;
      return {
        rolls: false,
        reasons: [
          `nothing writes it: ${written}, and no follower is leading (Lease ${why}); it rolls once one leads, or when you touch it`,
        ],
      };
    }
    const follow = `follow mode touches it: ${written}, and namespace ${target.namespace} is "follow"`;
    const unknown =
      leader?.status === 'failed'
        ? [
            `you cannot read the follower's Lease (${leader.detail}): whether one leads is not known`,
          ]
        : [];
    return held(target, live) ?? { rolls: true, reasons: [follow, ...unknown] };
  }
  return held(target, live) ?? { rolls: true, reasons: [] };
}

/** The pod template itself changes: the write rolls it, whatever the config, unless nothing is written. */
export function decideTemplateWrite(
  context: Context,
  target: PlanTarget,
  live: JsonObject,
  differences: readonly string[],
): WriteDecision | undefined {
  if (differences.length === 0 || writtenBy(context, target, live) !== 'webhook') return undefined;
  return held(target, live) ?? { rolls: true, reasons: [describeTemplateChange(differences)] };
}

/** 'webhook' when the apply writes the workload, else why nothing reaches the webhook. */
export function writtenBy(context: Context, target: PlanTarget, live: JsonObject): string {
  if (target.live) return 'it is not in the manifests';
  if (context.options.clientSide && unchangedSinceLastApply(target.workload.object, live)) {
    return 'a client-side apply of an unchanged workload sends nothing';
  }
  return 'webhook';
}

export function held(target: PlanTarget, live: JsonObject): WriteDecision | undefined {
  const reason = rolloutHeld(target.live ? live : target.workload.object, target.workload.kind);
  return reason ? { rolls: false, reasons: [reason] } : undefined;
}

/** kubectl sends no patch when the manifest equals the last-applied configuration it recorded. */
function unchangedSinceLastApply(manifest: JsonObject, live: JsonObject): boolean {
  const recorded = annotationsAt(live, ['metadata'])[LAST_APPLIED];
  if (recorded === undefined) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(recorded);
  } catch {
    return false;
  }
  return deepEqual(comparable(parsed), comparable(manifest));
}

/** kubectl records the namespace it applied to, and never itself. */
function comparable(object: unknown): unknown {
  if (!isObject(object) || !isObject(object.metadata)) return object;
  const { namespace: _namespace, ...metadata }: Record<string, unknown> = object.metadata;
  const annotations: Record<string, unknown> | undefined = isObject(metadata.annotations)
    ? { ...metadata.annotations }
    : undefined;
  if (annotations) {
    delete annotations[LAST_APPLIED];
    if (Object.keys(annotations).length === 0) delete metadata.annotations;
    else metadata.annotations = annotations;
  }
  return { ...object, metadata };
}
