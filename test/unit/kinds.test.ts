// The kinds table and `--kind` (docs/design.md §7 "Kinds"): known kinds by
// GROUP/VERSION/Kind, any kind by its template path, the mistakes refused, and
// admission of a kind only once it is turned on; a Rollout with workloadRef is
// left alone with a warning.

import { describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import { parseServeConfig } from '../../src/cli/index.js';
import {
  findWorkloadKindByName,
  HANDLED_KINDS,
  KNOWN_KINDS,
  parseKindOption,
  withKinds,
} from '../../src/workload/index.js';
import { MemorySource } from '../support/memory-source.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import { admissionRequest, workload } from '../support/workloads.js';

const KEY = Buffer.alloc(32, 7);
const NO_DEADLINE = new AbortController().signal;
const FILES = ['--tls-cert-file', 'a.crt', '--tls-key-file', 'a.key', '--hash-key-file', 'h'];

describe('parseKindOption', () => {
  it.each([
    ['argoproj.io/v1alpha1/Rollout', 'rollouts', ['spec', 'template'], 'argo-rollout'],
    ['apps.kruise.io/v1alpha1/CloneSet', 'clonesets', ['spec', 'template'], 'cloneset'],
    ['apps.kruise.io/v1beta1/StatefulSet', 'statefulsets', ['spec', 'template'], 'statefulset'],
    ['example.com/v1/Worker=spec.pod.template', 'workers', ['spec', 'pod', 'template'], 'unknown'],
    ['example.com/v1beta2/Proxy/proxies=spec.template', 'proxies', ['spec', 'template'], 'unknown'],
    // A known kind with its path given keeps what confighash knows of how it rolls.
    [
      'argoproj.io/v1alpha1/Rollout=spec.template',
      'rollouts',
      ['spec', 'template'],
      'argo-rollout',
    ],
  ])('%s', (text, resource, templatePath, rollout) => {
    const parsed = parseKindOption(text);
    expect(parsed.ok && parsed.kind).toMatchObject({ resource, templatePath, rollout });
  });

  it.each([
    [
      'example.com/v1/Worker',
      'Worker is not a kind confighash knows; give the path of its pod template',
    ],
    ['/v1/Pod=spec', "'' is not an API group (core kinds have none to name)"],
    ['example.com/1/Worker=spec.template', "'1' is not an API version"],
    ['example.com/v1/worker=spec.template', "'worker' is not a Kind"],
    ['example.com/v1/Worker/Workers=spec.template', "'Workers' is not a resource name"],
    ['example.com/v1/Worker=spec..template', "'spec..template' is not a field path"],
    ['example.com/v1/Worker=a=b', 'too many parts'],
    ['example.com/v1/Worker/workers/x=spec', 'too many parts'],
  ])('%s is refused', (text, why) => {
    expect(parseKindOption(text)).toEqual({
      ok: false,
      error: `--kind ${text}: ${why} (expected GROUP/VERSION/Kind[/resource][=path.to.template])`,
    });
  });
});

describe('serve --kind', () => {
  it('adds kinds to the apps/v1 ones, from flags or CONFIGHASH_KINDS', () => {
    const flags = parseServeConfig(
      [...FILES, '--kind', 'argoproj.io/v1alpha1/Rollout', '--kind=example.com/v1/W=spec.t'],
      {},
    );
    const env = parseServeConfig(FILES, {
      CONFIGHASH_KINDS: 'argoproj.io/v1alpha1/Rollout, example.com/v1/W=spec.t',
    });
    for (const result of [flags, env]) {
      expect(result.ok && result.config.kinds.map((k) => `${k.group}/${k.kind}`)).toEqual([
        'apps/Deployment',
        'apps/StatefulSet',
        'apps/DaemonSet',
        'argoproj.io/Rollout',
        'example.com/W',
      ]);
    }
    const none = parseServeConfig(FILES, {});
    expect(none.ok && none.config.kinds).toEqual(HANDLED_KINDS);
  });

  it('refuses a bad --kind with one line', () => {
    expect(parseServeConfig([...FILES, '--kind', 'Rollout'], {})).toEqual({
      ok: false,
      error: expect.stringMatching(/^--kind Rollout: 'Rollout' is not an API group/),
    });
  });
});

describe('findWorkloadKindByName', () => {
  const kinds = withKinds(KNOWN_KINDS);
  it.each([
    ['sts', 'apps'],
    ['statefulset', 'apps'],
    ['statefulsets.apps', 'apps'],
    ['statefulsets.apps.kruise.io', 'apps.kruise.io'],
    ['rollout', 'argoproj.io'],
    ['ro', 'argoproj.io'],
    ['clonesets.apps.kruise.io', 'apps.kruise.io'],
  ])('%s → group %s', (name, group) => {
    expect(findWorkloadKindByName(name, kinds)?.group).toBe(group);
  });
});

describe('admission of more kinds', () => {
  const source = () => new MemorySource().configMap('app-config', { 'app.yaml': 'v: 1' });
  const rolloutKind = { group: 'argoproj.io', version: 'v1alpha1', kind: 'Rollout' };
  const rollout = (spec: Record<string, unknown> = {}) => {
    const base = workload();
    return {
      ...base,
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      spec: { ...(base.spec as object), ...spec },
    };
  };

  it('a Rollout is skipped until --kind turns it on, then hashed', async () => {
    const request = admissionRequest({ object: rollout(), kind: rolloutKind });
    const off = await createMutator({
      configSource: source(),
      hashKey: KEY,
      namespaces: everyNamespaceOptedIn,
    }).review(request, NO_DEADLINE);
    expect(off.outcome).toBe('skipped');
    const kinds = withKinds(KNOWN_KINDS);
    const on = await createMutator({
      configSource: source(),
      hashKey: KEY,
      namespaces: everyNamespaceOptedIn,
      kinds,
    }).review(request, NO_DEADLINE);
    expect(on.outcome).toBe('patched');
    expect(on.patch).toEqual([
      expect.objectContaining({ path: '/spec/template/metadata/annotations' }),
      expect.objectContaining({ path: '/metadata/annotations' }),
    ]);
  });

  it('a Rollout with workloadRef is left alone, with a warning', async () => {
    const withRef = rollout({
      workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    });
    const request = admissionRequest({ object: withRef, kind: rolloutKind });
    const mutator = createMutator({
      namespaces: everyNamespaceOptedIn,
      configSource: source(),
      hashKey: KEY,
      kinds: withKinds(KNOWN_KINDS),
    });
    const result = await mutator.review(request, NO_DEADLINE);
    expect(result).toMatchObject({
      outcome: 'skipped',
      patch: [],
      skipReason: 'workloadRef: the pod template is in another object',
      warnings: ['confighash: Rollout with workloadRef left alone; its pod template is not in it'],
    });
  });
});
