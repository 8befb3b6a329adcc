// `confighash plan` (docs/design.md §9) against an in-memory cluster: each verdict and
// each reason, the exit code, the manifests' forms (List, stringData, numbers),
// and that no value ever reaches the output.

import { dump } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import {
  explainWorkload,
  type Manifests,
  parseManifests,
  planChanges,
  planExitCode,
  renderPlan,
  renderPlanData,
} from '../../src/plan/index.js';
import {
  awaitingApprovalNote,
  EVERY_KNOWN_KIND,
  type FanoutRecord,
  formatFanoutRecord,
  HANDLED_KINDS,
  type JsonObject,
  readWorkload,
} from '../../src/workload/index.js';
import { applyPatch } from '../support/json-patch.js';
import { MemoryPlanCluster } from '../support/memory-plan-cluster.js';
import { digestOf, MemorySource } from '../support/memory-source.js';
import { named } from '../support/named.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';

const NEVER = new AbortController().signal;

const NS = 'app';
const DEPLOYMENT = HANDLED_KINDS[0]!;
const HASH = 'a'.repeat(64);
const VALUES = ['v: live', 'v: next', 'hunter2-live', 'hunter2-next', 'debug-live', 'debug-next'];

/** Mounts NAME-config, reads NAME-secret as env. */
function podSpecOf(name: string, image: string): object {
  return {
    volumes: [{ name: 'config', configMap: { name: `${name}-config` } }],
    containers: [{ name: 'app', image, envFrom: [{ secretRef: { name: `${name}-secret` } }] }],
  };
}

function deployment(
  name: string,
  options: {
    annotations?: Record<string, string>;
    hashed?: boolean;
    podSpec?: object;
    spec?: object;
    kind?: string;
  } = {},
): JsonObject {
  const podSpec = options.podSpec ?? podSpecOf(name, 'app:1');
  return {
    apiVersion: 'apps/v1',
    kind: options.kind ?? 'Deployment',
    metadata: {
      name,
      namespace: NS,
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      ...options.spec,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: {
          labels: { app: name },
          ...(options.hashed === false ? {} : { annotations: { 'confighash.dev/hash': HASH } }),
        },
        spec: podSpec,
      },
    },
  };
}

const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS },
  data,
});

const secret = (
  name: string,
  fields: { data?: Record<string, string>; stringData?: Record<string, string> },
) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NS },
  ...fields,
});

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A `true` namespace with web (ConfigMap web-config: app.yaml, Secret web-secret: password), hashed. */
function liveCluster(label = 'true'): MemoryPlanCluster {
  const cluster = new MemoryPlanCluster().withNamespace(NS, { 'confighash.dev/enabled': label });
  cluster.configSource.configMap('web-config', { 'app.yaml': 'v: live' });
  cluster.configSource.secret('web-secret', { password: 'hunter2-live' });
  cluster.workload(NS, deployment('web'));
  return cluster;
}

/** liveCluster, its namespace also labelled confighash.dev/workloads=annotated. */
function annotatedOnlyCluster(label = 'true'): MemoryPlanCluster {
  return liveCluster(label).withNamespace(NS, {
    'confighash.dev/enabled': label,
    'confighash.dev/workloads': 'annotated',
  });
}

function manifests(...objects: object[]): Manifests {
  const parsed = parseManifests(objects.map((o) => dump(o)).join('---\n'), 'default');
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.manifests;
}

async function plan(
  objects: object[],
  cluster: MemoryPlanCluster | undefined,
  clientSide = false,
  maxFanout = 0,
) {
  return planChanges(
    manifests(...objects),
    cluster,
    { clientSide, kinds: EVERY_KNOWN_KIND, maxFanout },
    NEVER,
  );
}

interface Row {
  name: string;
  objects: () => object[];
  cluster?: () => MemoryPlanCluster | undefined;
  clientSide?: boolean;
  verdict: 'roll' | 'no-roll' | 'unknown';
  reason: RegExp;
  changed?: { ref: string; changedKeys: string[] }[];
}

const withImage = (image: string) => deployment('web', { podSpec: podSpecOf('web', image) });

/** web, reading one key of web-config through an env var. */
const selectingAppYaml = () =>
  deployment('web', {
    podSpec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [
            { name: 'A', valueFrom: { configMapKeyRef: { name: 'web-config', key: 'app.yaml' } } },
          ],
        },
      ],
    },
  });

/** web, reading key app.yaml of web-config by a volume's `items`. */
const mountingAppYaml = (optional?: boolean) =>
  deployment('web', {
    podSpec: {
      volumes: [
        {
          name: 'config',
          configMap: {
            name: 'web-config',
            items: [{ key: 'app.yaml', path: 'app.yaml' }],
            ...(optional === undefined ? {} : { optional }),
          },
        },
      ],
      containers: [{ name: 'app', image: 'app:1' }],
    },
  });

/** web, reading key app.yaml of web-config through an optional env var. */
const optionallySelectingAppYaml = () =>
  deployment('web', {
    podSpec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [
            {
              name: 'A',
              valueFrom: {
                configMapKeyRef: { name: 'web-config', key: 'app.yaml', optional: true },
              },
            },
          ],
        },
      ],
    },
  });

const lastApplied = (object: JsonObject): JsonObject => {
  const copy = structuredClone(object) as { metadata: { annotations?: Record<string, string> } };
  copy.metadata.annotations = {
    ...copy.metadata.annotations,
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(object),
  };
  return copy as JsonObject;
};

const ROWS: Row[] = [
  {
    name: 'a config-only change of a selected key rolls, naming the key',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    verdict: 'roll',
    reason: /configmap\/web-config changes: app\.yaml/,
    changed: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
  },
  {
    name: 'the same config rolls nothing',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: live' }), deployment('web')],
    verdict: 'no-roll',
    reason: /no selected key changes/,
  },
  {
    name: 'a change of a key the workload does not select rolls nothing, and says so',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: live', debug: 'debug-next' }),
      selectingAppYaml(),
    ],
    cluster: () => liveCluster().workload(NS, selectingAppYaml()),
    verdict: 'no-roll',
    reason: /only unselected keys of configmap\/web-config change \(debug\)/,
  },
  {
    name: 'stringData over data, as the apiserver merges it: a new password rolls',
    objects: () => [
      secret('web-secret', {
        data: { password: b64('hunter2-live') },
        stringData: { password: 'hunter2-next' },
      }),
      deployment('web'),
    ],
    verdict: 'roll',
    reason: /secret\/web-secret changes: password/,
    changed: [{ ref: 'secret/web-secret', changedKeys: ['password'] }],
  },
  {
    name: 'stringData equal to the live data rolls nothing',
    objects: () => [
      secret('web-secret', { stringData: { password: 'hunter2-live' } }),
      deployment('web'),
    ],
    verdict: 'no-roll',
    reason: /no selected key changes/,
  },
  {
    name: 'a namespace without the label is not opted in',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    cluster: () => liveCluster('nope'),
    verdict: 'no-roll',
    reason: /namespace app is not opted in/,
  },
  {
    name: 'a Namespace in the manifests decides the mode (applied first)',
    objects: () => [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web'),
    ],
    verdict: 'no-roll',
    reason: /not opted in/,
  },
  {
    name: 'in a namespace that handles annotated workloads only, an unannotated workload is not handled',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    cluster: annotatedOnlyCluster,
    verdict: 'no-roll',
    reason:
      /^not handled: namespace app handles annotated workloads only; this one is not annotated confighash\.dev\/enabled: "true"$/,
  },
  {
    name: 'in a namespace that handles annotated workloads only, an annotated workload rolls as anywhere',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web', { annotations: { 'confighash.dev/enabled': 'true' } }),
    ],
    cluster: annotatedOnlyCluster,
    verdict: 'roll',
    reason: /configmap\/web-config changes: app\.yaml/,
  },
  {
    name: 'a Namespace in the manifests labelled annotated-only decides it (applied first)',
    objects: () => [
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: NS,
          labels: { 'confighash.dev/enabled': 'true', 'confighash.dev/workloads': 'annotated' },
        },
      },
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web'),
    ],
    verdict: 'no-roll',
    reason: /^not handled: namespace app handles annotated workloads only/,
  },
  {
    name: 'an opted-out workload',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web', { annotations: { 'confighash.dev/enabled': 'false' } }),
    ],
    verdict: 'no-roll',
    reason: /opted out: confighash\.dev\/enabled is "false"/,
  },
  {
    name: 'an excluded source that changes rolls nothing, and says exclude left it out',
    objects: () => [
      secret('web-secret', { stringData: { password: 'hunter2-next' } }),
      deployment('web', { annotations: { 'confighash.dev/exclude': 'secret/web-secret' } }),
    ],
    verdict: 'no-roll',
    reason: /secret\/web-secret changes, but confighash\.dev\/exclude leaves it out/,
  },
  {
    name: 'live reload: a plainly mounted ConfigMap that changes rolls nothing, and says why',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web', { annotations: { 'confighash.dev/live-reload': 'true' } }),
    ],
    verdict: 'no-roll',
    reason:
      /configmap\/web-config changes, but confighash\.dev\/live-reload: mounted without subPath, the pods reload it/,
  },
  {
    name: 'live reload with only plain mounts: nothing it reads counts',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web', {
        annotations: { 'confighash.dev/live-reload': 'true' },
        podSpec: {
          volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
          containers: [{ name: 'app', image: 'app:1' }],
        },
      }),
    ],
    verdict: 'no-roll',
    reason:
      /^no ConfigMap or Secret it reads counts\nconfigmap\/web-config: confighash\.dev\/live-reload: mounted/,
  },
  {
    name: 'client-side apply of an unchanged workload in a `true` namespace never reaches the webhook',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    cluster: () => {
      const cluster = liveCluster();
      return cluster.workload(NS, lastApplied(deployment('web')));
    },
    clientSide: true,
    verdict: 'no-roll',
    reason:
      /the write will not reach the webhook: a client-side apply of an unchanged workload sends nothing/,
    changed: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
  },
  {
    name: 'client-side apply of an unchanged workload in a `follow` namespace: follow mode rolls it',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    cluster: () => liveCluster('follow').workload(NS, lastApplied(deployment('web'))),
    clientSide: true,
    verdict: 'roll',
    reason: /follow mode touches it/,
  },
  {
    name: 'client-side apply of a changed workload reaches the webhook',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web', { spec: { replicas: 3 } }),
    ],
    cluster: () => liveCluster().workload(NS, lastApplied(deployment('web'))),
    clientSide: true,
    verdict: 'roll',
    reason: /configmap\/web-config changes/,
  },
  {
    name: 'a Secret the user may not read: cannot tell, with the reason',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    cluster: () => {
      const cluster = liveCluster();
      cluster.configSource.fail('Secret', 'web-secret', 'forbidden');
      return cluster;
    },
    verdict: 'unknown',
    reason: /cannot read secret\/web-secret: forbidden/,
  },
  {
    name: 'a workload the user may not read: cannot tell',
    objects: () => [deployment('web')],
    cluster: () => liveCluster().workload(NS, 'forbidden', 'Deployment', 'web'),
    verdict: 'unknown',
    reason: /cannot read deployment\/web: forbidden/,
  },
  {
    name: 'a namespace the user may not read: cannot tell',
    objects: () => [deployment('web')],
    cluster: () => liveCluster().withNamespace(NS, 'forbidden'),
    verdict: 'unknown',
    reason: /cannot read namespace app: forbidden/,
  },
  {
    name: 'a new workload has nothing to roll',
    objects: () => [configMap('api-config', { a: '1' }), deployment('api')],
    verdict: 'no-roll',
    reason: /new workload/,
  },
  {
    name: 'a never-hashed workload is adopted without a restart',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web')],
    cluster: () => liveCluster().workload(NS, deployment('web', { hashed: false })),
    verdict: 'no-roll',
    reason: /never hashed yet: the next write adopts it without a restart/,
  },
  {
    name: 'a paused Deployment keeps its pods',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: next' }),
      deployment('web', { spec: { paused: true } }),
    ],
    verdict: 'no-roll',
    reason: /paused: pods keep the old config until it is resumed/,
  },
  {
    name: 'a hash already stale (config changed out of band): the same config still rolls, the webhook says why',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: live' }), deployment('web')],
    cluster: () => {
      const cluster = liveCluster();
      cluster.dryRun = (object) => {
        const copy = structuredClone(object) as { spec: { template: { metadata: object } } };
        copy.spec.template.metadata = { annotations: { 'confighash.dev/hash': 'b'.repeat(64) } };
        return { status: 'found', value: { object: copy as unknown as JsonObject, warnings: [] } };
      };
      return cluster;
    },
    verdict: 'roll',
    reason:
      /its config already changed since its last write \(the webhook would write a new hash now\)/,
    changed: [],
  },
  {
    name: 'a dry-run the user may not make is a note, not a guess',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: live' }), deployment('web')],
    cluster: () => {
      const cluster = liveCluster();
      cluster.dryRun = () => ({ status: 'failed', detail: 'forbidden' });
      return cluster;
    },
    verdict: 'no-roll',
    reason:
      /could not ask the webhook: you may not patch deployments.apps in namespace app \(forbidden; its dry-run patch needs the patch verb\): a config change before this plan is not seen/,
  },
  {
    name: 'an image change alone rolls: the pod template itself changes, whatever the config',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: live' }), withImage('app:2')],
    verdict: 'roll',
    reason:
      /the pod template itself changes \(template\.spec\.containers\[0\]\.image\): it rolls whatever the config/,
    changed: [],
  },
  {
    name: 'config and image in one apply: one roll, naming both',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: next' }), withImage('app:2')],
    verdict: 'roll',
    reason:
      /pod template itself changes \(template\.spec\.containers\[0\]\.image\)[\s\S]*configmap\/web-config changes: app\.yaml/,
    changed: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
  },
  {
    name: 'an image change of a paused Deployment keeps its pods too',
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: live' }),
      deployment('web', { spec: { paused: true }, podSpec: podSpecOf('web', 'app:2') }),
    ],
    verdict: 'no-roll',
    reason: /paused: pods keep the old config until it is resumed/,
  },
  {
    name: "a manifest without the webhook's annotations has the same template: nothing rolls",
    objects: () => [
      configMap('web-config', { 'app.yaml': 'v: live' }),
      deployment('web', { hashed: false }),
    ],
    verdict: 'no-roll',
    reason: /no selected key changes/,
  },
  {
    name: 'a dry-run apply the user may not make: the config decides, and a note says what is not seen',
    objects: () => [configMap('web-config', { 'app.yaml': 'v: live' }), withImage('app:2')],
    cluster: () => {
      const cluster = liveCluster();
      cluster.applied = () => ({ status: 'failed', detail: 'forbidden' });
      return cluster;
    },
    verdict: 'no-roll',
    reason:
      /could not dry-run the apply \(forbidden\): a change to the pod template itself is not seen/,
  },
  {
    name: 'a workload reading no config',
    objects: () => [deployment('web', { podSpec: { containers: [{ name: 'a', image: 'a' }] } })],
    verdict: 'no-roll',
    reason: /reads no ConfigMap or Secret/,
  },
  {
    name: 'a required env key ref key the manifests remove: will not roll, the webhook keeps the previous hash',
    objects: () => [configMap('web-config', { other: 'v: next' }), selectingAppYaml()],
    cluster: () => liveCluster().workload(NS, selectingAppYaml()),
    verdict: 'no-roll',
    reason: /^configmap\/web-config has no key "app\.yaml": the webhook keeps the previous hash$/,
  },
  {
    name: 'a required volume items key the manifests remove: the same',
    objects: () => [configMap('web-config', { other: 'v: next' }), mountingAppYaml()],
    cluster: () => liveCluster().workload(NS, mountingAppYaml()),
    verdict: 'no-roll',
    reason: /^configmap\/web-config has no key "app\.yaml": the webhook keeps the previous hash$/,
  },
  {
    name: 'an optional env key ref key the manifests remove is a change: will roll',
    objects: () => [configMap('web-config', { other: 'v: next' }), optionallySelectingAppYaml()],
    cluster: () => liveCluster().workload(NS, optionallySelectingAppYaml()),
    verdict: 'roll',
    reason: /configmap\/web-config changes: app\.yaml/,
    changed: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
  },
  {
    name: 'an optional volume items key the manifests remove: will roll',
    objects: () => [configMap('web-config', { other: 'v: next' }), mountingAppYaml(true)],
    cluster: () => liveCluster().workload(NS, mountingAppYaml(true)),
    verdict: 'roll',
    reason: /configmap\/web-config changes: app\.yaml/,
    changed: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
  },
  {
    name: 'a required key of an object that does not exist: the object rule names the object',
    objects: () => [selectingAppYaml()],
    cluster: () => {
      const cluster = liveCluster().workload(NS, selectingAppYaml());
      cluster.configSource.delete('ConfigMap', 'web-config');
      return cluster;
    },
    verdict: 'no-roll',
    reason: /^configmap\/web-config does not exist: the webhook keeps the previous hash$/,
  },
  {
    name: 'offline: the manifests alone cannot tell',
    objects: () => [
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NS, labels: { 'confighash.dev/enabled': 'true' } },
      },
      deployment('web'),
    ],
    cluster: () => undefined,
    verdict: 'unknown',
    reason: /offline: the live config is not read/,
  },
];

describe('one workload in the manifests', () => {
  it.each(named(ROWS))('%s', async (_name, row) => {
    const cluster = row.cluster ? row.cluster() : liveCluster();
    const result = await plan(row.objects(), cluster, row.clientSide);
    expect(result.workloads).toHaveLength(1);
    const [workload] = result.workloads;
    expect(workload).toMatchObject({ kind: 'Deployment', namespace: NS, verdict: row.verdict });
    expect(workload!.reasons.join('\n')).toMatch(row.reason);
    if (row.changed) expect(workload!.changedSources).toEqual(row.changed);
    expect(planExitCode(result)).toBe(row.verdict === 'no-roll' ? 0 : 1);
    const output = renderPlan(result, { color: false }) + renderPlanData(result, 'json');
    for (const value of VALUES) expect(output).not.toContain(value);
  });
});

describe('workloads only in the cluster', () => {
  const reader = () =>
    deployment('reader', {
      podSpec: {
        containers: [
          { name: 'a', image: 'a', envFrom: [{ configMapRef: { name: 'web-config' } }] },
        ],
      },
    });

  it.each([
    [
      'true',
      'no-roll',
      /^nothing writes it: it is not in the manifests, and namespace app is "true"/,
    ],
    ['follow', 'roll', /follow mode touches it/],
  ] as const)(
    'in a `%s` namespace a reader of a changed ConfigMap: %s',
    async (label, verdict, reason) => {
      const cluster = liveCluster(label).workload(NS, reader());
      const result = await plan([configMap('web-config', { 'app.yaml': 'v: next' })], cluster);
      const names = result.workloads.map((w) => [w.name, w.verdict]);
      expect(names).toEqual([
        ['web', label === 'true' ? 'no-roll' : 'roll'],
        ['reader', verdict],
      ]);
      expect(result.workloads[1]!.reasons.join('\n')).toMatch(reason);
    },
  );

  it('in a follow namespace that handles annotated workloads only, only the annotated reader rolls', async () => {
    const mine = deployment('mine', {
      annotations: { 'confighash.dev/enabled': 'true' },
      podSpec: (reader().spec as { template: { spec: object } }).template.spec,
    });
    const cluster = annotatedOnlyCluster('follow').workload(NS, reader()).workload(NS, mine);
    const result = await plan([configMap('web-config', { 'app.yaml': 'v: next' })], cluster);
    expect(result.workloads.map((w) => [w.name, w.verdict])).toEqual([
      ['web', 'no-roll'],
      ['reader', 'no-roll'],
      ['mine', 'roll'],
    ]);
    expect(result.workloads[1]!.reasons).toEqual([
      'not handled: namespace app handles annotated workloads only; this one is not annotated confighash.dev/enabled: "true"',
    ]);
  });

  it('are not looked for in a namespace that is not opted in', async () => {
    const cluster = liveCluster('nope').workload(NS, reader());
    const result = await plan([configMap('web-config', { 'app.yaml': 'v: next' })], cluster);
    expect(result.workloads).toEqual([]);
    expect(cluster.calls.filter((call) => call.startsWith('list'))).toEqual([]);
  });

  it('a list the user may not make is a problem, and the exit code says "cannot tell"', async () => {
    const cluster = liveCluster();
    cluster.lists.set(`StatefulSet/${NS}`, 'forbidden');
    const result = await plan([configMap('web-config', { 'app.yaml': 'v: live' })], cluster);
    expect(result.problems).toEqual(['cannot list statefulsets in app (forbidden)']);
    expect(planExitCode(result)).toBe(1);
  });
});

describe('the manifests', () => {
  it('flattens List objects (kubectl get -o yaml) and defaults the namespace', () => {
    const text = dump({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { port: 8080 } },
        { apiVersion: 'apps/v1', kind: 'DeploymentList', items: [deployment('web')] },
        { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' } },
      ],
    });
    const parsed = parseManifests(text, 'dflt');
    expect(parsed.ok && parsed.manifests.configs).toEqual([
      { namespace: 'dflt', source: { kind: 'ConfigMap', name: 'c' } },
    ]);
    expect(parsed.ok && parsed.manifests.workloads.map((w) => `${w.namespace}/${w.name}`)).toEqual([
      'app/web',
    ]);
  });

  it.each([['not YAML', 'a: [', /^the manifests are not YAML: /]])(
    '%s is one line of error',
    (_name, text, error) => {
      const parsed = parseManifests(text, 'default');
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error).toMatch(error);
        expect(parsed.error).not.toContain('\n');
      }
    },
  );
});

/** The webhook's answer to `kubectl patch --dry-run=server -p '{}'`: the real mutator. */
async function webhookTouch(
  cluster: MemoryPlanCluster,
  live: JsonObject,
  keys: { hashKey: Buffer; previousHashKeys?: Buffer[] },
) {
  const mutator = createMutator({
    configSource: cluster.configSource,
    ...keys,
    namespaces: everyNamespaceOptedIn,
  });
  const result = await mutator.review(
    {
      uid: 'dry-run',
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      name: 'web',
      namespace: NS,
      operation: 'UPDATE',
      dryRun: true,
      object: live,
      oldObject: live,
    },
    NEVER,
  );
  const object = applyPatch(structuredClone(live), result.patch as never) as JsonObject;
  return { status: 'found', value: { object, warnings: result.warnings } } as const;
}

// docs/security.md "Rotate the hash key", as plan and explain see it: they hold no hash key,
// so they ask the webhook (a dry-run touch, answered here by the real admission code) and
// a template hashed with a previous key for the content now gets no new hash: nothing rolls.
describe('a workload hashed with a previous key', () => {
  const OLD_KEY = Buffer.alloc(32, 9);
  const KEY = Buffer.alloc(32, 11);

  async function rotatedCluster(content = 'v: live', where: 'template' | 'adopted' = 'template') {
    const cluster = liveCluster();
    const live = deployment('web', { hashed: false });
    const oldSource = new MemorySource()
      .configMap('web-config', { 'app.yaml': content })
      .secret('web-secret', { password: 'hunter2-live' });
    const old = await digestOf(oldSource, readWorkload(live, DEPLOYMENT), OLD_KEY, NS);
    const template = (live.spec as { template: { metadata: Record<string, unknown> } }).template;
    if (where === 'template') template.metadata.annotations = { 'confighash.dev/hash': old };
    else
      (live.metadata as Record<string, unknown>).annotations = {
        'confighash.dev/adopted-hash': old,
      };
    cluster.workload(NS, live);
    const touch = await webhookTouch(cluster, live, { hashKey: KEY, previousHashKeys: [OLD_KEY] });
    cluster.dryRun = () => touch;
    return { cluster, old };
  }

  it('the same config: will not roll, and explain says the hash was made with a previous key', async () => {
    const { cluster, old } = await rotatedCluster();
    const result = await plan(
      [configMap('web-config', { 'app.yaml': 'v: live' }), deployment('web', { hashed: false })],
      cluster,
    );
    expect(result.workloads.map(({ verdict }) => verdict)).toEqual(['no-roll']);
    expect(result.workloads[0]!.reasons).toContainEqual(
      expect.stringMatching(/^hash made with a previous key/),
    );
    expect(planExitCode(result)).toBe(0);
    const explained = await explainWorkload(cluster, DEPLOYMENT, NS, 'web', NEVER);
    if (!explained.ok) throw new Error(explained.error);
    expect(explained.explanation).toMatchObject({
      templateHash: old,
      wouldWrite: old,
      nextWriteRolls: false,
      previousKey: true,
      webhook: { reached: true, warnings: [] },
    });
    expect(explained.explanation.explanation).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^the next write rolls nothing/),
        expect.stringMatching(/^hash made with a previous key/),
      ]),
    );
  });

  it('adopted with a previous key: explain says both', async () => {
    const { cluster, old } = await rotatedCluster('v: live', 'adopted');
    const explained = await explainWorkload(cluster, DEPLOYMENT, NS, 'web', NEVER);
    if (!explained.ok) throw new Error(explained.error);
    expect(explained.explanation).toMatchObject({
      templateHash: null,
      adoptedHash: old,
      nextWriteRolls: false,
      previousKey: true,
    });
    expect(explained.explanation.explanation).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^not hashed in the template yet/),
        expect.stringMatching(/^hash made with a previous key/),
      ]),
    );
  });

  it('a config change in the manifests: will roll', async () => {
    const { cluster } = await rotatedCluster();
    const result = await plan(
      [configMap('web-config', { 'app.yaml': 'v: next' }), deployment('web', { hashed: false })],
      cluster,
    );
    expect(result.workloads.map(({ verdict }) => verdict)).toEqual(['roll']);
  });

  it('a previous-key hash of config that changed since: any write rolls, the webhook says so', async () => {
    const { cluster } = await rotatedCluster('v: before');
    const result = await plan(
      [configMap('web-config', { 'app.yaml': 'v: live' }), deployment('web', { hashed: false })],
      cluster,
    );
    expect(result.workloads[0]).toMatchObject({
      verdict: 'roll',
      reasons: expect.arrayContaining([expect.stringMatching(/its config already changed/)]),
    });
  });
});

// docs/design.md §3 "Required keys", §9: explain names a required key the live object lacks,
// and repeats what the webhook (the real admission code, asked by a dry-run touch) says of it.
describe('explain: a key that pods need, missing from a live object', () => {
  const KEY = Buffer.alloc(32, 11);

  async function explainedAfterRemoval(workload: JsonObject) {
    const cluster = liveCluster();
    const stored = await digestOf(
      cluster.configSource,
      readWorkload(workload, DEPLOYMENT),
      KEY,
      NS,
    );
    const hashed = structuredClone(workload) as {
      spec: { template: { metadata: Record<string, unknown> } };
    };
    hashed.spec.template.metadata.annotations = { 'confighash.dev/hash': stored };
    const live = hashed as unknown as JsonObject;
    cluster.workload(NS, live);
    cluster.configSource.configMap('web-config', { other: 'v: next' });
    const touch = await webhookTouch(cluster, live, { hashKey: KEY });
    cluster.dryRun = () => touch;
    const explained = await explainWorkload(cluster, DEPLOYMENT, NS, 'web', NEVER);
    if (!explained.ok) throw new Error(explained.error);
    return { explanation: explained.explanation, stored };
  }

  interface Row {
    readonly name: string;
    readonly workload: () => JsonObject;
    readonly missingRequiredKeys: string[];
    readonly lines: string[];
    readonly nextWriteRolls: boolean;
  }

  const MISSING_LINE =
    'configmap/web-config has no key "app.yaml": pods will not start until it does, and the webhook keeps the previous hash';
  const WEBHOOK_LINE =
    'webhook: confighash: ConfigMap web-config key "app.yaml" not found; kept the previous hash';

  it.each(
    named<Row>([
      {
        name: 'a required env key ref key: named, the webhook keeps the hash, nothing rolls',
        workload: selectingAppYaml,
        missingRequiredKeys: ['app.yaml'],
        lines: [MISSING_LINE, WEBHOOK_LINE],
        nextWriteRolls: false,
      },
      {
        name: 'a required volume items key: the same',
        workload: () => mountingAppYaml(),
        missingRequiredKeys: ['app.yaml'],
        lines: [MISSING_LINE, WEBHOOK_LINE],
        nextWriteRolls: false,
      },
      {
        name: 'an optional key: no line, no warning, the next write rolls',
        workload: optionallySelectingAppYaml,
        missingRequiredKeys: [],
        lines: [],
        nextWriteRolls: true,
      },
    ]),
  )('%s', async (_name, row) => {
    const { explanation, stored } = await explainedAfterRemoval(row.workload());
    expect(explanation.sources).toMatchObject([
      { ref: 'configmap/web-config', state: 'found', missingRequiredKeys: row.missingRequiredKeys },
    ]);
    expect(explanation.nextWriteRolls).toBe(row.nextWriteRolls);
    expect(explanation.wouldWrite === stored).toBe(!row.nextWriteRolls);
    const about = explanation.explanation.filter((line) => line.includes('app.yaml'));
    expect(about).toEqual(row.lines);
  });
});

/**
 * explain of web in a follow namespace whose web-config changed since its hash, with one
 * confighash Event on web-config: `reason`, and the note `noteAt` writes for the
 * ConfigMap's resourceVersion now.
 */
async function explainedWithSourceEvent(reason: string, noteAt: (version: string) => string) {
  const cluster = liveCluster('follow');
  cluster.configSource.configMap('web-config', { 'app.yaml': 'v: next' });
  const version = await cluster.configSource.get('ConfigMap', NS, 'web-config');
  if (version.status !== 'found') throw new Error('no ConfigMap');
  cluster.eventsOf.set('ConfigMap/web-config', [
    { reason, note: noteAt(version.resourceVersion), time: '2026-12-03T10:00:00Z' },
  ]);
  return explainWeb(cluster);
}

/** explain of web, the webhook's answer to its dry run as this cluster stands. */
async function explainWeb(cluster: ReturnType<typeof liveCluster>) {
  const live = cluster.workloads.get(`Deployment/${NS}/web`) as JsonObject;
  const touch = await webhookTouch(cluster, live, { hashKey: Buffer.alloc(32, 12) });
  cluster.dryRun = () => touch;
  const result = await explainWorkload(cluster, DEPLOYMENT, NS, 'web', NEVER);
  if (!result.ok) throw new Error(result.error);
  return result.explanation;
}

// docs/design.md §6 "The state of a change": a follow namespace's workload that reads a source
// whose change is halted, or tested on a canary, is held; explain reads the record follow
// mode keeps on the source, never an Event.
describe('explain: a workload held by a change of its source', () => {
  const DIGEST = '0123456789abcdef';
  const api = { group: 'apps', kind: 'Deployment', name: 'api' };
  const web = { group: 'apps', kind: 'Deployment', name: 'web' };
  async function explained(record: FanoutRecord) {
    const cluster = liveCluster('follow');
    cluster.configSource.configMap('web-config', { 'app.yaml': 'v: next' });
    cluster.configSource.record('ConfigMap', 'web-config', formatFanoutRecord(record));
    return explainWeb(cluster);
  }
  const SINCE = '2026-12-07T10:00:00.000Z';

  it.each([
    ['another canary failed it', { canaries: [api] }],
    ['this workload is the canary that failed it', { canaries: [web] }],
    ['no workload could test it', {}],
  ])('a halted change (%s): held, with why and how to release it', async (_, extra) => {
    const why = 'canary deployment/api failed: pod api-1: container app CrashLoopBackOff';
    const explanation = await explained({
      change: DIGEST,
      phase: 'halted',
      since: SINCE,
      why,
      ...extra,
    });
    expect(explanation.nextWriteRolls).toBe(true);
    expect(explanation.sources[0]!.fanout).toMatchObject({ phase: 'halted', change: DIGEST });
    expect(explanation.explanation).toContainEqual(
      `held: the fan-out of change ${DIGEST} of configmap/web-config halted at ${SINCE}: ${why}; follow mode touches nothing that reads it until the halt is released (confighash resume configmap/web-config -n ${NS}) or the source changes (a write of yours is hashed as always)`,
    );
  });

  it('a change tested on another canary: it waits behind it', async () => {
    const explanation = await explained({
      change: DIGEST,
      phase: 'canary',
      since: SINCE,
      canaries: [api],
    });
    expect(explanation.explanation).toContainEqual(
      expect.stringMatching(/^waits behind canary deployment\/api testing change 0123456789abcdef/),
    );
  });

  it.each([
    ['the canary is this workload', { phase: 'canary', canaries: [web] }],
    ['the canaries proved it', { phase: 'draining', canaries: [api] }],
    ['it rolled everywhere', { phase: 'done' }],
  ] as const)('%s: not held', async (_, extra) => {
    const explanation = await explained({ change: DIGEST, since: SINCE, ...extra });
    expect(explanation.explanation.some((line) => /^(held|waits behind)/.test(line))).toBe(false);
    expect(explanation.explanation).toContainEqual(
      expect.stringMatching(/^follow mode touches it/),
    );
  });
});

// docs/design.md §6 "Approval above a size": a follow namespace's workload whose source's
// change waits for approval at the version it reads now is held; explain reads it from the
// FanoutAwaitsApproval Event on the source.
describe('explain: a workload whose source waits for approval', () => {
  const DIGEST = '0123456789abcdef';
  const explained = (atVersion: (live: string) => string) =>
    explainedWithSourceEvent('FanoutAwaitsApproval', (version) =>
      awaitingApprovalNote(
        {
          source: 'configmap/web-config',
          namespace: NS,
          resourceVersion: atVersion(version),
          digest: DIGEST,
        },
        212,
        50,
      ),
    );

  it('a change at the version it reads waits: held, with the digest', async () => {
    const explanation = await explained((live) => live);
    expect(explanation.sources[0]!.awaitingApproval).toBe(DIGEST);
    expect(explanation.explanation).toContainEqual(
      expect.stringMatching(
        new RegExp(`^waits for approval: change ${DIGEST} of configmap/web-config`),
      ),
    );
  });

  it('a wait of an earlier version (approved since, or changed again): not held', async () => {
    const explanation = await explained(() => '1');
    expect(explanation.sources[0]!.awaitingApproval).toBeNull();
    expect(explanation.explanation).toContainEqual(
      expect.stringMatching(/^follow mode touches it/),
    );
  });
});

// docs/design.md §6 "Approval above a size" and §9: with the follower's --follow-max-fanout,
// plan says which live readers wait for approval before follow mode rolls them.
describe('plan: a change that waits for approval', () => {
  /** A follow namespace where web and three more Deployments read web-config. */
  function sharedCluster(): MemoryPlanCluster {
    const cluster = liveCluster('follow');
    for (const name of ['api', 'jobs', 'admin']) {
      cluster.workload(NS, deployment(name, { podSpec: podSpecOf('web', 'app:1') }));
    }
    return cluster;
  }
  const change = [configMap('web-config', { 'app.yaml': 'v: next' })];
  const WAITS =
    'waits for approval: 4 workloads read configmap/web-config, more than --follow-max-fanout 3; follow mode rolls them once the digest its FanoutAwaitsApproval Event names is approved';

  it('more readers than --follow-max-fanout: every live reader that rolls says it waits', async () => {
    const result = await plan(change, sharedCluster(), false, 3);
    expect(result.workloads.map((w) => [w.name, w.verdict, w.waitsForApproval])).toEqual([
      ['web', 'roll', ['configmap/web-config']],
      ['api', 'roll', ['configmap/web-config']],
      ['jobs', 'roll', ['configmap/web-config']],
      ['admin', 'roll', ['configmap/web-config']],
    ]);
    expect(result.workloads[0]!.reasons).toContain(WAITS);
  });

  it.each([
    ['as many readers as the limit', 4, () => sharedCluster(), change],
    ['the limit off (0)', 0, () => sharedCluster(), change],
    ['a "true" namespace: no follow mode', 3, () => sharedClusterLabelled('true'), change],
    [
      'only metadata changes: the digest is of the content',
      3,
      () => sharedCluster(),
      [
        {
          ...configMap('web-config', { 'app.yaml': 'v: live' }),
          metadata: { name: 'web-config', namespace: NS, labels: { team: 'a' } },
        },
      ],
    ],
  ])('%s: nothing waits', async (_, maxFanout, cluster, objects) => {
    const result = await plan(objects, cluster(), false, maxFanout);
    expect(result.workloads.flatMap((w) => w.waitsForApproval)).toEqual([]);
  });

  it('a workload of the manifests rolls by its own write: it does not wait', async () => {
    const result = await plan([...change, deployment('web')], sharedCluster(), false, 3);
    const byName = Object.fromEntries(result.workloads.map((w) => [w.name, w.waitsForApproval]));
    expect(byName).toEqual({
      web: [],
      api: ['configmap/web-config'],
      jobs: ['configmap/web-config'],
      admin: ['configmap/web-config'],
    });
  });

  function sharedClusterLabelled(label: string): MemoryPlanCluster {
    return sharedCluster().withNamespace(NS, { 'confighash.dev/enabled': label });
  }
});
