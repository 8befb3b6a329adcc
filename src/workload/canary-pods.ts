// What a canary's pods say (docs/design.md §6 "The state of a change"): the first pod of its new
// revision that cannot run the change — it crash-loops, its config cannot be mounted or
// read, its image cannot be pulled, or it has restarted — fails the canary at once, not
// after a progress deadline. Pods are as the API lists them; only their metadata and status
// are read. Pure.

import { isObject, objectAt } from './object.js';

/** Waiting reasons that say a container of the new revision cannot run. */
const FAILING_WAIT_REASONS: readonly string[] = [
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'RunContainerError',
];

/** The label selector (`a=b,c=d`) of a workload's pods; undefined when it has no matchLabels. */
export function podSelectorOf(object: unknown): string | undefined {
  const labels = objectAt(object, ['spec', 'selector', 'matchLabels']);
  const pairs = Object.entries(labels ?? {}).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  return pairs.length > 0 ? pairs.map(([key, value]) => `${key}=${value}`).join(',') : undefined;
}

/**
 * Why the first failing pod created at or after `since` (ms; pods older than the touch are
 * of the old revision) fails the canary; undefined when none does.
 */
export function podFailure(pods: readonly unknown[], since: number): string | undefined {
  for (const pod of pods) {
    const created = Date.parse(String(objectAt(pod, ['metadata'])?.creationTimestamp ?? ''));
    if (!(created >= since)) continue;
    const why = containerFailure(pod);
    if (why) return `pod ${String(objectAt(pod, ['metadata'])?.name ?? '?')}: ${why}`;
  }
  return undefined;
}

function containerFailure(pod: unknown): string | undefined {
  const status = objectAt(pod, ['status']) ?? {};
  const statuses = [status.initContainerStatuses, status.containerStatuses].flatMap((list) =>
    Array.isArray(list) ? list.filter(isObject) : [],
  );
  for (const container of statuses) {
    const name = String(container.name ?? '?');
    const waiting = objectAt(container, ['state', 'waiting']);
    const reason = typeof waiting?.reason === 'string' ? waiting.reason : undefined;
    if (reason && FAILING_WAIT_REASONS.includes(reason)) {
      const message = typeof waiting?.message === 'string' ? `: ${waiting.message}` : '';
      return `container ${name} ${reason}${message}`.slice(0, 300);
    }
    const restarts = typeof container.restartCount === 'number' ? container.restartCount : 0;
    if (restarts > 0) return `container ${name} restarted ${restarts} times`;
  }
  return undefined;
}

/** Whether the workload asks for any pod: replicas > 0, or a DaemonSet with nodes to run on. */
export function runsPods(object: unknown, rollout: string): boolean {
  if (rollout === 'daemonset') {
    const desired = objectAt(object, ['status'])?.desiredNumberScheduled;
    return typeof desired !== 'number' || desired > 0;
  }
  const replicas = objectAt(object, ['spec'])?.replicas;
  return typeof replicas !== 'number' || replicas > 0;
}
