// The Helm chart (charts/confighash) against the kustomize overlays: for the same
// settings, `helm template` (Helm 3 and Helm 4) renders the objects `kubectl kustomize`
// renders, so neither drifts. Plus `helm lint`, the values schema, and each value the
// overlays have no counterpart for. Skipped, saying so, when Helm is not built (a
// failure with CI=true): tools/build-helm.sh.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { Histogram } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCertificateMetrics } from '../../src/certs/certificate-metrics.js';
import { optionEnvironmentVariables } from '../../src/cli/index.js';
import { ALL_SERVE_OPTIONS, LOG_LEVELS } from '../../src/cli/serve-options.js';
import { createFollowMetrics } from '../../src/follow/metrics.js';
import { registerBuildInfo } from '../../src/runtime/index.js';
import { createAdmissionMetrics } from '../../src/server/admission-metrics.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { ALLOCATOR_VARIABLES } from '../support/allocator.js';
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
  {
    overlay: 'default + component namespaced-rbac',
    dir: `${TEST_OVERLAYS}/namespaced-rbac`,
    values: ['rbac.namespaced=true'],
  },
  {
    overlay: 'default + component client-auth',
    dir: `${TEST_OVERLAYS}/client-auth`,
    values: [
      'webhook.clientAuth.enabled=true',
      'webhook.clientAuth.caConfigMap=apiserver-client-ca',
    ],
  },
  {
    overlay: 'default + component monitoring',
    dir: `${TEST_OVERLAYS}/monitoring`,
    values: ['metrics.serviceMonitor.enabled=true', 'metrics.prometheusRule.enabled=true'],
  },
  {
    overlay: 'follow + components monitoring, monitoring-follow',
    dir: `${TEST_OVERLAYS}/monitoring-follow`,
    values: [
      'follow.enabled=true',
      'metrics.serviceMonitor.enabled=true',
      'metrics.prometheusRule.enabled=true',
    ],
  },
  {
    overlay: 'default + component snapshots',
    dir: `${TEST_OVERLAYS}/snapshots`,
    values: ['snapshots.enabled=true'],
  },
  {
    overlay: 'follow + component network-policy',
    dir: `${TEST_OVERLAYS}/network-policy`,
    values: ['follow.enabled=true', 'networkPolicy.enabled=true'],
  },
] as const;

const MAJORS: readonly HelmMajor[] = [3, 4];

/** `helm template` of the chart with `--set` values (and `--set-json` ones), as objects. */
async function template(
  major: HelmMajor,
  values: readonly string[],
  namespace = NAMESPACE,
  json: Obj = {},
): Promise<Obj[]> {
  const args = ['template', 'confighash', CHART, '--namespace', namespace];
  for (const value of values) args.push('--set', value);
  for (const [key, value] of Object.entries(json)) {
    args.push('--set-json', `${key}=${JSON.stringify(value)}`);
  }
  return (loadAll(await runHelm(helm![major], args)) as Obj[]).filter(Boolean);
}

async function kustomize(dir: string): Promise<Obj[]> {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', dir]);
  return loadAll(stdout) as Obj[];
}

const identity = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
/** Sorted, as a copy. */
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
const objectsOf = (objects: Obj[], kind: string) => objects.filter((o) => o.kind === kind);
/** Every alert of every PrometheusRule (the webhook's, then the follower's). */
const alertsOf = (objects: Obj[]): Obj[] =>
  objectsOf(objects, 'PrometheusRule').flatMap((rule) =>
    rule.spec.groups.flatMap((g: Obj) => g.rules as Obj[]),
  );

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
    ['imagePullSecrets as a string', 'imagePullSecrets=regcred', /imagePullSecrets/],
    ['an imagePullSecret without a name', 'imagePullSecrets[0].namespace=x', /imagePullSecrets/],
    ['a pod annotation that is not a string', 'podAnnotations.replicas=2', /podAnnotations/],
    ['a pod label that is not a string', 'podLabels.tier=true', /podLabels/],
    [
      'a pod label that is the selector label',
      'podLabels.app\\.kubernetes\\.io/name=x',
      /podLabels/,
    ],
    ['ServiceAccount annotations as a list', 'serviceAccount.annotations[0]=a', /annotations/],
    ['an extraEnv entry without a name', 'extraEnv[0].value=x', /extraEnv/],
    ['an extraVolume without a name', 'extraVolumes[0].emptyDir=x', /extraVolumes/],
    ['an extraVolumeMount without its path', 'extraVolumeMounts[0].name=x', /extraVolumeMounts/],
    ['rbac.namespaced as a string', 'rbac.namespaced=yes', /namespaced/],
    ['relabelings as an object', 'metrics.serviceMonitor.relabelings.a=b', /relabelings/],
    [
      'metricRelabelings as a string',
      'metrics.serviceMonitor.metricRelabelings=x',
      /metricRelabelings/,
    ],
    [
      'a ServiceMonitor namespace that is no name',
      'metrics.serviceMonitor.namespace=Mon',
      /namespace/,
    ],
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

  it('sets only environment variables that are options of `confighash serve` and `follow`, and glibc’s allocator ones', () => {
    for (const app of [container(all), followContainer(all)]) {
      const names: string[] = app.env.map((e: Obj) => e.name);
      expect(names).toContain('CONFIGHASH_LOG_LEVEL');
      for (const name of names.filter((name) => !ALLOCATOR_VARIABLES.includes(name))) {
        expect(optionEnvironmentVariables()).toContain(name);
      }
      expect(names.filter((name) => name.startsWith('MALLOC_'))).toEqual(ALLOCATOR_VARIABLES);
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
    // The follower follows nowhere the webhook never hashes.
    expect(followContainer(all).args).toEqual([
      ...kinds,
      '--excluded-namespace=monitoring',
      '--follow-debounce=30s',
    ]);
    for (const name of ['confighash', 'confighash-follow']) {
      expect(find(all, 'Deployment', name).spec.template.spec.priorityClassName).toBe(
        'system-cluster-critical',
      );
    }
    expect(webhook(all).timeoutSeconds).toBe(8);
    // Its deadline is the registration's: no review runs longer, whatever its ?timeout= (§4).
    expect(container(all).env).toContainEqual({ name: 'CONFIGHASH_WEBHOOK_TIMEOUT', value: '8' });
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
    createCertificateMetrics(registry);
    registerBuildInfo(registry, '0.0.0');
    const exported = registry
      .getMetricsAsArray()
      .flatMap((m) =>
        m instanceof Histogram
          ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`]
          : [m.name],
      );
    const alerts = alertsOf(all);
    expect(alerts.map((a: Obj) => a.alert)).toEqual([
      'ConfighashWebhookDown',
      'ConfighashWritesAdmittedUnhashed',
      'ConfighashWebhookRejections',
      'ConfighashReviewsSlow',
      'ConfighashLookupFailures',
      'ConfighashCertificateExpiresSoon',
      'ConfighashCertificateRenewalFailing',
      'ConfighashFollowTouchesDeferred',
      'ConfighashFollowLeaderLost',
      'ConfighashFollowReconcileErrors',
      'ConfighashFollowResyncStale',
      'ConfighashFanoutHalted',
      'ConfighashFanoutAwaitsApproval',
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
    // The apiserver's counts, filtered to the one webhook the configuration registers.
    const webhookName = webhook(all).name;
    const apiserverMetrics = expressions.flatMap(
      (e) => e.match(/\bapiserver_[a-z_]+\{[^}]*\}/g) ?? [],
    );
    expect(new Set(apiserverMetrics)).toEqual(
      new Set([
        `apiserver_admission_webhook_fail_open_count{name="${webhookName}"}`,
        `apiserver_admission_webhook_rejection_count{name="${webhookName}"}`,
        `apiserver_admission_webhook_fail_open_count{cluster=~"$cluster",name="${webhookName}"}`,
      ]),
    );
    // The panels the issue names, every query scoped to the `cluster` variable.
    const dashboardJson = JSON.parse(dashboard.data['confighash.json']);
    expect(dashboardJson.templating.list.map((v: Obj) => v.name)).toEqual([
      'datasource',
      'cluster',
      'namespace',
    ]);
    const titles = panels.map((p) => p.title as string).join('\n');
    for (const topic of [
      /fan-out/,
      /held/,
      /approval/,
      /Skipped/,
      /fail-open/,
      /denied/,
      /Memory/,
      /Restarts/,
    ]) {
      expect(titles).toMatch(topic);
    }
    for (const panel of panels) {
      for (const target of panel.targets) {
        expect(target.expr, panel.title).toContain('cluster=~"$cluster"');
      }
    }
    // Prometheus's own `up` of the ServiceMonitor's job, which is named after the Service.
    expect(alerts[0]!.expr).toContain('up{job="confighash",namespace="confighash-system"}');
    // With clientAuth on (everythingOn), Prometheus scrapes the port that asks no certificate.
    expect(find(all, 'ServiceMonitor', 'confighash').spec.endpoints[0].port).toBe('probes');
    expect(find(all, 'Service', 'confighash').spec.ports.map((p: Obj) => p.name)).toEqual([
      'https',
      'probes',
    ]);
  });

  it('fires nothing for want of a scrape when nothing scrapes the pods (no ServiceMonitor)', async () => {
    const unscraped = await template(4, [
      'metrics.prometheusRule.enabled=true',
      'follow.enabled=true',
    ]);
    const rules = alertsOf(unscraped);
    expect(rules.length).toBeGreaterThanOrEqual(7);
    for (const rule of rules) expect(rule.expr, rule.alert).not.toContain('absent(');
    expect(find(all, 'PrometheusRule', 'confighash').spec.groups[0].rules[0].expr).toContain(
      'absent(',
    );
    // The follower's alerts follow the PodMonitor: on by itself, off by itself.
    const podMonitorOnly = await template(4, [
      'metrics.prometheusRule.enabled=true',
      'follow.enabled=true',
      'metrics.podMonitor.enabled=true',
    ]);
    const leaderLost = (objects: Obj[]) =>
      alertsOf(objects).find((a) => a.alert === 'ConfighashFollowLeaderLost')!.expr as string;
    expect(leaderLost(podMonitorOnly)).toContain('absent(');
    expect(alertsOf(podMonitorOnly)[0]!.expr).not.toContain('absent(');
    expect(objectsOf(podMonitorOnly, 'PodMonitor')).toHaveLength(1);
    expect(objectsOf(podMonitorOnly, 'ServiceMonitor')).toHaveLength(0);
    const serviceMonitorOnly = await template(4, [
      'follow.enabled=true',
      'metrics.serviceMonitor.enabled=true',
      'metrics.podMonitor.enabled=false',
    ]);
    expect(objectsOf(serviceMonitorOnly, 'PodMonitor')).toHaveLength(0);
  });

  it('gives every alert a `for` and a runbook_url naming a section of docs/usage.md that exists', async () => {
    const usage = await readFile(join(REPO_ROOT, 'docs/usage.md'), 'utf8');
    const anchors = new Set(
      [...usage.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 _-]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    const alerts = alertsOf(all);
    expect(alerts.length).toBe(13);
    for (const alert of alerts) {
      expect(alert.for, alert.alert).toMatch(/^[0-9]+[smhd]$/);
      const url = alert.annotations.runbook_url as string;
      expect(url, alert.alert).toBe(
        `https://github.com/confighash/confighash/blob/main/docs/usage.md#${alert.alert.toLowerCase()}`,
      );
      expect(anchors, url).toContain(url.split('#')[1]);
    }
    const mirrored = await template(4, [
      'metrics.prometheusRule.enabled=true',
      'metrics.prometheusRule.runbookBaseUrl=https://git.example/docs/usage.md',
    ]);
    expect(alertsOf(mirrored)[0]!.annotations.runbook_url).toBe(
      'https://git.example/docs/usage.md#confighashwebhookdown',
    );
  });

  it('NetworkPolicy: the webhook port from anywhere, the metrics ports from the monitoring namespace, egress to the apiserver and DNS', () => {
    const monitoring = [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ];
    const egress = [
      {
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 6443, protocol: 'TCP' },
        ],
      },
      {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
    ];
    const policy = find(all, 'NetworkPolicy', 'confighash');
    expect(policy.spec.podSelector).toEqual(deployment(all).spec.selector);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress).toEqual([
      { ports: [{ port: 'https', protocol: 'TCP' }] },
      { ports: [{ port: 'probes', protocol: 'TCP' }], from: monitoring },
    ]);
    expect(policy.spec.egress).toEqual(egress);
    const follow = find(all, 'NetworkPolicy', 'confighash-follow');
    expect(follow.spec.podSelector).toEqual(
      find(all, 'Deployment', 'confighash-follow').spec.selector,
    );
    expect(follow.spec.ingress).toEqual([
      { ports: [{ port: 'http', protocol: 'TCP' }], from: monitoring },
    ]);
    expect(follow.spec.egress).toEqual(egress);
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
    // The caBundle fence goes with the caBundle patch; the Secret fence stays with the key.
    expect(kinds.filter((k) => k.startsWith('ValidatingAdmissionPolicy/'))).toEqual([
      'ValidatingAdmissionPolicy//confighash-secret-fence',
    ]);
    expect(kinds.filter((k) => k.startsWith('Certificate/'))).toEqual([]);
  });
});

/** The conventions most charts offer, each set (as `--set-json`), with follow mode on. */
const CONVENTIONS: Obj = {
  imagePullSecrets: [{ name: 'regcred' }],
  'serviceAccount.annotations': {
    'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/confighash',
  },
  'follow.serviceAccount.annotations': {
    'eks.amazonaws.com/role-arn': 'arn:aws:iam::111122223333:role/confighash-follow',
  },
  podAnnotations: { 'example.com/owner': 'platform' },
  podLabels: { team: 'platform' },
  extraEnv: [{ name: 'HTTPS_PROXY', value: 'http://proxy.example:3128' }],
  extraVolumes: [{ name: 'corp-ca', configMap: { name: 'corp-ca' } }],
  extraVolumeMounts: [{ name: 'corp-ca', mountPath: '/etc/ssl/corp', readOnly: true }],
  'metrics.serviceMonitor': {
    enabled: true,
    namespace: 'monitoring',
    interval: '15s',
    relabelings: [{ action: 'replace', targetLabel: 'cluster', replacement: 'prod' }],
    metricRelabelings: [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_.*' }],
    // In a namespace of its own it cannot read the CA's Secret: the chart asks for a CA there.
    tlsConfig: { ca: { configMap: { name: 'confighash-ca', key: 'ca.crt' } } },
  },
  'metrics.podMonitor': {
    interval: '15s',
    relabelings: [{ action: 'replace', targetLabel: 'cluster', replacement: 'prod' }],
    metricRelabelings: [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_.*' }],
  },
};
const DEPLOYMENTS = ['confighash', 'confighash-follow'] as const;
const monitorEndpoints = (objects: Obj[]) => [
  find(objects, 'ServiceMonitor', 'confighash').spec.endpoints[0],
  find(objects, 'PodMonitor', 'confighash-follow').spec.podMetricsEndpoints[0],
];

describe.skipIf(!helm)('chart conventions, on both Deployments (Helm 4)', () => {
  let set: Obj[];
  let unset: Obj[];
  beforeAll(async () => {
    const on = ['follow.enabled=true', 'metrics.serviceMonitor.enabled=true'];
    [set, unset] = await Promise.all([
      template(4, ['follow.enabled=true'], NAMESPACE, CONVENTIONS),
      template(4, on),
    ]);
  });

  it.each(DEPLOYMENTS)(
    '%s: pull secrets, pod annotations and labels beside the selector’s',
    (name) => {
      const { spec } = find(set, 'Deployment', name);
      expect(spec.template.spec.imagePullSecrets).toEqual(CONVENTIONS.imagePullSecrets);
      expect(spec.template.metadata.annotations).toEqual(CONVENTIONS.podAnnotations);
      expect(spec.template.metadata.labels).toEqual({
        ...spec.selector.matchLabels,
        'app.kubernetes.io/component': name === 'confighash' ? 'webhook' : 'follow',
        team: 'platform',
      });
      expect(find(set, 'ServiceAccount', name).metadata.annotations).toEqual(
        CONVENTIONS[
          name === 'confighash' ? 'serviceAccount.annotations' : 'follow.serviceAccount.annotations'
        ],
      );
    },
  );

  it.each(DEPLOYMENTS)('%s: extra env after the chart’s own, extra volumes and mounts', (name) => {
    const pod = find(set, 'Deployment', name).spec.template.spec;
    const [app] = pod.containers;
    expect(app.env.at(-1)).toEqual(CONVENTIONS.extraEnv[0]);
    expect(app.env.slice(0, -1)).toEqual(
      find(unset, 'Deployment', name).spec.template.spec.containers[0].env,
    );
    expect(app.volumeMounts).toContainEqual(CONVENTIONS.extraVolumeMounts[0]);
    expect(pod.volumes).toContainEqual(CONVENTIONS.extraVolumes[0]);
  });

  it('puts both monitors in the given namespace, selecting pods in the release’s, with the relabelings', () => {
    for (const kind of ['ServiceMonitor', 'PodMonitor']) {
      const monitor = find(set, kind);
      expect(monitor.metadata.namespace, kind).toBe('monitoring');
      expect(monitor.spec.namespaceSelector, kind).toEqual({ matchNames: [NAMESPACE] });
    }
    const { relabelings, metricRelabelings } = CONVENTIONS['metrics.serviceMonitor'];
    for (const endpoint of monitorEndpoints(set)) {
      expect(endpoint).toMatchObject({ interval: '15s', relabelings, metricRelabelings });
    }
  });

  it('renders none of them when unset', () => {
    for (const name of DEPLOYMENTS) {
      const { spec } = find(unset, 'Deployment', name);
      expect(spec.template.spec.imagePullSecrets, name).toBeUndefined();
      expect(spec.template.metadata.annotations, name).toBeUndefined();
      expect(spec.template.metadata.labels, name).toEqual({
        ...spec.selector.matchLabels,
        'app.kubernetes.io/component': name === 'confighash' ? 'webhook' : 'follow',
      });
      expect(find(unset, 'ServiceAccount', name).metadata.annotations, name).toBeUndefined();
    }
    for (const kind of ['ServiceMonitor', 'PodMonitor']) {
      expect(find(unset, kind).metadata.namespace, kind).toBe(NAMESPACE);
    }
    for (const endpoint of monitorEndpoints(unset)) {
      expect(endpoint.interval).toBe('30s');
      expect(endpoint).not.toHaveProperty('relabelings');
      expect(endpoint).not.toHaveProperty('metricRelabelings');
    }
  });
});

/** The conventions of Reloader's and cert-manager's charts, each set, with follow mode on. */
const CONVENTIONS_2: Obj = {
  'global.commonLabels': { 'example.com/team': 'platform' },
  replicaCount: 3,
  strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
  deployment: { labels: { tier: 'control' }, annotations: { 'example.com/owner': 'ops' } },
  service: { labels: { exposed: 'no' }, annotations: { 'example.com/lb': 'none' } },
  'serviceAccount.labels': { sa: 'webhook' },
  'webhook.labels': { registration: 'confighash' },
  'webhook.annotations': { 'example.com/reviewed': 'yes' },
  containerSecurityContext: {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    runAsUser: 1001,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
  follow: {
    enabled: true,
    serviceAccount: { create: true, name: '', labels: { sa: 'follower' } },
    nodeSelector: { pool: 'background' },
    tolerations: [{ key: 'background', operator: 'Exists', effect: 'NoSchedule' }],
    affinity: { nodeAffinity: {} },
    priorityClassName: 'low',
    strategy: { type: 'Recreate' },
    deployment: { labels: { tier: 'background' }, annotations: { 'example.com/owner': 'bg' } },
  },
  priorityClassName: 'system-cluster-critical',
  metrics: {
    serviceMonitor: { enabled: true, scrapeTimeout: '5s', honorLabels: true },
    podMonitor: { enabled: true, scrapeTimeout: '4s', honorLabels: true },
  },
  extraObjects: [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra-{{ .Release.Name }}' } },
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: extra-secret\n  namespace: {{ .Release.Namespace }}\n',
  ],
};

describe.skipIf(!helm).each(MAJORS)(
  'chart conventions of Reloader and cert-manager (Helm %i)',
  (major) => {
    let set: Obj[];
    let defaults: Obj[];
    beforeAll(async () => {
      [set, defaults] = await Promise.all([
        template(major, [], NAMESPACE, CONVENTIONS_2),
        template(major, ['follow.enabled=true', 'metrics.serviceMonitor.enabled=true']),
      ]);
    });
    const pod = (objects: Obj[], name: string) => find(objects, 'Deployment', name).spec.template;

    it('global.commonLabels on every object, never in a selector', () => {
      // extraObjects are yours as you wrote them.
      for (const o of set.filter((o) => !o.metadata.name.startsWith('extra-'))) {
        expect(o.metadata.labels?.['example.com/team'], identity(o)).toBe('platform');
      }
      for (const name of DEPLOYMENTS) {
        const { spec } = find(set, 'Deployment', name);
        expect(spec.selector.matchLabels).not.toHaveProperty('example.com/team');
      }
    });

    it('app.kubernetes.io/component: webhook or follow, on objects and pod templates, never in a selector', () => {
      for (const o of defaults) {
        const follower = JSON.stringify(o.metadata.labels).includes('confighash-follow');
        expect(o.metadata.labels['app.kubernetes.io/component'], identity(o)).toBe(
          follower ? 'follow' : 'webhook',
        );
      }
      expect(pod(defaults, 'confighash').metadata.labels['app.kubernetes.io/component']).toBe(
        'webhook',
      );
      expect(find(defaults, 'Service', 'confighash').spec.selector).toEqual({
        'app.kubernetes.io/name': 'confighash',
      });
    });

    it('replicaCount and strategy; the deprecated replicas still wins when set', async () => {
      const webhookDeployment = find(set, 'Deployment', 'confighash');
      expect(webhookDeployment.spec.replicas).toBe(3);
      expect(webhookDeployment.spec.strategy).toEqual(CONVENTIONS_2.strategy);
      expect(find(defaults, 'Deployment', 'confighash').spec.replicas).toBe(2);
      expect(find(defaults, 'Deployment', 'confighash').spec.strategy).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
      });
      const old = await template(major, ['replicas=4', 'replicaCount=3']);
      expect(deployment(old).spec.replicas).toBe(4);
    });

    it('labels and annotations of the Deployments, the Service, the ServiceAccounts and the webhook configuration', async () => {
      const webhookDeployment = find(set, 'Deployment', 'confighash');
      expect(webhookDeployment.metadata.labels.tier).toBe('control');
      expect(webhookDeployment.metadata.annotations).toEqual({ 'example.com/owner': 'ops' });
      expect(pod(set, 'confighash').metadata.labels).not.toHaveProperty('tier');
      const follower = find(set, 'Deployment', 'confighash-follow');
      expect(follower.metadata.labels.tier).toBe('background');
      expect(follower.metadata.annotations).toEqual({ 'example.com/owner': 'bg' });
      const service = find(set, 'Service', 'confighash');
      expect(service.metadata.labels.exposed).toBe('no');
      expect(service.metadata.annotations).toEqual({ 'example.com/lb': 'none' });
      expect(find(set, 'ServiceAccount', 'confighash').metadata.labels.sa).toBe('webhook');
      expect(find(set, 'ServiceAccount', 'confighash-follow').metadata.labels.sa).toBe('follower');
      const registration = find(set, 'MutatingWebhookConfiguration', 'confighash');
      expect(registration.metadata.labels.registration).toBe('confighash');
      expect(registration.metadata.annotations).toEqual({ 'example.com/reviewed': 'yes' });
      // cert-manager's injection annotation stays beside yours.
      const certManager = await template(major, ['certificates.mode=certManager'], NAMESPACE, {
        'webhook.annotations': { 'example.com/reviewed': 'yes' },
      });
      expect(find(certManager, 'MutatingWebhookConfiguration').metadata.annotations).toEqual({
        'example.com/reviewed': 'yes',
        'cert-manager.io/inject-ca-from': `${NAMESPACE}/confighash-serving`,
      });
      for (const name of DEPLOYMENTS) {
        expect(find(defaults, 'Deployment', name).metadata.annotations, name).toBeUndefined();
      }
      expect(find(defaults, 'MutatingWebhookConfiguration').metadata.annotations).toBeUndefined();
    });

    it('containerSecurityContext on both containers; the deprecated securityContext merges over it', async () => {
      for (const name of DEPLOYMENTS) {
        // Merged over the chart's (runAsGroup 65532 stays), as Helm merges any map.
        expect(pod(set, name).spec.containers[0].securityContext, name).toEqual({
          ...pod(defaults, name).spec.containers[0].securityContext,
          ...CONVENTIONS_2.containerSecurityContext,
        });
      }
      const old = await template(major, ['follow.enabled=true', 'securityContext.runAsUser=2000']);
      for (const name of DEPLOYMENTS) {
        expect(pod(old, name).spec.containers[0].securityContext, name).toEqual({
          ...pod(defaults, name).spec.containers[0].securityContext,
          runAsUser: 2000,
        });
      }
      await expect(template(major, ['containerSecurityContext.runAsUser=0'])).rejects.toThrow(
        /runAsUser/,
      );
    });

    it('kubernetes.io/os: linux by default; the follower’s own scheduling, or the webhook’s', () => {
      for (const name of DEPLOYMENTS) {
        expect(pod(defaults, name).spec.nodeSelector, name).toEqual({
          'kubernetes.io/os': 'linux',
        });
      }
      const follower = find(set, 'Deployment', 'confighash-follow');
      expect(follower.spec.template.spec).toMatchObject({
        nodeSelector: { pool: 'background' },
        tolerations: CONVENTIONS_2.follow.tolerations,
        affinity: { nodeAffinity: {} },
        priorityClassName: 'low',
      });
      expect(follower.spec.strategy).toEqual({ type: 'Recreate' });
      expect(pod(set, 'confighash').spec).toMatchObject({
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        priorityClassName: 'system-cluster-critical',
      });
      expect(pod(set, 'confighash').spec).not.toHaveProperty('tolerations');
    });

    it('ServiceMonitor and PodMonitor each with scrapeTimeout and honorLabels; verified TLS by default', () => {
      expect(find(set, 'ServiceMonitor', 'confighash').spec.endpoints[0]).toMatchObject({
        scrapeTimeout: '5s',
        honorLabels: true,
      });
      expect(
        find(set, 'PodMonitor', 'confighash-follow').spec.podMetricsEndpoints[0],
      ).toMatchObject({
        scrapeTimeout: '4s',
        honorLabels: true,
      });
      const endpoint = find(defaults, 'ServiceMonitor', 'confighash').spec.endpoints[0];
      expect(endpoint).not.toHaveProperty('scrapeTimeout');
      expect(endpoint).not.toHaveProperty('honorLabels');
      expect(endpoint.tlsConfig).toEqual({
        serverName: `confighash.${NAMESPACE}.svc`,
        ca: { secret: { name: 'confighash-certs', key: 'ca-bundle.crt' } },
      });
    });

    it('extraObjects, maps and strings, through tpl', () => {
      expect(find(set, 'ConfigMap', 'extra-confighash').metadata.name).toBe('extra-confighash');
      expect(find(set, 'Secret', 'extra-secret').metadata.namespace).toBe(NAMESPACE);
    });

    it('refuses nameOverride, saying why', async () => {
      await expect(template(major, ['nameOverride=webhook'])).rejects.toThrow(/nameOverride/);
    });
  },
);

describe.skipIf(!helm)('the ServiceMonitor verifies the webhook’s certificate (Helm 4)', () => {
  const on = ['metrics.serviceMonitor.enabled=true'];
  const tls = async (values: string[]) =>
    find(await template(4, [...on, ...values]), 'ServiceMonitor').spec.endpoints[0].tlsConfig;

  it.each([
    ['selfManaged', [], { secret: { name: 'confighash-certs', key: 'ca-bundle.crt' } }],
    [
      'certManager',
      ['certificates.mode=certManager'],
      { secret: { name: 'confighash-serving-cert', key: 'ca.crt' } },
    ],
    [
      'existingSecret',
      [
        'certificates.mode=existingSecret',
        'certificates.existingSecret.name=my-tls',
        `certificates.existingSecret.caBundle=${Buffer.from('PEM').toString('base64')}`,
      ],
      { configMap: { name: 'confighash-metrics-ca', key: 'ca.crt' } },
    ],
  ])('%s: the CA that signed it, never insecureSkipVerify', async (_mode, values, ca) => {
    expect(await tls(values)).toEqual({ serverName: `confighash.${NAMESPACE}.svc`, ca });
  });

  it('existingSecret: the ConfigMap holds the caBundle, decoded', async () => {
    const objects = await template(4, [
      ...on,
      'certificates.mode=existingSecret',
      'certificates.existingSecret.name=my-tls',
      `certificates.existingSecret.caBundle=${Buffer.from('-----PEM-----').toString('base64')}`,
    ]);
    expect(find(objects, 'ConfigMap', 'confighash-metrics-ca').data['ca.crt']).toBe(
      '-----PEM-----',
    );
  });

  it('your tlsConfig merges over it (insecureSkipVerify only when you ask)', async () => {
    expect(await tls(['metrics.serviceMonitor.tlsConfig.insecureSkipVerify=true'])).toEqual({
      serverName: `confighash.${NAMESPACE}.svc`,
      ca: { secret: { name: 'confighash-certs', key: 'ca-bundle.crt' } },
      insecureSkipVerify: true,
    });
  });

  it('in a namespace of its own without a tlsConfig, fails saying what to set', async () => {
    await expect(
      template(4, [...on, 'metrics.serviceMonitor.namespace=monitoring']),
    ).rejects.toThrow(/metrics\.serviceMonitor\.tlsConfig/);
  });
});

describe.skipIf(!helm)('ServiceAccounts of your own (Helm 4)', () => {
  const names = ['serviceAccount.name=webhook-sa', 'follow.serviceAccount.name=follower-sa'];
  const on = ['follow.enabled=true', 'certificates.mode=selfManaged'];
  const username = (name: string) => `system:serviceaccount:${NAMESPACE}:${name}`;

  it('a renamed ServiceAccount is the one the pods run as, every binding names, and the fences match', async () => {
    const objects = await template(4, [...on, ...names]);
    expect(objects.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata.name)).toEqual([
      'follower-sa',
      'webhook-sa',
    ]);
    const pod = (name: string) => find(objects, 'Deployment', name).spec.template.spec;
    expect(pod('confighash').serviceAccountName).toBe('webhook-sa');
    expect(pod('confighash-follow').serviceAccountName).toBe('follower-sa');
    const subjects = objects
      .filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')
      .flatMap((o) => o.subjects as Obj[]);
    expect(subjects.length).toBeGreaterThan(4);
    for (const subject of subjects) {
      expect(['webhook-sa', 'follower-sa']).toContain(subject.name);
      expect(subject).toMatchObject({ kind: 'ServiceAccount', namespace: NAMESPACE });
    }
    const fences = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy');
    expect(fences.map((o) => o.metadata.name).sort()).toEqual([
      'confighash-follow-fence',
      'confighash-secret-fence',
      'confighash-webhook-ca-fence',
    ]);
    const conditions = fences
      .flatMap((o) => o.spec.matchConditions as Obj[])
      .map((c) => c.expression as string)
      .join('\n');
    expect(conditions).toContain(`'${username('webhook-sa')}'`);
    expect(conditions).toContain(`'${username('follower-sa')}'`);
    expect(conditions).not.toMatch(/:confighash(-follow)?'/);
  });

  it('NOTES: the RoleBindings to create name the renamed ServiceAccounts', async () => {
    const notes = await installNotes([...on, ...names, 'rbac.namespaced=true']);
    const accounts = [...notes.matchAll(/--serviceaccount=(\S+)/g)].map((match) => match[1]);
    expect(new Set(accounts)).toEqual(
      new Set([`${NAMESPACE}:webhook-sa`, `${NAMESPACE}:follower-sa`]),
    );
  });

  it.each([
    [
      'the serving Deployment on `default`',
      ['serviceAccount.name=default'],
      /serviceAccount\.name may not be "default"/,
    ],
    [
      'the follower on `default`',
      ['follow.enabled=true', 'follow.serviceAccount.name=default'],
      /follow\.serviceAccount\.name may not be "default"/,
    ],
    [
      'one ServiceAccount for both Deployments',
      ['follow.enabled=true', 'serviceAccount.name=shared', 'follow.serviceAccount.name=shared'],
      /are both "shared".*would hold the follower's rights/,
    ],
    [
      'the serving Deployment on the follower’s default name',
      ['follow.enabled=true', 'serviceAccount.name=confighash-follow'],
      /are both "confighash-follow"/,
    ],
  ])('refuses %s, saying why', async (_what, values, message) => {
    await expect(template(4, values)).rejects.toThrow(message);
  });

  it('renders the follower’s unused default name freely without follow mode', async () => {
    const objects = await template(4, ['follow.serviceAccount.name=default']);
    expect(objects.some((o) => o.kind === 'Deployment')).toBe(true);
  });

  it('create false renders no ServiceAccount, and still binds and fences the named ones', async () => {
    const objects = await template(4, [
      ...on,
      ...names,
      'serviceAccount.create=false',
      'follow.serviceAccount.create=false',
    ]);
    expect(objects.filter((o) => o.kind === 'ServiceAccount')).toEqual([]);
    const expressions = JSON.stringify(
      objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => o.spec),
    );
    expect(expressions).toContain(username('webhook-sa'));
    expect(expressions).toContain(username('follower-sa'));
  });
});

describe.skipIf(!helm)('pods and their network (Helm 4)', () => {
  it('security contexts: restricted by default on both Deployments, replaced by the values', async () => {
    const [defaults, custom] = await Promise.all([
      template(4, ['follow.enabled=true']),
      template(4, ['follow.enabled=true', 'podSecurityContext.fsGroup=2000']),
    ]);
    for (const name of DEPLOYMENTS) {
      const pod = find(defaults, 'Deployment', name).spec.template.spec;
      expect(pod.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        fsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.containers[0].securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(find(custom, 'Deployment', name).spec.template.spec.securityContext.fsGroup).toBe(
        2000,
      );
    }
  });

  it.each([
    ['a root UID in the pod', 'podSecurityContext.runAsUser=0', /runAsUser/],
    ['a root UID in the container', 'securityContext.runAsUser=0', /runAsUser/],
    ['runAsNonRoot false', 'securityContext.runAsNonRoot=false', /runAsNonRoot/],
    ['a privileged container', 'securityContext.privileged=true', /privileged/],
    ['both budgets', 'podDisruptionBudget.maxUnavailable=1', /not both/],
  ])('the chart refuses %s', async (_name, value, error) => {
    await expect(template(4, [value])).rejects.toThrow(error);
  });

  it('global.imageRegistry replaces the registry of both images, digest or tag', async () => {
    const objects = await template(4, [
      'follow.enabled=true',
      'global.imageRegistry=mirror.example:5000',
    ]);
    for (const name of DEPLOYMENTS) {
      expect(find(objects, 'Deployment', name).spec.template.spec.containers[0].image).toMatch(
        /^mirror\.example:5000\/confighash\/confighash:/,
      );
    }
    // A repository without a registry host (Docker Hub's form) gets the registry in front.
    const digest = `sha256:${'a'.repeat(64)}`;
    const hub = await template(4, [
      'image.repository=confighash/confighash',
      'global.imageRegistry=mirror.example',
      `image.digest=${digest}`,
    ]);
    expect(container(hub).image).toBe(`mirror.example/confighash/confighash@${digest}`);
  });

  it('probe overrides merge over the chart’s; revisionHistoryLimit and maxUnavailable reach both Deployments', async () => {
    const objects = await template(4, [
      'follow.enabled=true',
      'probes.readiness.periodSeconds=11',
      'revisionHistoryLimit=2',
      'podDisruptionBudget.minAvailable=null',
      'podDisruptionBudget.maxUnavailable=50%',
    ]);
    expect(container(objects).readinessProbe).toEqual({
      httpGet: { path: '/readyz', port: 'https', scheme: 'HTTPS' },
      periodSeconds: 11,
      timeoutSeconds: 2,
      failureThreshold: 2,
    });
    for (const name of DEPLOYMENTS) {
      expect(find(objects, 'Deployment', name).spec.revisionHistoryLimit).toBe(2);
    }
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget');
    expect(budgets).toHaveLength(2);
    for (const { spec } of budgets) {
      expect(spec.maxUnavailable).toBe('50%');
      expect(spec).not.toHaveProperty('minAvailable');
    }
  });

  it('webhook.hostNetwork and webhook.port: the node’s network, cluster DNS, the port the Service targets', async () => {
    const objects = await template(4, ['webhook.hostNetwork=true', 'webhook.port=10250']);
    const pod = deployment(objects).spec.template.spec;
    expect(pod).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    expect(container(objects).ports).toEqual([
      { name: 'https', containerPort: 10250, protocol: 'TCP' },
    ]);
    expect(container(objects).env).toContainEqual({
      name: 'CONFIGHASH_LISTEN_PORT',
      value: '10250',
    });
    expect(find(objects, 'Service', 'confighash').spec.ports[0]).toMatchObject({
      port: 443,
      targetPort: 'https',
    });
    const defaults = deployment(await template(4, [])).spec.template.spec;
    expect(defaults).not.toHaveProperty('hostNetwork');
    expect(defaults).not.toHaveProperty('dnsPolicy');
  });
});

/** The ClusterRoleBindings of a render, by name. */
const clusterBindings = (objects: Obj[]) =>
  objects.filter((o) => o.kind === 'ClusterRoleBinding').map((o) => o.metadata.name as string);

describe.skipIf(!helm)('rbac.namespaced (Helm 4)', () => {
  const follow = ['follow.enabled=true', 'kinds.argoRollouts=true', 'kinds.openKruise=true'];
  let cluster: Obj[];
  let namespaced: Obj[];
  beforeAll(async () => {
    [cluster, namespaced] = await Promise.all([
      template(4, follow),
      template(4, [...follow, 'rbac.namespaced=true']),
    ]);
  });

  it('removes the ClusterRoleBinding the kustomize component namespaced-rbac deletes', async () => {
    const [chartBefore, chartAfter, overlayBefore, overlayAfter] = await Promise.all([
      template(4, []),
      template(4, ['rbac.namespaced=true']),
      kustomize(`${OVERLAYS}/default`),
      kustomize(`${TEST_OVERLAYS}/namespaced-rbac`),
    ]);
    const removed = (before: Obj[], after: Obj[]) => {
      const kept = new Set(after.map(identity));
      return before.map(identity).filter((id) => !kept.has(id));
    };
    expect(removed(chartBefore, chartAfter)).toEqual(removed(overlayBefore, overlayAfter));
    expect(removed(overlayBefore, overlayAfter)).toEqual([
      'ClusterRoleBinding//confighash-config-reader',
    ]);
  });

  it('with follow mode: leaves only the Namespace watch cluster-wide and keeps every ClusterRole to bind', () => {
    expect(clusterBindings(cluster)).toEqual(
      expect.arrayContaining(['confighash-config-reader', 'confighash-follow']),
    );
    const bindingsLeft = namespaced.filter((o) => o.kind === 'ClusterRoleBinding');
    expect(
      bindingsLeft.filter((b) => b.subjects.some((s: Obj) => s.name === 'confighash-follow')),
    ).toEqual([
      expect.objectContaining({
        roleRef: expect.objectContaining({ name: 'confighash-follow-namespaces' }),
      }),
    ]);
    expect(clusterBindings(namespaced)).not.toContain('confighash-config-reader');
    const roles = (objects: Obj[]) => objects.filter((o) => o.kind === 'ClusterRole').map(identity);
    expect(roles(namespaced)).toEqual(roles(cluster));
  });

  it('runs the follower with --watch-scope=namespace, the serving Deployment as before', () => {
    expect(followContainer(namespaced).args).toEqual([
      ...followContainer(cluster).args,
      '--watch-scope=namespace',
    ]);
    expect(followContainer(cluster).args.join(' ')).not.toContain('--watch-scope');
    expect(container(namespaced)).toEqual(container(cluster));
  });

  it('NOTES: that it fails open, how to see it answer, and a RoleBinding per ClusterRole left unbound', async () => {
    const notes = await installNotes([...follow, 'rbac.namespaced=true']);
    expect(notes).toContain('fails open');
    expect(notes).toContain(container(cluster).image);
    expect(notes).toContain(`-n ${NAMESPACE} rollout status deploy/confighash `);
    expect(notes).toContain('kubectl confighash explain');
    const unbound = clusterBindings(cluster).filter(
      (n) => !clusterBindings(namespaced).includes(n),
    );
    const commands = [
      ...notes.matchAll(
        /kubectl create rolebinding (\S+) .*\n.*--clusterrole=(\S+) --serviceaccount=(\S+)/g,
      ),
    ];
    expect(commands.map((c) => c[2]).sort()).toEqual(unbound.sort());
    for (const [, name, role, account] of commands) {
      const binding = find(cluster, 'ClusterRoleBinding', role);
      expect(name).toBe(role);
      expect(account).toBe(`${NAMESPACE}:${binding.subjects[0].name}`);
    }
    expect(await installNotes([])).not.toContain('rolebinding');
  });
});

/** NOTES.txt as `helm install` prints it: Helm 4's client-only dry-run needs no cluster. */
async function installNotes(values: readonly string[]): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'confighash-notes-'));
  try {
    const args = ['install', 'confighash', CHART, '--dry-run=client', '--namespace', NAMESPACE];
    for (const value of values) args.push('--set', value);
    const out = await runHelm(helm![4], args, {
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
      KUBECONFIG: join(home, 'no-kubeconfig'),
    });
    const notes = out.split('\nNOTES:\n')[1];
    if (notes === undefined) throw new Error(`no NOTES in helm install --dry-run:\n${out}`);
    return notes;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

describe.skipIf(!helm)('the follower’s rights and fence go together (Helm 4)', () => {
  const kinds = ['kinds.argoRollouts=true', 'kinds.openKruise=true'];
  const KIND_GROUPS = ['argoproj.io', 'apps.kruise.io'];

  it('with the kinds and without follow mode, renders no right of the follower on them, nor any binding of it', async () => {
    const objects = await template(4, kinds);
    const rules = objects
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .flatMap((o) => o.rules as Obj[]);
    expect(
      rules.filter((rule) => rule.apiGroups.some((g: string) => KIND_GROUPS.includes(g))),
    ).toEqual([]);
    const subjects = objects
      .filter((o) => /RoleBinding$/.test(o.kind))
      .flatMap((o) => o.subjects as Obj[]);
    expect(subjects.map((s) => s.name)).not.toContain('confighash-follow');
  });

  it('with the kinds and follow mode, puts their rules in the follower’s ClusterRole, which its fence covers', async () => {
    const objects = await template(4, ['follow.enabled=true', ...kinds]);
    expect(find(objects, 'ClusterRole', 'confighash-follow').rules).toEqual(
      expect.arrayContaining([
        {
          apiGroups: ['argoproj.io'],
          resources: ['rollouts'],
          verbs: ['get', 'list', 'watch', 'patch'],
        },
        {
          apiGroups: ['apps.kruise.io'],
          resources: ['clonesets', 'statefulsets'],
          verbs: ['get', 'list', 'watch', 'patch'],
        },
      ]),
    );
    expect(
      find(objects, 'ValidatingAdmissionPolicyBinding', 'confighash-follow-fence'),
    ).toBeDefined();
  });

  it('fences exactly the namespaces the follower’s args and environment exclude', async () => {
    const objects = await template(4, ['follow.enabled=true'], 'ops', {
      'webhook.excludedNamespaces': ['legacy'],
      'follow.extraArgs': ['--excluded-namespace=batch', '--excluded-namespace', 'sandbox'],
      extraEnv: [{ name: 'CONFIGHASH_EXCLUDED_NAMESPACES', value: 'lab, scratch' }],
    });
    const fenced = fenceExcludedNamespaces(objects);
    expect(fenced).toEqual(['kube-system', 'ops', 'legacy', 'batch', 'sandbox', 'lab', 'scratch']);
    const follow = find(objects, 'Deployment', 'confighash-follow').spec.template.spec
      .containers[0];
    expect(fenced).toEqual([
      'kube-system',
      'ops',
      ...excludedByArgs(follow.args),
      ...(follow.env as Obj[])
        .filter((e) => e.name === 'CONFIGHASH_EXCLUDED_NAMESPACES')
        .flatMap((e) => (e.value as string).split(',').map((n) => n.trim())),
    ]);
  });
});

/** The fence's excludedNamespaces variable, as a list. */
function fenceExcludedNamespaces(objects: Obj[]): string[] {
  const policy = find(objects, 'ValidatingAdmissionPolicy', 'confighash-follow-fence');
  const variable = (policy.spec.variables as Obj[]).find((v) => v.name === 'excludedNamespaces');
  return JSON.parse(variable!.expression);
}

/** Every `--excluded-namespace=NS` and `--excluded-namespace NS` of a container's args. */
function excludedByArgs(args: readonly string[]): string[] {
  return args.flatMap((arg, i) =>
    arg.startsWith('--excluded-namespace=')
      ? [arg.slice('--excluded-namespace='.length)]
      : args[i - 1] === '--excluded-namespace'
        ? [arg]
        : [],
  );
}
