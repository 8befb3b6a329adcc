// Whether a canary's rollout has finished, by its kind's own status (docs/design.md §6
// "Canary-first fan-out"), which workloads can be canaries at all, and in which order they are sought.

import { describe, expect, it } from 'vitest';
import { canaryCandidates } from '../../src/follow/fanout.js';
import {
  findWorkloadKindByName,
  HANDLED_KINDS,
  KNOWN_KINDS,
  rolloutIsObservable,
  rolloutProgress,
  type WorkloadKind,
} from '../../src/workload/index.js';

const kind = (name: string): WorkloadKind =>
  [...HANDLED_KINDS, ...KNOWN_KINDS].find((k) => k.kind === name)!;

function object(spec: object, status: object, generation = 2) {
  return { metadata: { name: 'x', generation }, spec, status };
}

describe('rolloutProgress', () => {
  it.each([
    [
      'Deployment: the controller has not seen the new template',
      'Deployment',
      object(
        { replicas: 2 },
        { observedGeneration: 1, updatedReplicas: 2, availableReplicas: 2, replicas: 2 },
      ),
      'progressing',
    ],
    [
      'Deployment: some replicas not updated yet',
      'Deployment',
      object({ replicas: 3 }, { observedGeneration: 2, updatedReplicas: 1, replicas: 3 }),
      'progressing',
    ],
    [
      'Deployment: old replicas still terminating',
      'Deployment',
      object(
        { replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 3, availableReplicas: 2 },
      ),
      'progressing',
    ],
    [
      'Deployment: updated but not available',
      'Deployment',
      object(
        { replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 1 },
      ),
      'progressing',
    ],
    [
      'Deployment: finished',
      'Deployment',
      object(
        { replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 2 },
      ),
      'complete',
    ],
    [
      'Deployment: no replicas finish at once',
      'Deployment',
      object({ replicas: 0 }, { observedGeneration: 2 }),
      'complete',
    ],
    [
      'Deployment: ProgressDeadlineExceeded fails',
      'Deployment',
      object(
        { replicas: 2 },
        {
          observedGeneration: 2,
          updatedReplicas: 1,
          conditions: [
            { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' },
          ],
        },
      ),
      'failed',
    ],
    [
      'StatefulSet: revisions differ',
      'StatefulSet',
      object(
        { replicas: 2 },
        { observedGeneration: 2, readyReplicas: 2, currentRevision: 'a', updateRevision: 'b' },
      ),
      'progressing',
    ],
    [
      'StatefulSet: finished',
      'StatefulSet',
      object(
        { replicas: 2 },
        { observedGeneration: 2, readyReplicas: 2, currentRevision: 'b', updateRevision: 'b' },
      ),
      'complete',
    ],
    [
      'StatefulSet: past its partition',
      'StatefulSet',
      object(
        { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
        {
          observedGeneration: 2,
          readyReplicas: 3,
          updatedReplicas: 2,
          currentRevision: 'a',
          updateRevision: 'b',
        },
      ),
      'complete',
    ],
    [
      'DaemonSet: pods not updated yet',
      'DaemonSet',
      object(
        {},
        {
          observedGeneration: 2,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 2,
          numberAvailable: 3,
        },
      ),
      'progressing',
    ],
    [
      'DaemonSet: finished',
      'DaemonSet',
      object(
        {},
        {
          observedGeneration: 2,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
        },
      ),
      'complete',
    ],
    [
      'Rollout: Healthy at its generation (a string)',
      'Rollout',
      object({}, { observedGeneration: '2', phase: 'Healthy' }),
      'complete',
    ],
    [
      'Rollout: Healthy, not yet at its generation',
      'Rollout',
      object({}, { observedGeneration: '1', phase: 'Healthy' }),
      'progressing',
    ],
    [
      'Rollout: Degraded fails',
      'Rollout',
      object({}, { observedGeneration: '2', phase: 'Degraded' }),
      'failed',
    ],
    [
      'CloneSet: updated replicas not ready',
      'CloneSet',
      object({ replicas: 2 }, { observedGeneration: 2, updatedReadyReplicas: 1 }),
      'progressing',
    ],
  ] as const)('%s', (_, kindName, value, state) => {
    expect(rolloutProgress(value, kind(kindName)).state).toBe(state);
  });
});

describe('who can be a canary', () => {
  it.each([
    ['a Deployment', 'Deployment', {}, true],
    ['a paused Deployment', 'Deployment', { paused: true }, false],
    ['a DaemonSet with OnDelete', 'DaemonSet', { updateStrategy: { type: 'OnDelete' } }, false],
    ['a StatefulSet with OnDelete', 'StatefulSet', { updateStrategy: { type: 'OnDelete' } }, false],
  ] as const)('%s: %s', (_, kindName, spec, observable) => {
    expect(rolloutIsObservable(object(spec, {}), kind(kindName))).toBe(observable);
  });

  const deployment = findWorkloadKindByName('Deployment')!;
  const reader = (name: string, traits: { canary?: boolean; observable?: boolean } = {}) => ({
    ref: { kind: deployment, namespace: 'shop', name },
    canary: traits.canary ?? false,
    observable: traits.observable ?? true,
  });
  const names = (chosen: ReturnType<typeof canaryCandidates>) => chosen.map(({ ref }) => ref.name);

  it.each([
    ['by name, when none is annotated', [reader('b'), reader('a'), reader('c')], ['a', 'b', 'c']],
    ['the annotated ones first', [reader('a'), reader('b', { canary: true })], ['b', 'a']],
    [
      'the annotated ones in name order too',
      [reader('d', { canary: true }), reader('a'), reader('c', { canary: true })],
      ['c', 'd', 'a'],
    ],
  ])('canaries are sought %s', (_, readers, expected) => {
    expect(names(canaryCandidates(readers))).toEqual(expected);
  });
});
