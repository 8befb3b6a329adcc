// docs/design.md §5 on a real kube-apiserver and deployment controller: each way of
// writing a workload, and whether it rolls. A rollout is a new ReplicaSet and a
// new `deployment.kubernetes.io/revision`, made by the real controller.

import { describe, expect, it } from 'vitest';
import { configMap, e2eFile, namespace, secret, workload, yamlDocuments } from '../support/e2e.js';

const file = e2eFile();
let counter = 0;

/** A fresh opted-in namespace with the app's ConfigMap and Secret, per test. */
async function appNamespace(label = 'true'): Promise<string> {
  const ns = `e2e-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, label)));
  return ns;
}

function appObjects(ns: string, config: string, image = 'registry.example/app:1') {
  return [
    configMap(ns, 'web-config', { 'app.yaml': config }),
    secret(ns, 'web-secret', { password: 'hunter2-e2e' }),
    workload(ns, 'web', { image }),
  ];
}

async function apply(args: readonly string[], objects: object[]): Promise<string> {
  return file.e2e.k(['apply', ...args, '-f', '-'], yamlDocuments(...objects));
}

describe('kubectl apply --server-side', () => {
  it('rolls exactly when config changed', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    expect(await file.api.revision(ns, 'web')).toBe(1);
    const first = await file.api.hash(ns, 'deployment', 'web');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(
      (await file.api.templateAnnotations(ns, 'deployment', 'web'))['confighash.dev/sources'],
    ).toBe('configmap/web-config,secret/web-secret');

    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    expect(await file.api.revision(ns, 'web')).toBe(1);

    await apply(['--server-side'], appObjects(ns, 'v: 2'));
    expect(await file.api.revision(ns, 'web')).toBe(2);
    expect(await file.api.hash(ns, 'deployment', 'web')).not.toBe(first);
    expect(await file.api.replicaSets(ns, 'web')).toHaveLength(2);
  });

  it('one multi-document apply that changes a ConfigMap and the image makes exactly one new ReplicaSet', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    expect(await file.api.revision(ns, 'web')).toBe(1);
    await apply(['--server-side'], appObjects(ns, 'v: 2', 'registry.example/app:2'));
    const sets = await file.api.replicaSets(ns, 'web');
    expect(sets.map((rs) => rs.revision)).toEqual(['1', '2']);
  });
});

describe('kubectl apply (client-side)', () => {
  it('rolls when the workload manifest changed, with the hash of the current config', async () => {
    const ns = await appNamespace();
    await apply([], appObjects(ns, 'v: 1'));
    const first = await file.api.hash(ns, 'deployment', 'web');
    await apply([], appObjects(ns, 'v: 2', 'registry.example/app:2'));
    expect(await file.api.revision(ns, 'web')).toBe(2);
    const second = await file.api.hash(ns, 'deployment', 'web');
    expect(second).not.toBe(first);
    // The same hash as a fresh server-side apply of the same config computes.
    await apply(
      ['--server-side', '--force-conflicts'],
      appObjects(ns, 'v: 2', 'registry.example/app:2'),
    );
    expect(await file.api.hash(ns, 'deployment', 'web')).toBe(second);
    expect(await file.api.revision(ns, 'web')).toBe(2);
  });

  it('does not roll when only the config changed: kubectl sends nothing for an unchanged workload (why follow mode exists)', async () => {
    const ns = await appNamespace();
    await apply([], appObjects(ns, 'v: 1'));
    const first = await file.api.hash(ns, 'deployment', 'web');
    const output = await apply([], appObjects(ns, 'v: 2'));
    expect(output).toContain(`deployment.apps/web unchanged`);
    expect(output).toContain(`configmap/web-config configured`);
    expect(await file.api.revision(ns, 'web')).toBe(1);
    expect(await file.api.hash(ns, 'deployment', 'web')).toBe(first);
  });
});

describe('kubectl diff', () => {
  it('shows the coming hash change before anything rolls (server-side dry-run)', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const before = await file.api.hash(ns, 'deployment', 'web');
    // Config first, as Helm, Kustomize and Argo CD order it; then diff the unchanged workload.
    await apply(['--server-side'], [configMap(ns, 'web-config', { 'app.yaml': 'v: 2' })]);
    const diff = await file.e2e.kubectl(
      ['diff', '--server-side', '-f', '-'],
      yamlDocuments(workload(ns, 'web')),
    );
    expect(diff.code).toBe(1); // 1: differences found
    expect(diff.stdout).toMatch(new RegExp(`-\\s+confighash.dev/hash: ${before}`));
    expect(diff.stdout).toMatch(/\+\s+confighash.dev\/hash: [0-9a-f]{64}/);
    // Dry-run had no effect.
    expect(await file.api.hash(ns, 'deployment', 'web')).toBe(before);
    expect(await file.api.revision(ns, 'web')).toBe(1);
  });
});

describe('kubectl patch --type=merge -p {} (the touch)', () => {
  it('rolls only when config changed', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    await file.e2e.k(['patch', '-n', ns, 'deployment', 'web', '--type=merge', '-p', '{}']);
    expect(await file.api.revision(ns, 'web')).toBe(1);
    await file.e2e
      .k([
        'create',
        'secret',
        'generic',
        'web-secret',
        '-n',
        ns,
        '--from-literal=password=rotated',
        '--dry-run=client',
        '-o',
        'yaml',
      ])
      .then((yaml) => file.e2e.k(['apply', '--server-side', '--force-conflicts', '-f', '-'], yaml));
    await file.e2e.k(['patch', '-n', ns, 'deployment', 'web', '--type=merge', '-p', '{}']);
    expect(await file.api.revision(ns, 'web')).toBe(2);
  });
});

describe('kubectl rollout', () => {
  it('restart restarts and keeps the hash when config is unchanged', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const before = await file.api.hash(ns, 'deployment', 'web');
    await file.e2e.k(['rollout', 'restart', '-n', ns, 'deployment/web']);
    expect(await file.api.revision(ns, 'web')).toBe(2);
    expect(await file.api.hash(ns, 'deployment', 'web')).toBe(before);
  });

  it('undo brings back the old template with a hash of the current config', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const original = await file.api.hash(ns, 'deployment', 'web');
    await apply(['--server-side'], appObjects(ns, 'v: 1', 'registry.example/app:2'));
    expect(await file.api.revision(ns, 'web')).toBe(2);
    await apply(['--server-side'], [configMap(ns, 'web-config', { 'app.yaml': 'v: 2' })]);
    await file.e2e.k(['rollout', 'undo', '-n', ns, 'deployment/web']);
    expect(await file.api.revision(ns, 'web')).toBe(3);
    const deployment = (await file.api.get(ns, 'deployment', 'web')) as unknown as {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]!.image).toBe('registry.example/app:1');
    const current = await file.api.hash(ns, 'deployment', 'web');
    expect(current).not.toBe(original);
    // Current config: a touch now computes the same hash and rolls nothing more.
    await file.e2e.k(['patch', '-n', ns, 'deployment', 'web', '--type=merge', '-p', '{}']);
    expect(await file.api.hash(ns, 'deployment', 'web')).toBe(current);
    expect(await file.api.revision(ns, 'web')).toBe(3);
  });
});

describe('key precision', () => {
  it('an unreferenced key of a shared ConfigMap rolls nothing; the referenced key rolls', async () => {
    const ns = await appNamespace();
    const shared = (mode: string, other: string) => configMap(ns, 'shared', { mode, other });
    const keyRef = workload(ns, 'web', {
      podSpec: {
        containers: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            env: [
              { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'shared', key: 'mode' } } },
            ],
          },
        ],
      },
    });
    await apply(['--server-side'], [shared('fast', 'a'), keyRef]);
    await apply(['--server-side'], [shared('fast', 'b'), keyRef]);
    expect(await file.api.revision(ns, 'web')).toBe(1);
    await apply(['--server-side'], [shared('slow', 'b'), keyRef]);
    expect(await file.api.revision(ns, 'web')).toBe(2);
  });
});

describe('other kinds', () => {
  it.each(['StatefulSet', 'DaemonSet'] as const)('%s templates get the new hash', async (kind) => {
    const ns = await appNamespace();
    const objects = (config: string) => [
      ...appObjects(ns, config).slice(0, 2),
      workload(ns, 'web', { kind }),
    ];
    await apply(['--server-side'], objects('v: 1'));
    const first = await file.api.hash(ns, kind.toLowerCase(), 'web');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    await apply(['--server-side'], objects('v: 2'));
    const second = await file.api.hash(ns, kind.toLowerCase(), 'web');
    expect(second).toMatch(/^[0-9a-f]{64}$/);
    expect(second).not.toBe(first);
  });
});

describe('warnings', () => {
  it('a missing required ConfigMap: the apply succeeds and kubectl prints the warning', async () => {
    const ns = await appNamespace();
    const result = await file.e2e.kubectl(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(secret(ns, 'web-secret', { password: 'x' }), workload(ns, 'web')),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'Warning: confighash: ConfigMap web-config not found; pods will not start until it exists',
    );
    expect(await file.api.hash(ns, 'deployment', 'web')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('adoption', () => {
  it('labelling a namespace restarts nothing: the first write records adopted-hash', async () => {
    const ns = `e2e-${++counter}`;
    await apply([], [namespace(ns), ...appObjects(ns, 'v: 1')]);
    expect(await file.api.hash(ns, 'deployment', 'web')).toBeUndefined();
    await file.e2e.k(['label', 'namespace', ns, 'confighash.dev/enabled=true']);
    await file.e2e.k(['patch', '-n', ns, 'deployment', 'web', '--type=merge', '-p', '{}']);
    const deployment = await file.api.get(ns, 'deployment', 'web');
    expect(deployment.metadata.annotations?.['confighash.dev/adopted-hash']).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(await file.api.hash(ns, 'deployment', 'web')).toBeUndefined();
    expect(await file.api.revision(ns, 'web')).toBe(1);
    // A config change after adoption rolls on the next write.
    await apply(
      ['--server-side', '--force-conflicts'],
      [configMap(ns, 'web-config', { 'app.yaml': 'v: 2' })],
    );
    await file.e2e.k(['patch', '-n', ns, 'deployment', 'web', '--type=merge', '-p', '{}']);
    expect(await file.api.revision(ns, 'web')).toBe(2);
    expect(
      (await file.api.get(ns, 'deployment', 'web')).metadata.annotations?.[
        'confighash.dev/adopted-hash'
      ],
    ).toBeUndefined();
  });
});

describe('namespaces left alone', () => {
  it.each([
    [
      'an unlabelled namespace',
      async () => {
        const ns = `e2e-${++counter}`;
        await file.e2e.k(['create', 'namespace', ns]);
        return ns;
      },
    ],
    [
      'kube-system, even when labelled',
      async () => {
        await file.e2e.k([
          'label',
          '--overwrite',
          'namespace',
          'kube-system',
          'confighash.dev/enabled=true',
        ]);
        return 'kube-system';
      },
    ],
    [
      'confighash-system, even when labelled',
      async () => {
        await file.e2e.k(['create', 'namespace', 'confighash-system']);
        await file.e2e.k([
          'label',
          'namespace',
          'confighash-system',
          'confighash.dev/enabled=true',
        ]);
        return 'confighash-system';
      },
    ],
  ])('%s', async (_name, prepare) => {
    const ns = await prepare();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    expect(await file.api.templateAnnotations(ns, 'deployment', 'web')).toEqual({});
  });
});

describe('the webhook process stopped', () => {
  it('applies still succeed (failurePolicy: Ignore), and hashing resumes when it is back', async () => {
    const ns = await appNamespace();
    await file.e2e.webhook.stop();
    try {
      const result = await file.e2e.kubectl(
        ['apply', '--server-side', '-f', '-'],
        yamlDocuments(...appObjects(ns, 'v: 1')),
      );
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('deployment.apps/web serverside-applied');
      expect(await file.api.hash(ns, 'deployment', 'web')).toBeUndefined();
    } finally {
      await file.e2e.webhook.restart();
    }
    await apply(['--server-side'], appObjects(ns, 'v: 1', 'registry.example/app:2'));
    expect(await file.api.hash(ns, 'deployment', 'web')).toMatch(/^[0-9a-f]{64}$/);
  });
});
