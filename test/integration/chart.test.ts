// The Helm chart (charts/confighash) against the kustomize overlays: for the same
// settings, `helm template` (Helm 3 and Helm 4) renders the objects `kubectl kustomize`
// renders, so neither drifts. Plus `helm lint`, the values schema, and each value the
// overlays have no counterpart for. Skipped, saying so, when Helm is not built (a
// failure with CI=true): tools/build-helm.sh.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAllYaml } from '@kubernetes/client-node';
import { Histogram } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { optionEnvironmentVariables } from '../../src/config/index.js';
import { ALL_SERVE_OPTIONS, LOG_LEVELS } from '../../src/config/serve.js';
import { createFollowMetrics } from '../../src/follow/metrics.js';
import { createAdmissionMetrics } from '../../src/server/metrics.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { CHART, type HelmMajor, helmOrSkip, runHelm } from '../support/helm.js';

const OVERLAYS = join(REPO_ROOT, 'manifests/overlays');
/** Overlays that only tests need: the opt-in components on top of a shipped overlay. */
const TEST_OVERLAYS = join(REPO_ROOT, 'test/fixtures/kustomize');
const NAMESPACE = 'confighash-system';
const helm = helmOrSkip('chart tests');

// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, checked field by field below.
type Obj = Record<string, any>;

/**
 * The labels every Helm chart adds to its objects' own metadata (never to selectors or
 * the pod template, which stay as in manifests/). The parity test removes exactly these,
 * after checking that every chart object has all four.
 */
const HELM_LABELS = [
  'app.kubernetes.io/instance',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/version',
  'helm.sh/chart',
] as const;

/** The same settings, as a kustomize overlay and as chart values. */
const PAIRS = [
  { overlay: 'default', dir: `${OVERLAYS}/default`, values: [] },
  { overlay: 'follow', dir: `${OVERLAYS}/follow`, values: ['follow.enabled=true'] },
  {
    overlay: 'cert-manager',
    dir: `${OVERLAYS}/cert-manager`,
    values: ['certificates.mode=certManager'],
  },
  {
    overlay: 'follow + components argo-rollouts, openkruise',
    dir: `${TEST_OVERLAYS}/kinds`,
    values: ['follow.enabled=true', 'kinds.argoRollouts=true', 'kinds.openKruise=true'],
  },
] as const;

const MAJORS: readonly HelmMajor[] = [3, 4];

/** `helm template` of the chart with `--set` values, as objects. */
async function template(
  major: HelmMajor,
  values: readonly string[],
  namespace = NAMESPACE,
): Promise<Obj[]> {
  const args = ['template', 'confighash', CHART, '--namespace', namespace];
  for (const value of values) args.push('--set', value);
  return (loadAllYaml(await runHelm(helm![major], args)) as Obj[]).filter(Boolean);
}

async function kustomize(dir: string): Promise<Obj[]> {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', dir]);
  return loadAllYaml(stdout) as Obj[];
}

const identity = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
/** Sorted, and as plain data (loadAllYaml makes class instances of the kinds it knows). */
const byIdentity = (objects: Obj[]): Obj[] =>
  JSON.parse(JSON.stringify([...objects].sort((a, b) => identity(a).localeCompare(identity(b)))));

function withoutHelmLabels(o: Obj): Obj {
  const labels = { ...o.metadata.labels };
  for (const label of HELM_LABELS) delete labels[label];
  return { ...o, metadata: { ...o.metadata, labels } };
}

const find = (objects: Obj[], kind: string, name?: string): Obj => {
  const found = objects.find((o) => o.kind === kind && (!name || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''} in ${objects.map(identity).join(', ')}`);
  return found;
};
const deployment = (objects: Obj[]) => find(objects, 'Deployment', 'confighash');
const container = (objects: Obj[]) => deployment(objects).spec.template.spec.containers[0];
const followContainer = (objects: Obj[]) =>
  find(objects, 'Deployment', 'confighash-follow').spec.template.spec.containers[0];
const webhook = (objects: Obj[]) =>
  find(objects, 'MutatingWebhookConfiguration', 'confighash').webhooks[0];

describe.skipIf(!helm).each(MAJORS)('Helm %i', (major) => {
  describe.each(PAIRS)('chart with $values ≡ overlay $overlay', ({ dir, values }) => {
    let chart: Obj[];
    let manifests: Obj[];
    beforeAll(async () => {
      [chart, manifests] = await Promise.all([template(major, values), kustomize(dir)]);
    });

    it('labels every object with the four Helm labels, on top of the overlay’s', () => {
      for (const o of chart) {
        expect(Object.keys(o.metadata.labels), identity(o)).toEqual(
          expect.arrayContaining([...HELM_LABELS]),
        );
      }
    });

    it('renders the same objects, but the Namespace (Helm installs into an existing one)', () => {
      const expected = manifests.filter((o) => o.kind !== 'Namespace');
      expect(manifests.filter((o) => o.kind === 'Namespace').map(identity)).toEqual([
        `Namespace//${NAMESPACE}`,
      ]);
      expect(byIdentity(chart.map(withoutHelmLabels))).toEqual(byIdentity(expected));
    });
  });

  it('passes `helm lint --strict`, with defaults and with every optional part on', async () => {
    await runHelm(helm![major], ['lint', '--strict', CHART]);
    const values = everythingOn.flatMap((value) => ['--set', value]);
    await runHelm(helm![major], ['lint', '--strict', CHART, ...values]);
  });

  it.each([
    ['an unknown value (a typo)', 'replica=3', /replica/],
    ['an unknown certificates mode', 'certificates.mode=vault', /mode/],
    ['a kind the chart does not know', 'kinds.crossplane=true', /crossplane/],
    ['a log level the server rejects', 'logLevel=verbose', /logLevel/],
    ['existingSecret without the Secret', 'certificates.mode=existingSecret', /existingSecret/],
    ['clientAuth without the CA', 'webhook.clientAuth.enabled=true', /caConfigMap/],
  ])('rejects %s with an error that names it', async (_, value, message) => {
    await expect(template(major, [value])).rejects.toThrow(message);
  });
});

/** Every optional part of the chart on, and every value the overlays lack, set. */
const everythingOn = [
  'follow.enabled=true',
  'kinds.argoRollouts=true',
  'kinds.openKruise=true',
  'metrics.serviceMonitor.enabled=true',
  'metrics.prometheusRule.enabled=true',
  'metrics.grafanaDashboard.enabled=true',
  'networkPolicy.enabled=true',
  'priorityClassName=system-cluster-critical',
  'logLevel=debug',
  'extraArgs[0]=--cert-check-interval=600',
  'follow.extraArgs[0]=--follow-debounce=30s',
  'webhook.timeoutSeconds=8',
  'webhook.excludedNamespaces[0]=monitoring',
  'webhook.namespaceSelectorExpressions[0].key=tier',
  'webhook.namespaceSelectorExpressions[0].operator=NotIn',
  'webhook.namespaceSelectorExpressions[0].values[0]=frozen',
  'webhook.clientAuth.enabled=true',
  'webhook.clientAuth.caConfigMap=apiserver-client-ca',
];

describe.skipIf(!helm)('chart values the overlays have no counterpart for (Helm 4)', () => {
  let all: Obj[];
  beforeAll(async () => {
    all = await template(4, everythingOn);
  });

  it('sets only environment variables that are options of `confighash serve` and `follow`', () => {
    for (const app of [container(all), followContainer(all)]) {
      const names = app.env.map((e: Obj) => e.name);
      expect(names).toContain('CONFIGHASH_LOG_LEVEL');
      for (const name of names) expect(optionEnvironmentVariables()).toContain(name);
      expect(app.env).toContainEqual({ name: 'CONFIGHASH_LOG_LEVEL', value: 'debug' });
    }
  });

  it('offers exactly the log levels the server accepts', async () => {
    const schema = JSON.parse(await readFile(`${CHART}/values.schema.json`, 'utf8'));
    expect(schema.properties.logLevel.enum).toEqual([...LOG_LEVELS]);
  });

  it('passes the kinds’ flags then extra args, the priority class, the timeout and the extra namespace rules', () => {
    const kinds = [
      '--kind=argoproj.io/v1alpha1/Rollout',
      '--kind=apps.kruise.io/v1alpha1/CloneSet',
      '--kind=apps.kruise.io/v1beta1/StatefulSet',
    ];
    expect(container(all).args).toEqual([
      ...kinds,
      '--excluded-namespace=monitoring',
      '--cert-check-interval=600',
    ]);
    expect(followContainer(all).args).toEqual([...kinds, '--follow-debounce=30s']);
    for (const name of ['confighash', 'confighash-follow']) {
      expect(find(all, 'Deployment', name).spec.template.spec.priorityClassName).toBe(
        'system-cluster-critical',
      );
    }
    expect(webhook(all).timeoutSeconds).toBe(8);
    expect(webhook(all).namespaceSelector.matchExpressions).toEqual([
      { key: 'confighash.dev/enabled', operator: 'In', values: ['true', 'follow'] },
      {
        key: 'kubernetes.io/metadata.name',
        operator: 'NotIn',
        values: ['kube-system', NAMESPACE, 'monitoring'],
      },
      { key: 'tier', operator: 'NotIn', values: ['frozen'] },
    ]);
  });

  it('always excludes the release’s own namespace, whatever it is called', async () => {
    const objects = await template(4, [], 'webhooks');
    expect(webhook(objects).namespaceSelector.matchExpressions[1].values).toEqual([
      'kube-system',
      'webhooks',
    ]);
    expect(webhook(objects).clientConfig.service.namespace).toBe('webhooks');
  });

  it('fences the ServiceAccount of the release’s namespace, whatever it is called', async () => {
    const objects = await template(4, [], 'webhooks');
    const policy = find(objects, 'ValidatingAdmissionPolicy', 'confighash-webhook-ca-fence');
    expect(policy.spec.matchConditions[0].expression).toBe(
      "request.userInfo.username == 'system:serviceaccount:webhooks:confighash'",
    );
  });

  it('alerts and charts only metrics the server exports, with the four alerts the issue names', () => {
    const registry = createAdmissionMetrics({ collectProcessMetrics: false }).registry;
    createFollowMetrics(registry);
    const exported = registry
      .getMetricsAsArray()
      .flatMap((m) =>
        m instanceof Histogram
          ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`]
          : [m.name],
      );
    const rule = find(all, 'PrometheusRule', 'confighash');
    const alerts = rule.spec.groups.flatMap((g: Obj) => g.rules);
    expect(alerts.map((a: Obj) => a.alert)).toEqual([
      'ConfighashWebhookDown',
      'ConfighashLookupFailures',
      'ConfighashFollowTouchesDeferred',
      'ConfighashFollowLeaderLost',
    ]);
    const dashboard = find(all, 'ConfigMap', 'confighash-dashboard');
    expect(dashboard.metadata.labels.grafana_dashboard).toBe('1');
    const panels = JSON.parse(dashboard.data['confighash.json']).panels as Obj[];
    const expressions = [
      ...alerts.map((a: Obj) => a.expr as string),
      ...panels.flatMap((p) => p.targets.map((t: Obj) => t.expr as string)),
    ];
    const used = new Set(expressions.flatMap((e) => e.match(/\bconfighash_[a-z_]+/g) ?? []));
    expect(used.size).toBeGreaterThanOrEqual(10);
    for (const name of used) expect(exported, name).toContain(name);
    // Prometheus's own `up` of the ServiceMonitor's job, which is named after the Service.
    expect(alerts[0].expr).toContain('up{job="confighash",namespace="confighash-system"}');
    // With clientAuth on (everythingOn), Prometheus scrapes the port that asks no certificate.
    expect(find(all, 'ServiceMonitor', 'confighash').spec.endpoints[0].port).toBe('probes');
    expect(find(all, 'Service', 'confighash').spec.ports.map((p: Obj) => p.name)).toEqual([
      'https',
      'probes',
    ]);
  });

  it('lets through only the webhook port when the NetworkPolicy is on', () => {
    const policy = find(all, 'NetworkPolicy', 'confighash');
    expect(policy.spec.podSelector).toEqual(deployment(all).spec.selector);
    expect(policy.spec.ingress).toEqual([
      {
        ports: [
          { port: 'https', protocol: 'TCP' },
          { port: 'probes', protocol: 'TCP' },
        ],
      },
    ]);
    const follow = find(all, 'NetworkPolicy', 'confighash-follow');
    expect(follow.spec.podSelector).toEqual(
      find(all, 'Deployment', 'confighash-follow').spec.selector,
    );
    expect(follow.spec.ingress).toEqual([{ ports: [{ port: 'http', protocol: 'TCP' }] }]);
    expect(find(all, 'PodMonitor', 'confighash-follow').spec.podMetricsEndpoints[0].port).toBe(
      followContainer(all).ports[0].name,
    );
  });

  it('clientAuth: mounts the CA’s ConfigMap for --client-ca-file and probes the port that asks no certificate', () => {
    const pod = deployment(all).spec.template.spec;
    const volume = pod.volumes.find((v: Obj) => v.configMap?.name === 'apiserver-client-ca');
    const mount = container(all).volumeMounts.find((m: Obj) => m.name === volume.name);
    expect(mount.readOnly).toBe(true);
    expect(container(all).env).toContainEqual({
      name: 'CONFIGHASH_CLIENT_CA_FILE',
      value: `${mount.mountPath}/ca.crt`,
    });
    const probePort = ALL_SERVE_OPTIONS.find((o) => o.flag === 'probe-port')!.defaultValue;
    expect(container(all).ports).toContainEqual({
      name: 'probes',
      containerPort: Number(probePort),
      protocol: 'TCP',
    });
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      expect(container(all)[probe].httpGet.port, probe).toBe('probes');
    }
  });

  it('existingSecret: mounts the given Secret and puts the given CA into the caBundle', async () => {
    const objects = await template(4, [
      'certificates.mode=existingSecret',
      'certificates.existingSecret.name=my-tls',
      'certificates.existingSecret.caBundle=Q0E=',
    ]);
    const volume = deployment(objects).spec.template.spec.volumes.find(
      (v: Obj) => v.secret?.secretName === 'my-tls',
    );
    const mount = container(objects).volumeMounts.find((m: Obj) => m.name === volume.name);
    expect(container(objects).env).toContainEqual({
      name: 'CONFIGHASH_TLS_CERT_FILE',
      value: `${mount.mountPath}/tls.crt`,
    });
    expect(webhook(objects).clientConfig.caBundle).toBe('Q0E=');
    const kinds = objects.map(identity);
    expect(kinds).not.toContain('ClusterRole//confighash-webhook-ca');
    expect(kinds.filter((k) => k.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    expect(kinds.filter((k) => k.startsWith('Certificate/'))).toEqual([]);
  });
});
