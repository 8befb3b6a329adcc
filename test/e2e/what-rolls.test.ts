// Whether the pods follow a config change, on a real kube-apiserver and
// deployment controller (a rollout is a new ReplicaSet of the real controller).
//
// docs/design.md §4, the two rollout rows: when the hash changes but the workload
// will not roll by itself (OnDelete, paused, a StatefulSet partition), or when
// Recreate makes the change an outage, kubectl prints confighash's warning. For
// the Deployments the test also sees what the warning promised (no new
// ReplicaSet while paused; a new one with Recreate). There is no StatefulSet or
// DaemonSet controller in the local control plane: for those, the warning and the hash.
//
// docs/design.md §3 "live reload": with `confighash.dev/live-reload: "true"` (an app
// that reloads its mounted files, e.g. with a configmap-reload sidecar), a change
// to a plainly mounted ConfigMap rolls nothing while a change to an env-consumed
// one rolls; without the annotation, both roll.

import { describe, expect, it } from 'vitest';
import { configMap, e2eFile, namespace, workload, yamlDocuments } from '../support/e2e.js';

const file = e2eFile();
let counter = 0;

type Kind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

function app(ns: string, kind: Kind, spec: Record<string, unknown>, config: string): object[] {
  const podSpec = {
    volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
    containers: [{ name: 'app', image: 'registry.example/app:1' }],
  };
  const object = workload(ns, 'web', { kind, podSpec }) as { spec: Record<string, unknown> };
  return [
    configMap(ns, 'web-config', { 'app.yaml': config }),
    { ...object, spec: { ...object.spec, ...spec } },
  ];
}

/** Applies v: 1, then v: 2 server-side; returns kubectl's stderr of both applies. */
async function changeConfig(kind: Kind, spec: Record<string, unknown>) {
  const ns = `notice-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
  const apply = async (config: string) => {
    const result = await file.e2e.kubectl(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(...app(ns, kind, spec, config)),
    );
    expect(result.code, result.stderr).toBe(0);
    return result.stderr;
  };
  const created = await apply('v: 1');
  const first = await file.api.hash(ns, kind.toLowerCase(), 'web');
  // The first ReplicaSet exists before the change, as between a user's two applies: a change
  // the controller meets before it made one gives one ReplicaSet for both.
  if (kind === 'Deployment' && !spec.paused) await file.api.revision(ns, 'web');
  const changed = await apply('v: 2');
  const second = await file.api.hash(ns, kind.toLowerCase(), 'web');
  return { ns, created, changed, first, second };
}

const HELD = [
  [
    'Deployment',
    { paused: true },
    'Warning: confighash: paused: pods keep the old config until it is resumed',
  ],
  [
    'StatefulSet',
    { updateStrategy: { type: 'OnDelete' } },
    'Warning: confighash: updateStrategy OnDelete: pods keep the old config until they are deleted',
  ],
  [
    'DaemonSet',
    { updateStrategy: { type: 'OnDelete' } },
    'Warning: confighash: updateStrategy OnDelete: pods keep the old config until they are deleted',
  ],
  [
    'StatefulSet',
    { replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
    'Warning: confighash: rollingUpdate.partition 2 ≥ replicas 2: pods keep the old config until it is lowered',
  ],
  [
    'StatefulSet',
    { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
    'Warning: confighash: rollingUpdate.partition 1: 1 of 3 pods keep the old config until it is lowered',
  ],
  [
    'Deployment',
    { strategy: { type: 'Recreate' } },
    'Warning: confighash: strategy Recreate: every pod stops before new ones start; this config change is an outage',
  ],
] as const;

describe('a config change kubectl is warned about', () => {
  it.each(HELD)('%s %j', async (kind, spec, warning) => {
    const change = await changeConfig(kind, spec);
    expect(change.created).not.toContain('confighash');
    expect(change.changed).toContain(warning);
    // Patched as usual: the template carries the new hash.
    expect(change.first).toMatch(/^[0-9a-f]{64}$/);
    expect(change.second).toMatch(/^[0-9a-f]{64}$/);
    expect(change.second).not.toBe(change.first);
  });

  it('the paused Deployment made no new ReplicaSet; the Recreate one did', async () => {
    const paused = await changeConfig('Deployment', { paused: true });
    const pausedSets = await file.e2e.k([
      'get',
      'rs',
      '-n',
      paused.ns,
      '-l',
      'app=web',
      '-o',
      'name',
    ]);
    // Paused from its creation: the controller makes no ReplicaSet at all until it is resumed.
    expect(pausedSets.trim()).toBe('');
    const recreate = await changeConfig('Deployment', { strategy: { type: 'Recreate' } });
    expect(await file.api.revision(recreate.ns, 'web')).toBe(2);
  });

  it('a rolling Deployment gets no such warning', async () => {
    const change = await changeConfig('Deployment', {});
    expect(change.changed).not.toContain('confighash');
    expect(change.second).not.toBe(change.first);
  });
});

/** `files` is mounted plainly and watched by a reload sidecar; `env` feeds envFrom; `conf` a subPath mount. */
function reloadingApp(
  ns: string,
  annotations: Record<string, string>,
  config: Record<string, string>,
) {
  const podSpec = {
    volumes: [
      { name: 'files', configMap: { name: 'files' } },
      { name: 'conf', configMap: { name: 'conf' } },
    ],
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1',
        envFrom: [{ configMapRef: { name: 'env' } }],
        volumeMounts: [
          { name: 'files', mountPath: '/etc/app' },
          { name: 'conf', mountPath: '/etc/app.conf', subPath: 'app.conf' },
        ],
      },
      {
        name: 'reload',
        image: 'jimmidyson/configmap-reload:v0.15.0',
        args: ['--volume-dir=/etc/app', '--webhook-url=http://127.0.0.1:8080/-/reload'],
        volumeMounts: [{ name: 'files', mountPath: '/etc/app', readOnly: true }],
      },
    ],
  };
  return [
    configMap(ns, 'files', { 'app.yaml': config.files ?? 'v: 1' }),
    configMap(ns, 'env', { LEVEL: config.env ?? 'info' }),
    configMap(ns, 'conf', { 'app.conf': config.conf ?? 'a = 1' }),
    workload(ns, 'web', { podSpec, annotations }),
  ];
}

async function setUp(annotations: Record<string, string>) {
  const ns = `live-reload-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
  const apply = async (config: Record<string, string> = {}) => {
    await file.e2e.k(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(...reloadingApp(ns, annotations, config)),
    );
    return file.api.revision(ns, 'web');
  };
  expect(await apply()).toBe(1);
  return { ns, apply };
}

describe('confighash.dev/live-reload: "true"', () => {
  it('a change to the plainly mounted ConfigMap rolls nothing; an env-consumed or subPath one rolls', async () => {
    const { ns, apply } = await setUp({ 'confighash.dev/live-reload': 'true' });
    expect(
      (await file.api.templateAnnotations(ns, 'deployment', 'web'))['confighash.dev/sources'],
    ).toBe('configmap/conf,configmap/env');
    expect(await apply({ files: 'v: 2' })).toBe(1);
    expect(await apply({ files: 'v: 2', env: 'debug' })).toBe(2);
    expect(await apply({ files: 'v: 2', env: 'debug', conf: 'a = 2' })).toBe(3);
  });
});

describe('without the annotation', () => {
  it('a change to the plainly mounted ConfigMap rolls, and so does an env-consumed one', async () => {
    const { ns, apply } = await setUp({});
    expect(
      (await file.api.templateAnnotations(ns, 'deployment', 'web'))['confighash.dev/sources'],
    ).toBe('configmap/conf,configmap/env,configmap/files');
    expect(await apply({ files: 'v: 2' })).toBe(2);
    expect(await apply({ files: 'v: 2', env: 'debug' })).toBe(3);
  });
});
