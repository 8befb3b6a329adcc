// Whether a workload's rollout has finished, by its kind's own status (docs/design.md §6
// "Canary-first fan-out"): the rules `kubectl rollout status` applies, per rollout model.
// A kind with no status model cannot say, and neither can a workload whose pods do not
// follow a template change by themselves (rollout-held.ts): such a workload is never a canary.

import type { WorkloadKind } from './kinds.js';
import { isObject, type JsonObject, objectAt } from './object.js';
import { rolloutHeld } from './rollout-held.js';

type RolloutProgress =
  | { readonly state: 'progressing'; readonly detail: string }
  | { readonly state: 'complete' }
  | { readonly state: 'failed'; readonly detail: string };

/** Whether the kind's status can tell when a rollout of this object finished. */
export function rolloutIsObservable(object: JsonObject, kind: WorkloadKind): boolean {
  return kind.rollout !== 'unknown' && rolloutHeld(object, kind) === undefined;
}

/** The rollout's state now; call only when rolloutIsObservable. */
export function rolloutProgress(object: JsonObject, kind: WorkloadKind): RolloutProgress {
  const spec = objectAt(object, ['spec']) ?? {};
  const status = objectAt(object, ['status']) ?? {};
  const generation = numberAt(objectAt(object, ['metadata']), 'generation');
  if (kind.rollout === 'argo-rollout') return argoRolloutProgress(status, generation);
  if (numberAt(status, 'observedGeneration') < generation) {
    return progressing('the controller has not seen the new template yet');
  }
  switch (kind.rollout) {
    case 'deployment':
      return deploymentProgress(spec, status);
    case 'statefulset':
      return statefulSetProgress(spec, status);
    case 'daemonset':
      return daemonSetProgress(status);
    case 'cloneset':
      return replicasProgress(
        numberAt(spec, 'replicas', 1),
        numberAt(status, 'updatedReadyReplicas'),
      );
    case 'unknown':
      return progressing('the kind has no status model');
  }
}

function deploymentProgress(spec: JsonObject, status: JsonObject): RolloutProgress {
  const deadline = conditions(status).find(
    (condition) =>
      condition.type === 'Progressing' && condition.reason === 'ProgressDeadlineExceeded',
  );
  if (deadline) return { state: 'failed', detail: 'ProgressDeadlineExceeded' };
  const replicas = numberAt(spec, 'replicas', 1);
  const updated = numberAt(status, 'updatedReplicas');
  if (updated < replicas) return progressing(`${updated} of ${replicas} replicas updated`);
  const old = numberAt(status, 'replicas') - updated;
  if (old > 0) return progressing(`${old} old replicas pending termination`);
  return replicasProgress(replicas, numberAt(status, 'availableReplicas'));
}

function statefulSetProgress(spec: JsonObject, status: JsonObject): RolloutProgress {
  const replicas = numberAt(spec, 'replicas', 1);
  const ready = numberAt(status, 'readyReplicas');
  if (ready < replicas) return progressing(`${ready} of ${replicas} replicas ready`);
  const partition = numberAt(objectAt(spec, ['updateStrategy', 'rollingUpdate']), 'partition');
  if (partition > 0)
    return replicasProgress(replicas - partition, numberAt(status, 'updatedReplicas'));
  return status.updateRevision === status.currentRevision
    ? { state: 'complete' }
    : progressing('the update revision is not current yet');
}

function daemonSetProgress(status: JsonObject): RolloutProgress {
  const desired = numberAt(status, 'desiredNumberScheduled');
  const updated = numberAt(status, 'updatedNumberScheduled');
  if (updated < desired) return progressing(`${updated} of ${desired} pods updated`);
  return replicasProgress(desired, numberAt(status, 'numberAvailable'));
}

function argoRolloutProgress(status: JsonObject, generation: number): RolloutProgress {
  // Argo Rollouts writes observedGeneration as a string.
  if (Number(status.observedGeneration ?? 0) < generation) {
    return progressing('the controller has not seen the new template yet');
  }
  if (status.phase === 'Degraded') {
    return { state: 'failed', detail: `Degraded: ${String(status.message ?? 'no message')}` };
  }
  return status.phase === 'Healthy'
    ? { state: 'complete' }
    : progressing(`phase ${String(status.phase ?? 'unknown')}`);
}

function replicasProgress(wanted: number, ready: number): RolloutProgress {
  return ready < wanted
    ? progressing(`${ready} of ${wanted} updated replicas available`)
    : { state: 'complete' };
}

function progressing(detail: string): RolloutProgress {
  return { state: 'progressing', detail };
}

function conditions(status: JsonObject): JsonObject[] {
  return Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
}

function numberAt(object: JsonObject | undefined, field: string, absent = 0): number {
  const value = object?.[field];
  return typeof value === 'number' ? value : absent;
}
