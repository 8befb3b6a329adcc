// More workload kinds (docs/design.md §7) on a real kube-apiserver, with each
// project's own CRD from its pinned Go module (tools/crds.sh): Argo Rollouts'
// Rollout, OpenKruise's CloneSet and Advanced StatefulSet, and a kind named by
// its template path only (a CRD of the test's own). The webhook runs with the
// --kind flags and the webhook rules of manifests/components/argo-rollouts and
// openkruise; follow mode lists and touches the same kinds. There are no Argo
// or Kruise controllers here: what is proven is the template the apiserver
// stores, kubectl's warnings and follow mode's touches and Events.

import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT as REPO } from '../../tools/cluster/repo.js';
import { runScript } from '../../tools/cluster/scripts.js';
import { type LocalFollower, startLocalFollower } from '../../tools/cluster/webhook.js';
import {
  configMap,
  type E2eCluster,
  e2eFile,
  namespace,
  waitUntil,
  yamlDocuments,
} from '../support/e2e.js';
import { runConfighash, stopStartedProcesses } from '../support/process.js';

const WORKER_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'workers.e2e.confighash.dev' },
  spec: {
    group: 'e2e.confighash.dev',
    scope: 'Namespaced',
    names: { plural: 'workers', singular: 'worker', kind: 'Worker' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        },
      },
    ],
  },
};
const KIND_ARGS = [
  '--kind=argoproj.io/v1alpha1/Rollout',
  '--kind=apps.kruise.io/v1alpha1/CloneSet',
  '--kind=apps.kruise.io/v1beta1/StatefulSet',
  '--kind=e2e.confighash.dev/v1/Worker=spec.pod.template',
  // Turned on, its CRD never installed: follow mode must still serve every other kind.
  '--kind=e2e.confighash.dev/v1/Absent=spec.template',
];
const FOLLOW_ARGS = [
  '--lease-namespace=default',
  '--follow-debounce=1s',
  '--follow-min-interval=1s',
];

let crds: string;
let counter = 0;

// Its own hook, registered first: the CRDs are fetched before any cluster starts, and a failed
// fetch starts none.
beforeAll(async () => {
  crds = await runScript(join(REPO, 'tools/crds.sh'), 'tools/crds.sh');
}, 300_000);

let follower: LocalFollower | undefined;

const file = e2eFile(KIND_ARGS, {
  async setup({ e2e }) {
    await installCrds(e2e);
    await addWebhookRules(e2e);
    follower = await startLocalFollower({
      dir: e2e.dir,
      kubeconfig: e2e.controlPlane.kubeconfig,
      webhook: e2e.webhook,
      extraArgs: [...KIND_ARGS, ...FOLLOW_ARGS],
    });
  },
  async teardown() {
    await follower?.stop();
    await stopStartedProcesses();
  },
  timeoutMs: 300_000,
});

async function installCrds(e2e: E2eCluster): Promise<void> {
  for (const crd of ['rollouts.yaml', 'clonesets.yaml', 'statefulsets.yaml']) {
    await e2e.k(['apply', '--server-side', '-f', join(crds, crd)]);
  }
  await e2e.k(['apply', '--server-side', '-f', '-'], JSON.stringify(WORKER_CRD));
  // Polled: `kubectl wait` fails outright on a CRD the apiserver has not given conditions yet.
  await waitUntil(async () => {
    const crds = JSON.parse(await e2e.k(['get', 'crd', '-o', 'json'])) as {
      items: { status?: { conditions?: { type: string; status: string }[] } }[];
    };
    return crds.items.every((crd) =>
      (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True'),
    );
  }, 'the CRDs to be established');
}

/** The components' own rule patches, plus a rule for the test's kind. */
async function addWebhookRules(e2e: E2eCluster): Promise<void> {
  const ops: object[] = [];
  for (const component of ['argo-rollouts', 'openkruise']) {
    const text = await readFile(
      join(REPO, 'manifests/components', component, 'webhook-rules.yaml'),
    );
    ops.push(...(load(text.toString('utf8')) as object[]));
  }
  ops.push({
    op: 'add',
    path: '/webhooks/0/rules/-',
    value: {
      apiGroups: ['e2e.confighash.dev'],
      apiVersions: ['v1'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['workers'],
      scope: 'Namespaced',
    },
  });
  await e2e.k([
    'patch',
    'mutatingwebhookconfiguration',
    'confighash',
    '--type=json',
    '-p',
    JSON.stringify(ops),
  ]);
}

const POD_TEMPLATE = {
  metadata: { labels: { app: 'web' } },
  spec: {
    volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1',
        volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
      },
    ],
  },
};
const SELECTOR = { matchLabels: { app: 'web' } };

interface KindRow {
  /** As kubectl names the resource. */
  resource: string;
  object(ns: string, spec?: Record<string, unknown>): Record<string, unknown>;
  templateAnnotations(object: Record<string, unknown>): Record<string, string> | undefined;
}

function customResource(apiVersion: string, kind: string, spec: object) {
  return (ns: string, extra: Record<string, unknown> = {}) => ({
    apiVersion,
    kind,
    metadata: { name: 'web', namespace: ns },
    spec: { ...spec, ...extra },
  });
}

const atSpecTemplate = (object: Record<string, unknown>) =>
  (object as { spec: { template: { metadata?: { annotations?: Record<string, string> } } } }).spec
    .template.metadata?.annotations;

const KINDS: Record<string, KindRow> = {
  'Argo Rollout': {
    resource: 'rollouts.argoproj.io',
    object: customResource('argoproj.io/v1alpha1', 'Rollout', {
      replicas: 1,
      selector: SELECTOR,
      template: POD_TEMPLATE,
      strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
    }),
    templateAnnotations: atSpecTemplate,
  },
  'OpenKruise CloneSet': {
    resource: 'clonesets.apps.kruise.io',
    object: customResource('apps.kruise.io/v1alpha1', 'CloneSet', {
      replicas: 2,
      selector: SELECTOR,
      template: POD_TEMPLATE,
    }),
    templateAnnotations: atSpecTemplate,
  },
  'OpenKruise Advanced StatefulSet': {
    resource: 'statefulsets.apps.kruise.io',
    object: customResource('apps.kruise.io/v1beta1', 'StatefulSet', {
      replicas: 2,
      serviceName: 'web',
      selector: SELECTOR,
      template: POD_TEMPLATE,
    }),
    templateAnnotations: atSpecTemplate,
  },
  'a kind named by --kind with its template path': {
    resource: 'workers.e2e.confighash.dev',
    object: customResource('e2e.confighash.dev/v1', 'Worker', { pod: { template: POD_TEMPLATE } }),
    templateAnnotations: (object) =>
      (
        object as {
          spec: { pod: { template: { metadata?: { annotations?: Record<string, string> } } } };
        }
      ).spec.pod.template.metadata?.annotations,
  },
};

async function freshNamespace(label: string): Promise<string> {
  const ns = `kinds-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, label)));
  return ns;
}

async function applyServerSide(...objects: object[]) {
  const result = await file.e2e.kubectl(
    ['apply', '--server-side', '-f', '-'],
    yamlDocuments(...objects),
  );
  expect(result.code, result.stderr).toBe(0);
  return result.stderr;
}

async function annotationsOf(ns: string, row: KindRow) {
  const object = JSON.parse(await file.e2e.k(['get', '-n', ns, row.resource, 'web', '-o', 'json']));
  return row.templateAnnotations(object) ?? {};
}

describe.each(Object.entries(KINDS))('%s', (_name, row) => {
  it('admission hashes its pod template, and a config change changes the hash', async () => {
    const ns = await freshNamespace('true');
    await applyServerSide(configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }), row.object(ns));
    const first = await annotationsOf(ns, row);
    expect(first['confighash.dev/hash']).toMatch(/^[0-9a-f]{64}$/);
    expect(first['confighash.dev/sources']).toBe('configmap/web-config');
    await applyServerSide(configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }), row.object(ns));
    expect((await annotationsOf(ns, row))['confighash.dev/hash']).toBe(
      first['confighash.dev/hash'],
    );
    await applyServerSide(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }), row.object(ns));
    const second = await annotationsOf(ns, row);
    expect(second['confighash.dev/hash']).toMatch(/^[0-9a-f]{64}$/);
    expect(second['confighash.dev/hash']).not.toBe(first['confighash.dev/hash']);
  });

  it('follow mode lists it and touches it when its config changes out of band, with an Event', async () => {
    const ns = await freshNamespace('follow');
    await applyServerSide(configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }), row.object(ns));
    const first = (await annotationsOf(ns, row))['confighash.dev/hash'];
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    await file.e2e.k(
      ['replace', '-f', '-'],
      yamlDocuments(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' })),
    );
    await waitUntil(
      async () => (await annotationsOf(ns, row))['confighash.dev/hash'] !== first,
      `follow mode to touch ${row.resource}`,
      60_000,
    );
    const events = JSON.parse(
      await file.e2e.k(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json']),
    ) as { items: { reason: string; regarding: { kind: string; name: string } }[] };
    expect(events.items.filter((e) => e.reason === 'ConfigChanged')).toEqual([
      expect.objectContaining({ regarding: expect.objectContaining({ name: 'web' }) }),
    ]);
  });
});

describe('what each kind will do with a new hash', () => {
  it.each([
    [
      'Argo Rollout',
      { paused: true },
      'Warning: confighash: paused: pods keep the old config until it is resumed',
    ],
    [
      'OpenKruise CloneSet',
      { updateStrategy: { partition: '50%' } },
      'Warning: confighash: updateStrategy.partition 50%: 1 of 2 pods keep the old config until it is lowered',
    ],
    [
      'OpenKruise Advanced StatefulSet',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } },
      'Warning: confighash: rollingUpdate.paused: pods keep the old config until it is resumed',
    ],
  ] as const)('%s %j: kubectl prints the warning', async (name, spec, warning) => {
    const row = KINDS[name]!;
    const ns = await freshNamespace('true');
    const created = await applyServerSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      row.object(ns, spec),
    );
    expect(created).not.toContain('confighash');
    const changed = await applyServerSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }),
      row.object(ns, spec),
    );
    expect(changed).toContain(warning);
  });
});

describe('a Rollout with workloadRef', () => {
  it('is left alone, with a warning; the Deployment it references is hashed', async () => {
    const ns = await freshNamespace('true');
    const rollout = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 1,
        selector: SELECTOR,
        workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        strategy: { canary: { steps: [{ setWeight: 50 }] } },
      },
    };
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: { replicas: 0, selector: SELECTOR, template: POD_TEMPLATE },
    };
    const stderr = await applyServerSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      deployment,
      rollout,
    );
    expect(stderr).toContain(
      'Warning: confighash: Rollout with workloadRef left alone; its pod template is not in it',
    );
    const stored = JSON.parse(
      await file.e2e.k(['get', '-n', ns, 'rollouts.argoproj.io', 'web', '-o', 'json']),
    );
    expect(stored.spec.template).toBeUndefined();
    expect(await file.api.hash(ns, 'deployment', 'web')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('plan and explain know the kinds of other projects', () => {
  async function confighash(args: readonly string[]) {
    const running = runConfighash(args, {
      KUBECONFIG: file.e2e.controlPlane.kubeconfig,
      NO_COLOR: '1',
    });
    const code = await running.exited;
    return { code, ...running.output };
  }

  it.each([
    ['Argo Rollout', 'rollout.argoproj.io/web', []],
    ['OpenKruise Advanced StatefulSet', 'statefulset.apps.kruise.io/web', []],
    // A kind of your own: plan and explain take the --kind serve was given.
    [
      'a kind named by --kind with its template path',
      'worker.e2e.confighash.dev/web',
      ['--kind', 'e2e.confighash.dev/v1/Worker=spec.pod.template'],
    ],
  ] as const)(
    '%s: plan says it rolls; explain %s shows the hash the webhook would write',
    async (name, target, kindFlags) => {
      const row = KINDS[name]!;
      const ns = await freshNamespace('true');
      await applyServerSide(configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }), row.object(ns));
      const dir = await mkdtemp(join(tmpdir(), 'confighash-kinds-'));
      const file = join(dir, 'manifests.yaml');
      await writeFile(
        file,
        yamlDocuments(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }), row.object(ns)),
      );
      const plan = await confighash(['plan', '-f', file, '-o', 'json', ...kindFlags]);
      expect(plan.code, plan.stderr).toBe(1);
      expect(JSON.parse(plan.stdout).items).toEqual([
        expect.objectContaining({
          kind: row.object(ns).kind,
          name: 'web',
          verdict: 'roll',
          changedSources: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
        }),
      ]);
      const explain = await confighash(['explain', target, '-n', ns, '-o', 'json', ...kindFlags]);
      expect(explain.code, explain.stderr).toBe(0);
      const explained = JSON.parse(explain.stdout) as {
        templateHash: string;
        nextWriteRolls: boolean;
      };
      expect(explained.templateHash).toBe((await annotationsOf(ns, row))['confighash.dev/hash']);
      expect(explained.nextWriteRolls).toBe(false);
    },
  );
});
