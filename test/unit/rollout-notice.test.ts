// docs/design.md §4, the two rollout rows: a new hash that no pod (or only some) will
// follow by itself, and a Recreate Deployment whose config change is an outage.
// Warned in admission only when the hash changes; plan and explain read the same notice.

import { describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import {
  findWorkloadKind,
  type JsonObject,
  KNOWN_KINDS,
  rolloutHeld,
  rolloutNotice,
  type WorkloadKind,
  withKinds,
} from '../../src/workload/index.js';
import { applyPatch } from '../support/json-patch.js';
import { MemorySource } from '../support/memory-source.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import { admissionRequest, workload } from '../support/workloads.js';

const KEY = Buffer.alloc(32, 7);
const NO_DEADLINE = new AbortController().signal;
const ALL_KINDS = withKinds(KNOWN_KINDS);

function kind(group: string, version: string, name: string): WorkloadKind {
  const found = findWorkloadKind({ group, version, kind: name }, ALL_KINDS);
  if (!found) throw new Error(`no kind ${group}/${version}/${name}`);
  return found;
}

const DEPLOYMENT = kind('apps', 'v1', 'Deployment');
const STATEFULSET = kind('apps', 'v1', 'StatefulSet');
const DAEMONSET = kind('apps', 'v1', 'DaemonSet');
const ROLLOUT = kind('argoproj.io', 'v1alpha1', 'Rollout');
const CLONESET = kind('apps.kruise.io', 'v1alpha1', 'CloneSet');
const ADVANCED_STATEFULSET = kind('apps.kruise.io', 'v1beta1', 'StatefulSet');

function withSpec(spec: Record<string, unknown>, base = workload()): JsonObject {
  return { ...base, spec: { ...(base.spec as object), ...spec } };
}

describe('rolloutNotice', () => {
  it.each([
    [DEPLOYMENT, { paused: true }, 'held', 'paused: pods keep the old config until it is resumed'],
    [
      DEPLOYMENT,
      { strategy: { type: 'Recreate' } },
      'outage',
      'strategy Recreate: every pod stops before new ones start; this config change is an outage',
    ],
    [
      STATEFULSET,
      { updateStrategy: { type: 'OnDelete' } },
      'held',
      'updateStrategy OnDelete: pods keep the old config until they are deleted',
    ],
    [
      DAEMONSET,
      { updateStrategy: { type: 'OnDelete' } },
      'held',
      'updateStrategy OnDelete: pods keep the old config until they are deleted',
    ],
    [
      STATEFULSET,
      { replicas: 3, updateStrategy: { rollingUpdate: { partition: 3 } } },
      'held',
      'rollingUpdate.partition 3 ≥ replicas 3: pods keep the old config until it is lowered',
    ],
    [
      STATEFULSET,
      { updateStrategy: { rollingUpdate: { partition: 1 } } },
      'held',
      'rollingUpdate.partition 1 ≥ replicas 1: pods keep the old config until it is lowered',
    ],
    [
      STATEFULSET,
      { replicas: 5, updateStrategy: { rollingUpdate: { partition: 2 } } },
      'partial',
      'rollingUpdate.partition 2: 2 of 5 pods keep the old config until it is lowered',
    ],
    [ROLLOUT, { paused: true }, 'held', 'paused: pods keep the old config until it is resumed'],
    [
      CLONESET,
      { replicas: 4, updateStrategy: { partition: '50%' } },
      'partial',
      'updateStrategy.partition 50%: 2 of 4 pods keep the old config until it is lowered',
    ],
    [
      CLONESET,
      { replicas: 4, updateStrategy: { partition: '100%' } },
      'held',
      'updateStrategy.partition 100% ≥ replicas 4: pods keep the old config until it is lowered',
    ],
    [
      CLONESET,
      { updateStrategy: { paused: true } },
      'held',
      'updateStrategy.paused: pods keep the old config until it is resumed',
    ],
    [
      ADVANCED_STATEFULSET,
      { updateStrategy: { rollingUpdate: { paused: true } } },
      'held',
      'rollingUpdate.paused: pods keep the old config until it is resumed',
    ],
  ] as const)('%s.kind %j → %s', (workloadKind, spec, effect, text) => {
    expect(rolloutNotice(withSpec(spec), workloadKind)).toEqual({ effect, text });
  });

  it.each([
    [DEPLOYMENT, {}],
    [DEPLOYMENT, { paused: false, strategy: { type: 'RollingUpdate' } }],
    [STATEFULSET, { replicas: 3, updateStrategy: { rollingUpdate: { partition: 0 } } }],
    [DAEMONSET, { updateStrategy: { type: 'RollingUpdate' } }],
    // Recreate is a Deployment's: a CloneSet's ReCreate replaces pods one by one.
    [CLONESET, { updateStrategy: { type: 'ReCreate' } }],
    [ROLLOUT, { strategy: { canary: {} } }],
  ] as const)('%s.kind %j rolls by itself', (workloadKind, spec) => {
    expect(rolloutNotice(withSpec(spec), workloadKind)).toBeUndefined();
  });

  it('plan and explain call only the held ones "will not roll"', () => {
    const partial = withSpec({ replicas: 5, updateStrategy: { rollingUpdate: { partition: 2 } } });
    expect(rolloutHeld(partial, STATEFULSET)).toBeUndefined();
    expect(rolloutHeld(withSpec({ strategy: { type: 'Recreate' } }), DEPLOYMENT)).toBeUndefined();
    expect(rolloutHeld(withSpec({ paused: true }), DEPLOYMENT)).toMatch(/^paused/);
  });
});

describe('admission warns when the hash changes', () => {
  const source = () => new MemorySource().configMap('app-config', { 'app.yaml': 'v: 1' });
  const podSpec = {
    volumes: [{ name: 'config', configMap: { name: 'app-config' } }],
    containers: [{ name: 'app', image: 'registry.example/app:1' }],
  };

  async function reviewChange(
    spec: Record<string, unknown>,
    kindName: 'Deployment' | 'StatefulSet' = 'Deployment',
  ) {
    const config = source();
    const mutator = createMutator({
      configSource: config,
      hashKey: KEY,
      namespaces: everyNamespaceOptedIn,
    });
    const object = withSpec(spec, workload({ kind: kindName, podSpec }));
    const create = admissionRequest({ operation: 'CREATE', object });
    const created = applyPatch(object, (await mutator.review(create, NO_DEADLINE)).patch as never);
    const first = await mutator.review(create, NO_DEADLINE);
    config.configMap('app-config', { 'app.yaml': 'v: 2' });
    const update = admissionRequest({ operation: 'UPDATE', object: created, oldObject: created });
    return { create: first, update: await mutator.review(update, NO_DEADLINE), created, mutator };
  }

  it('a paused Deployment: patched, with the warning; not on CREATE', async () => {
    const { create, update } = await reviewChange({ paused: true });
    expect(create.warnings).toEqual([]);
    expect(update.outcome).toBe('patched');
    expect(update.hashChanged).toBe(true);
    expect(update.warnings).toEqual([
      'confighash: paused: pods keep the old config until it is resumed',
    ]);
  });

  it('a Recreate Deployment: the outage warning', async () => {
    const { update } = await reviewChange({ strategy: { type: 'Recreate' } });
    expect(update.outcome).toBe('patched');
    expect(update.warnings).toEqual([
      'confighash: strategy Recreate: every pod stops before new ones start; this config change is an outage',
    ]);
    for (const warning of update.warnings) expect(warning.length).toBeLessThanOrEqual(120);
  });

  it('an OnDelete StatefulSet: the held warning', async () => {
    const { update } = await reviewChange({ updateStrategy: { type: 'OnDelete' } }, 'StatefulSet');
    expect(update.warnings).toEqual([
      'confighash: updateStrategy OnDelete: pods keep the old config until they are deleted',
    ]);
  });

  it('no warning when the hash stays (a write that changes nothing of the config)', async () => {
    const { created, mutator } = await reviewChange({ paused: true });
    const again = admissionRequest({ operation: 'UPDATE', object: created, oldObject: created });
    // The config is now v: 2; write once to take the new hash, then once more.
    const moved = applyPatch(created, (await mutator.review(again, NO_DEADLINE)).patch as never);
    const still = admissionRequest({ operation: 'UPDATE', object: moved, oldObject: moved });
    const result = await mutator.review(still, NO_DEADLINE);
    expect(result.hashChanged).toBe(false);
    expect(result.warnings).toEqual([]);
  });
});
