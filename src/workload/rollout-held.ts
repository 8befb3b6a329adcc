// Workloads whose pods do not follow a template change by themselves (DESIGN.md
// §4): OnDelete, a paused Deployment, a StatefulSet partition at or above its
// replicas. A new hash lands in the template, but no pod is replaced.

import type { WorkloadKind } from './kinds.js';
import { isObject, type JsonObject, objectAt } from './object.js';

/** Why the pods keep their old config after a template change; undefined when they roll. */
export function rolloutHeld(object: JsonObject, kind: WorkloadKind): string | undefined {
  const spec = objectAt(object, ['spec']);
  if (!spec) return undefined;
  if (kind.kind === 'Deployment') {
    return spec.paused === true
      ? 'paused: pods keep the old config until it is resumed'
      : undefined;
  }
  const strategy = isObject(spec.updateStrategy) ? spec.updateStrategy : {};
  if (strategy.type === 'OnDelete') {
    return 'updateStrategy OnDelete: pods keep the old config until they are deleted';
  }
  if (kind.kind !== 'StatefulSet') return undefined;
  const partition = objectAt(strategy, ['rollingUpdate'])?.partition;
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  return typeof partition === 'number' && partition >= replicas
    ? `rollingUpdate.partition ${partition} ≥ replicas ${replicas}: no pod is replaced`
    : undefined;
}
