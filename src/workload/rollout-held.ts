// What a template change does to a workload's pods (docs/design.md §4, the two
// rollout rows): nothing at all (OnDelete, paused, a partition at or above the
// replicas), only some of them (a partition above 0), or all of them at once
// (Recreate: every pod stops before new ones start). Each kind says which of
// these fields it has through its `rollout` model (kinds.ts).

import type { WorkloadKind } from './kinds.js';
import { isObject, type JsonObject, objectAt } from './object.js';

/**
 * `held`: no pod is replaced; `partial`: some pods keep the old config;
 * `outage`: every pod is replaced, none serving meanwhile.
 */
type RolloutEffect = 'held' | 'partial' | 'outage';

interface RolloutNotice {
  readonly effect: RolloutEffect;
  /** Plain words for a warning or an Event; names fields, never content. */
  readonly text: string;
}

/** What a template change will not do by itself; undefined when the pods simply roll. */
export function rolloutNotice(object: JsonObject, kind: WorkloadKind): RolloutNotice | undefined {
  const spec = objectAt(object, ['spec']);
  if (!spec) return undefined;
  switch (kind.rollout) {
    case 'deployment':
      return pausedNotice(spec.paused) ?? recreateNotice(objectAt(spec, ['strategy']));
    case 'argo-rollout':
      return pausedNotice(spec.paused);
    case 'statefulset':
      return statefulSetNotice(spec);
    case 'daemonset':
      return onDeleteNotice(objectAt(spec, ['updateStrategy']));
    case 'cloneset':
      return cloneSetNotice(spec);
    case 'unknown':
      return undefined;
  }
}

/** Why the pods keep their old config after a template change; undefined when they roll. */
export function rolloutHeld(object: JsonObject, kind: WorkloadKind): string | undefined {
  const notice = rolloutNotice(object, kind);
  return notice?.effect === 'held' ? notice.text : undefined;
}

function pausedNotice(paused: unknown, field = 'paused'): RolloutNotice | undefined {
  return paused === true
    ? { effect: 'held', text: `${field}: pods keep the old config until it is resumed` }
    : undefined;
}

function recreateNotice(strategy: JsonObject | undefined): RolloutNotice | undefined {
  return strategy?.type === 'Recreate'
    ? {
        effect: 'outage',
        text: 'strategy Recreate: every pod stops before new ones start; this config change is an outage',
      }
    : undefined;
}

function onDeleteNotice(strategy: JsonObject | undefined): RolloutNotice | undefined {
  return strategy?.type === 'OnDelete'
    ? {
        effect: 'held',
        text: 'updateStrategy OnDelete: pods keep the old config until they are deleted',
      }
    : undefined;
}

/** apps/v1 and OpenKruise's Advanced StatefulSet (which can also pause its rolling update). */
function statefulSetNotice(spec: JsonObject): RolloutNotice | undefined {
  const strategy = objectAt(spec, ['updateStrategy']);
  const rollingUpdate = objectAt(strategy, ['rollingUpdate']);
  return (
    onDeleteNotice(strategy) ??
    pausedNotice(rollingUpdate?.paused, 'rollingUpdate.paused') ??
    partitionNotice('rollingUpdate.partition', rollingUpdate?.partition, spec.replicas)
  );
}

/** OpenKruise CloneSet: `updateStrategy.paused` and `updateStrategy.partition`. */
function cloneSetNotice(spec: JsonObject): RolloutNotice | undefined {
  const strategy = isObject(spec.updateStrategy) ? spec.updateStrategy : {};
  return (
    pausedNotice(strategy.paused, 'updateStrategy.paused') ??
    partitionNotice('updateStrategy.partition', strategy.partition, spec.replicas)
  );
}

/**
 * A partition keeps that many pods on the old template (StatefulSet: the
 * ordinals below it). A percentage (CloneSet) is counted against the replicas.
 */
function partitionNotice(
  field: string,
  partition: unknown,
  replicasField: unknown,
): RolloutNotice | undefined {
  const replicas = typeof replicasField === 'number' ? replicasField : 1;
  const kept = partitionCount(partition, replicas);
  if (kept === undefined || kept <= 0) return undefined;
  if (kept >= replicas) {
    return {
      effect: 'held',
      text: `${field} ${String(partition)} ≥ replicas ${replicas}: pods keep the old config until it is lowered`,
    };
  }
  return {
    effect: 'partial',
    text: `${field} ${String(partition)}: ${kept} of ${replicas} pods keep the old config until it is lowered`,
  };
}

function partitionCount(partition: unknown, replicas: number): number | undefined {
  if (typeof partition === 'number') return partition;
  const percent = typeof partition === 'string' ? /^(\d+)%$/.exec(partition) : null;
  // Rounded up, as Kruise does (CalculatePartitionReplicas, pkg/util/tools.go, v1.8.2).
  return percent ? Math.ceil((replicas * Number(percent[1])) / 100) : undefined;
}
