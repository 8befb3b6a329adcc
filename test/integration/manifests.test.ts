// The Kustomize overlays as rendered by `kubectl kustomize` (what `kubectl apply
// -k` sends): the MutatingWebhookConfiguration exactly as docs/design.md §7 in every
// overlay, names that agree across objects and with the CLI's flags, and the
// cert-manager overlay's wiring — which cannot be applied here, since the local
// control plane has no cert-manager CRDs (test/e2e/install.test.ts applies the
// rest of it, and the default overlay, to a real apiserver).

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { CERT_KEYS } from '../../src/certs/renewal.js';
import {
  commandHelp,
  optionEnvironmentVariables,
  parseFollowCommandConfig,
  parseServeConfig,
} from '../../src/cli/index.js';
import { FIELD_MANAGER, REPORTING_CONTROLLER } from '../../src/kube/client.js';
import {
  ADOPTED_HASH,
  ALWAYS_EXCLUDED,
  HASH,
  HASHED_VERSIONS,
  SOURCES,
} from '../../src/workload/annotations.js';
import { FANOUT_STATE } from '../../src/workload/fanout-record.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { ALLOCATOR_VARIABLES } from '../support/allocator.js';
import { renderKustomization } from '../support/kustomize.js';

const MANIFESTS = join(REPO_ROOT, 'manifests');
const OVERLAYS = ['default', 'cert-manager'] as const;
/** Follow mode adds list/watch on purpose (components/follow); it is checked where it differs. */
const ALL_OVERLAYS = [...OVERLAYS, 'follow'] as const;
type Overlay = (typeof ALL_OVERLAYS)[number];
/** The ValidatingAdmissionPolicy and its binding of self-managed mode. */
const FENCE = 'confighash-webhook-ca-fence';

// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, checked field by field below.
type Obj = Record<string, any>;

const rendered = {} as Record<Overlay, Obj[]>;

beforeAll(async () => {
  for (const overlay of ALL_OVERLAYS) {
    const { stdout } = await promisify(execFile)('kubectl', [
      'kustomize',
      `${MANIFESTS}/overlays/${overlay}`,
    ]);
    rendered[overlay] = loadAll(stdout) as Obj[];
  }
});

const find = (objects: Obj[], kind: string, name?: string): Obj => {
  const found = objects.find((o) => o.kind === kind && (!name || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''}`);
  return found;
};
const container = (objects: Obj[], name = 'confighash') =>
  find(objects, 'Deployment', name).spec.template.spec.containers[0];
const env = (objects: Obj[], name = 'confighash'): Record<string, string | undefined> =>
  Object.fromEntries(container(objects, name).env.map((e: Obj) => [e.name, e.value]));

describe.each(OVERLAYS)('overlay %s', (overlay) => {
  it('registers the webhook exactly as docs/design.md §7', () => {
    const configuration = find(rendered[overlay], 'MutatingWebhookConfiguration', 'confighash');
    expect(configuration.webhooks).toHaveLength(1);
    const { clientConfig, ...webhook } = configuration.webhooks[0];
    expect(webhook).toEqual({
      name: 'hash.confighash.dev',
      admissionReviewVersions: ['v1'],
      rules: [
        {
          apiGroups: ['apps'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['deployments', 'statefulsets', 'daemonsets'],
          scope: 'Namespaced',
        },
      ],
      namespaceSelector: {
        matchExpressions: [
          { key: 'confighash.dev/enabled', operator: 'In', values: ['true', 'follow'] },
          {
            key: 'kubernetes.io/metadata.name',
            operator: 'NotIn',
            values: ['kube-system', 'confighash-system'],
          },
        ],
      },
      failurePolicy: 'Ignore',
      sideEffects: 'NoneOnDryRun',
      timeoutSeconds: 5,
      reinvocationPolicy: 'IfNeeded',
      matchPolicy: 'Equivalent',
    });
    // The Service it calls is the one rendered, on the port that reaches the container.
    const service = find(rendered[overlay], 'Service', clientConfig.service.name);
    expect(clientConfig.service).toEqual({
      name: 'confighash',
      namespace: 'confighash-system',
      path: '/mutate',
      port: 443,
    });
    expect(service.metadata.namespace).toBe('confighash-system');
    expect(service.spec.ports).toEqual([
      { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' },
    ]);
    expect(container(rendered[overlay]).ports).toEqual([
      { name: 'https', containerPort: 8443, protocol: 'TCP' },
    ]);
  });

  it("holds each review to the registration's timeoutSeconds (docs/design.md §4, Deadline)", () => {
    const { timeoutSeconds } = find(rendered[overlay], 'MutatingWebhookConfiguration').webhooks[0];
    expect(env(rendered[overlay]).CONFIGHASH_WEBHOOK_TIMEOUT).toBe(String(timeoutSeconds));
  });

  it('runs two hardened replicas whose grace period covers preStop plus the shutdown timeout', () => {
    const objects = rendered[overlay];
    const deployment = find(objects, 'Deployment', 'confighash');
    const pod = deployment.spec.template.spec;
    expect(deployment.spec.replicas).toBe(2);
    expect(pod.serviceAccountName).toBe('confighash');
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const app = container(objects);
    expect(app.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(app.resources.requests).toBeDefined();
    expect(app.resources.limits).toBeDefined();
    const preStop = app.lifecycle.preStop.sleep.seconds;
    const shutdown = Number(env(objects).CONFIGHASH_SHUTDOWN_TIMEOUT);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + shutdown);
    // Writable only where the runtime files go, and that is in memory.
    const runtime = app.volumeMounts.find((m: Obj) => m.name === 'runtime');
    expect(runtime.mountPath).toBe(env(objects).CONFIGHASH_RUNTIME_DIR);
    expect(pod.volumes.find((v: Obj) => v.name === 'runtime').emptyDir.medium).toBe('Memory');
    const pdb = find(objects, 'PodDisruptionBudget', 'confighash');
    expect(pdb.spec.selector).toEqual(deployment.spec.selector);
  });

  it('sets only environment variables that `confighash serve --help` documents, and glibc’s allocator settings', () => {
    const help = commandHelp('serve');
    const names = Object.keys(env(rendered[overlay]));
    expect(names.filter((name) => ALLOCATOR_VARIABLES.includes(name))).toEqual(ALLOCATOR_VARIABLES);
    for (const name of names.filter((name) => !ALLOCATOR_VARIABLES.includes(name)))
      expect(help).toContain(`env ${name}`);
  });

  it('grants admission `get` on ConfigMaps and Secrets and no other verb on them cluster-wide', () => {
    const objects = rendered[overlay];
    const reader = find(objects, 'ClusterRole', 'confighash-config-reader');
    expect(reader.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get'] },
    ]);
    const binding = find(objects, 'ClusterRoleBinding', 'confighash-config-reader');
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'confighash', namespace: 'confighash-system' },
    ]);
    // The namespace check's, and nothing else, may list and watch (docs/design.md §4, §7).
    expect(find(objects, 'ClusterRole', 'confighash-namespace-reader').rules).toEqual([
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
    ]);
    expect(find(objects, 'ClusterRoleBinding', 'confighash-namespace-reader').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'confighash', namespace: 'confighash-system' },
    ]);
    for (const role of objects.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')) {
      if (role.metadata.name === 'confighash-namespace-reader') continue;
      for (const rule of role.rules) {
        expect(rule.verbs).not.toContain('list');
        expect(rule.verbs).not.toContain('watch');
        expect(rule.verbs).not.toContain('*');
        expect(rule.resources).not.toContain('*');
      }
    }
  });
});

describe.each(ALL_OVERLAYS)('overlay %s and Service links', (overlay) => {
  // The kubelet links every Service of the namespace into every pod's environment
  // (pkg/kubelet/envvars): NAME_SERVICE_HOST, NAME_SERVICE_PORT[_PORTNAME], NAME_PORT,
  // NAME_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR], with NAME the Service name upper-cased
  // and `-` as `_`. No option may be read from one of them.
  it('reads no option from a variable a Service link of its own Services can set', () => {
    const services = rendered[overlay].filter((o) => o.kind === 'Service');
    expect(services.length).toBeGreaterThan(0);
    const variables = optionEnvironmentVariables();
    expect(variables).toContain('CONFIGHASH_LISTEN_PORT');
    for (const service of services) {
      const prefix = String(service.metadata.name).toUpperCase().replaceAll('-', '_');
      const link = new RegExp(`^${prefix}_(PORT|PORT_.*|SERVICE_.*)$`);
      expect(variables.filter((name) => link.test(name))).toEqual([]);
    }
  });

  it('turns Service links off for its own pods', () => {
    for (const deployment of rendered[overlay].filter((o) => o.kind === 'Deployment')) {
      expect(deployment.spec.template.spec.enableServiceLinks).toBe(false);
    }
  });
});

describe('the default overlay: self-managed certificates', () => {
  it('turns them on, with RBAC naming exactly the Secrets and configuration the defaults use', () => {
    const objects = rendered.default;
    expect(env(objects)).toMatchObject({
      CONFIGHASH_SELF_MANAGED_CERTS: 'true',
      CONFIGHASH_HASH_KEY_SECRET: 'confighash-hash-key',
    });
    expect(commandHelp('serve')).toMatch(/--certs-secret NAME .*\(default confighash-certs\)/);
    expect(commandHelp('serve')).toMatch(/--webhook-configuration NAME .*\(default confighash\)/);
    expect(find(objects, 'Role', 'confighash-certs').rules).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['confighash-certs'],
        verbs: ['get', 'update'],
      },
    ]);
    expect(find(objects, 'ClusterRole', 'confighash-webhook-ca').rules).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['confighash'],
        verbs: ['get', 'patch'],
      },
    ]);
    expect(find(objects, 'Role', 'confighash-hash-key').rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['confighash-hash-key'],
        verbs: ['get'],
      },
    ]);
  });
});

describe('the default overlay: the fence around the caBundle patch (docs/design.md §7)', () => {
  const policy = () => find(rendered.default, 'ValidatingAdmissionPolicy', FENCE);

  it('binds the policy, denying, in the self-managed overlays and in no other', () => {
    for (const overlay of ['default', 'follow'] as const) {
      const binding = find(rendered[overlay], 'ValidatingAdmissionPolicyBinding', FENCE);
      expect(binding.spec).toEqual({ policyName: FENCE, validationActions: ['Deny'] });
      find(rendered[overlay], 'ValidatingAdmissionPolicy', FENCE);
    }
    const certManagerPolicies = rendered['cert-manager'].filter((o) =>
      /AdmissionPolicy/.test(o.kind),
    );
    expect(certManagerPolicies.map((o) => o.metadata.name)).not.toContain(FENCE);
  });

  it('matches only the serving ServiceAccount writing the configuration its RBAC names', () => {
    const objects = rendered.default;
    const { spec } = policy();
    // By construction it can refuse nothing but these requests, so Fail costs no workload write.
    expect(spec.failurePolicy).toBe('Fail');
    const patchable = find(objects, 'ClusterRole', 'confighash-webhook-ca').rules[0];
    expect(spec.matchConstraints.resourceRules).toEqual([
      {
        apiGroups: patchable.apiGroups,
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: patchable.resources,
        resourceNames: patchable.resourceNames,
      },
    ]);
    expect(patchable.resourceNames).toEqual([
      find(objects, 'MutatingWebhookConfiguration').metadata.name,
    ]);
    // The user name the apiserver gives the Deployment's ServiceAccount's token.
    const account = find(objects, 'ServiceAccount');
    expect(find(objects, 'Deployment').spec.template.spec.serviceAccountName).toBe(
      account.metadata.name,
    );
    const user = `system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`;
    expect(spec.matchConditions).toEqual([
      { name: 'serving-service-account', expression: `request.userInfo.username == '${user}'` },
    ]);
    expect(find(objects, 'ClusterRoleBinding', 'confighash-webhook-ca').subjects).toEqual([
      {
        kind: 'ServiceAccount',
        name: account.metadata.name,
        namespace: account.metadata.namespace,
      },
    ]);
  });
});

describe('the cert-manager overlay', () => {
  it('mounts the serving Certificate, whose CA cainjector puts into the caBundle', () => {
    const objects = rendered['cert-manager'];
    const serving = find(objects, 'Certificate', 'confighash-serving');
    const configuration = find(objects, 'MutatingWebhookConfiguration', 'confighash');
    expect(configuration.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
      `${serving.metadata.namespace}/${serving.metadata.name}`,
    );
    expect(configuration.webhooks[0].clientConfig.caBundle).toBeUndefined();
    expect(serving.spec.dnsNames).toContain('confighash.confighash-system.svc');
    // The mounted Secret is the Certificate's, as a whole directory (renewals reach the pod).
    const pod = find(objects, 'Deployment').spec.template.spec;
    const volume = pod.volumes.find((v: Obj) => v.secret?.secretName === serving.spec.secretName);
    const mount = container(objects).volumeMounts.find((m: Obj) => m.name === volume.name);
    expect(mount.subPath).toBeUndefined();
    expect(mount.readOnly).toBe(true);
    expect(env(objects)).toMatchObject({
      CONFIGHASH_TLS_CERT_FILE: `${mount.mountPath}/tls.crt`,
      CONFIGHASH_TLS_KEY_FILE: `${mount.mountPath}/tls.key`,
      CONFIGHASH_HASH_KEY_SECRET: 'confighash-hash-key',
    });
    expect(env(objects).CONFIGHASH_SELF_MANAGED_CERTS).toBeUndefined();
    // Renewed well before expiry, like the self-managed ones.
    expect(hours(serving.spec.renewBefore)).toBeGreaterThanOrEqual(
      hours(serving.spec.duration) / 3,
    );
  });

  it('chains self-signed Issuer → CA Certificate → CA Issuer → serving Certificate', () => {
    const objects = rendered['cert-manager'];
    const serving = find(objects, 'Certificate', 'confighash-serving');
    const caIssuer = find(objects, 'Issuer', serving.spec.issuerRef.name);
    const caCertificate = objects.find(
      (o) => o.kind === 'Certificate' && o.spec.secretName === caIssuer.spec.ca.secretName,
    )!;
    expect(caCertificate.spec.isCA).toBe(true);
    expect(find(objects, 'Issuer', caCertificate.spec.issuerRef.name).spec).toEqual({
      selfSigned: {},
    });
  });

  it('has no self-managed RBAC: cainjector patches the caBundle, the webhook never does', () => {
    const objects = rendered['cert-manager'];
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).not.toContain('ClusterRole/confighash-webhook-ca');
    expect(names).not.toContain('Role/confighash-certs');
    expect(JSON.stringify(objects.filter((o) => /Role/.test(o.kind)))).not.toContain('update');
  });
});

describe('the opt-in kinds components (argo-rollouts, openkruise), together on the follow overlay', () => {
  let objects: Obj[];
  beforeAll(async () => {
    objects = await renderWith('overlays/follow', [
      'components/argo-rollouts',
      'components/openkruise',
    ]);
  });

  it('add webhook rules for their kinds after the apps/v1 one', () => {
    const { rules } = find(objects, 'MutatingWebhookConfiguration', 'confighash').webhooks[0];
    expect(
      rules.map((rule: Obj) => `${rule.apiGroups}/${rule.apiVersions}/${rule.resources}`),
    ).toEqual([
      'apps/v1/deployments,statefulsets,daemonsets',
      'argoproj.io/v1alpha1/rollouts',
      'apps.kruise.io/v1alpha1/clonesets',
      'apps.kruise.io/v1beta1/statefulsets',
    ]);
    for (const rule of rules) expect(rule.operations).toEqual(['CREATE', 'UPDATE']);
  });

  it('pass --kind flags that serve accepts, one per kind the rules name', () => {
    const { args } = container(objects);
    expect(args).toEqual([
      '--kind=argoproj.io/v1alpha1/Rollout',
      '--kind=apps.kruise.io/v1alpha1/CloneSet',
      '--kind=apps.kruise.io/v1beta1/StatefulSet',
    ]);
    const files = ['--tls-cert-file=a', '--tls-key-file=b', '--hash-key-file=c'];
    const parsed = parseServeConfig([...files, ...args], {});
    expect(parsed.ok && parsed.config.kinds.map((k) => `${k.group}/${k.resource}`)).toEqual([
      'apps/deployments',
      'apps/statefulsets',
      'apps/daemonsets',
      'argoproj.io/rollouts',
      'apps.kruise.io/clonesets',
      'apps.kruise.io/statefulsets',
    ]);
  });

  it('pass the same --kind flags to confighash-follow', () => {
    expect(container(objects, 'confighash-follow').args).toEqual(container(objects).args);
  });

  it('grant follow mode’s ServiceAccount get/list/watch/patch on those kinds, in its own ClusterRole, and nothing more', () => {
    const verbs = ['get', 'list', 'watch', 'patch'];
    const rules = find(objects, 'ClusterRole', 'confighash-follow').rules as Obj[];
    expect(rules.slice(-2)).toEqual([
      { apiGroups: ['argoproj.io'], resources: ['rollouts'], verbs },
      { apiGroups: ['apps.kruise.io'], resources: ['clonesets', 'statefulsets'], verbs },
    ]);
    const roles = objects.filter((o) => /Role$/.test(o.kind)).map((o) => o.metadata.name);
    expect(roles.filter((name) => /rollouts|kruise/.test(name))).toEqual([]);
  });

  it('grant nothing to anyone without components/follow: no follower, no rights, no binding', async () => {
    const alone = await renderWith('overlays/default', [
      'components/argo-rollouts',
      'components/openkruise',
    ]);
    const rules = alone.filter((o) => /Role$/.test(o.kind)).flatMap((o) => o.rules as Obj[]);
    expect(
      rules.filter((rule) =>
        rule.apiGroups.some((group: string) => ['argoproj.io', 'apps.kruise.io'].includes(group)),
      ),
    ).toEqual([]);
    expect(rulesOf(alone, FOLLOW_SUBJECT)).toEqual([]);
    expect(alone.filter((o) => o.metadata.name === 'confighash-follow')).toEqual([]);
  });
});

/** `kubectl kustomize` of a kustomization naming one base and these components (paths under manifests/). */
async function renderWith(base: string, components: readonly string[]): Promise<Obj[]> {
  return loadAll(await renderKustomization(base, components)) as Obj[];
}

const SERVING_SUBJECT = {
  kind: 'ServiceAccount',
  name: 'confighash',
  namespace: 'confighash-system',
};
const FOLLOW_SUBJECT = { ...SERVING_SUBJECT, name: 'confighash-follow' };

/** Every rule of every Role and ClusterRole bound to `subject`. */
function rulesOf(objects: Obj[], subject: Obj): Obj[] {
  const bound = objects.filter(
    (o) =>
      /RoleBinding$/.test(o.kind) &&
      o.subjects.some((s: Obj) => s.kind === subject.kind && s.name === subject.name),
  );
  return bound.flatMap(
    (binding) => find(objects, binding.roleRef.kind, binding.roleRef.name).rules,
  );
}

describe('the follow overlay: follow mode in its own pods (docs/design.md §6)', () => {
  const objects = () => rendered.follow;

  it('runs `confighash follow` in a second Deployment: 2 hardened replicas, its own ServiceAccount and PDB', () => {
    const follow = find(objects(), 'Deployment', 'confighash-follow');
    const pod = follow.spec.template.spec;
    expect(follow.spec.replicas).toBe(2);
    expect(pod.serviceAccountName).toBe('confighash-follow');
    expect(pod.enableServiceLinks).toBe(false);
    const app = container(objects(), 'confighash-follow');
    // A heap of its own size: V8 would size it from the machine and let the kernel kill the pod;
    // a small young generation and a V8 that favours memory, or Node 24 sizes the young
    // generation from the memory it sees (docs/design.md §11).
    expect(app.command).toEqual([
      '/nodejs/bin/node',
      '--max-old-space-size=80',
      '--max-semi-space-size=2',
      '--optimize-for-size',
      '/app/dist/main.js',
      'follow',
    ]);
    expect(app.image).toBe(container(objects()).image);
    expect(app.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(app.resources.limits).toBeDefined();
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      expect(app[probe].httpGet.port).toBe(app.ports[0].name);
    }
    expect(app.ports[0].containerPort).toBe(8080);
    expect(find(objects(), 'PodDisruptionBudget', 'confighash-follow').spec.selector).toEqual(
      follow.spec.selector,
    );
  });

  it('keeps the follower’s pods out of the webhook’s Service and selectors', () => {
    const labels = find(objects(), 'Deployment', 'confighash-follow').spec.template.metadata.labels;
    const selects = (selector: Record<string, string>) =>
      Object.entries(selector).every(([key, value]) => labels[key] === value);
    expect(selects(find(objects(), 'Service', 'confighash').spec.selector)).toBe(false);
    expect(selects(find(objects(), 'Deployment', 'confighash').spec.selector.matchLabels)).toBe(
      false,
    );
  });

  it('gives the follower an environment that `confighash follow` reads, every variable of it but glibc’s allocator settings', () => {
    const followEnv = env(objects(), 'confighash-follow');
    const names = Object.keys(followEnv);
    const allocator = names.filter((name) => ALLOCATOR_VARIABLES.includes(name));
    expect(allocator).toEqual(ALLOCATOR_VARIABLES);
    for (const name of names.filter((name) => !allocator.includes(name)))
      expect(commandHelp('follow')).toContain(`env ${name}`);
    // The same hash key as the webhook: the same Secret.
    expect(followEnv.CONFIGHASH_HASH_KEY_SECRET).toBe(env(objects()).CONFIGHASH_HASH_KEY_SECRET);
    const values = { ...followEnv, CONFIGHASH_NAMESPACE: 'confighash-system', POD_NAME: 'pod-0' };
    const parsed = parseFollowCommandConfig(container(objects(), 'confighash-follow').args, values);
    expect(parsed.ok && parsed.config.follow.leaseName).toBe('confighash-follow');
    expect(parsed.ok && parsed.config.follow.identity).toBe('pod-0');
  });

  it('fences exactly the namespaces the follower never follows: kube-system, its own and its --excluded-namespace args', () => {
    const policy = find(objects(), 'ValidatingAdmissionPolicy', 'confighash-follow-fence');
    const variable = (name: string): string =>
      (policy.spec.variables as Obj[]).find((v) => v.name === name)!.expression;
    const deployment = find(objects(), 'Deployment', 'confighash-follow');
    const own = deployment.metadata.namespace;
    const values = {
      ...env(objects(), 'confighash-follow'),
      CONFIGHASH_NAMESPACE: own,
      POD_NAME: 'p',
    };
    const parsed = parseFollowCommandConfig(container(objects(), 'confighash-follow').args, values);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(JSON.parse(variable('excludedNamespaces'))).toEqual([
      ...ALWAYS_EXCLUDED,
      ...parsed.config.excludedNamespaces,
    ]);
    expect(variable('installNamespace')).toBe(`'${own}'`);
  });

  it('fences the follower to the names the code writes: its annotations, field manager, reporting controller and Lease', () => {
    const policy = find(objects(), 'ValidatingAdmissionPolicy', 'confighash-follow-fence');
    const variable = (name: string): string =>
      (policy.spec.variables as Obj[]).find((v) => v.name === name)!.expression;
    const quoted = (value: string) => `'${value}'`;
    const written = variable('writtenKeys');
    expect(written).toBe(
      `{'template': [${[HASH, SOURCES].map(quoted).join(', ')}], ` +
        `'workload': [${[ADOPTED_HASH, HASHED_VERSIONS].map(quoted).join(', ')}], ` +
        `'source': [${quoted(FANOUT_STATE)}]}`,
    );
    expect(variable('fieldManager')).toBe(quoted(FIELD_MANAGER));
    expect(variable('reportingController')).toBe(quoted(REPORTING_CONTROLLER));
    const values = {
      ...env(objects(), 'confighash-follow'),
      CONFIGHASH_NAMESPACE: 'confighash-system',
      POD_NAME: 'p',
    };
    const parsed = parseFollowCommandConfig(container(objects(), 'confighash-follow').args, values);
    expect(parsed.ok && quoted(parsed.config.follow.leaseName)).toBe(variable('leaseName'));
  });

  it('grants list/watch/patch on workloads, and list on pods, to follow mode’s ServiceAccount only; the webhook’s keeps `get`', () => {
    const serving = rulesOf(objects(), SERVING_SUBJECT);
    expect(serving.length).toBeGreaterThan(0);
    for (const rule of serving) {
      for (const verb of ['list', 'watch', 'patch', '*']) {
        if (rule.resourceNames) continue; // patch of its own webhook configuration's caBundle
        // The namespace check's metadata watch (docs/design.md §4): labels, never content.
        if (verb !== 'patch' && isNamespacesOnly(rule)) continue;
        expect(rule.verbs, JSON.stringify(rule)).not.toContain(verb);
      }
    }
    const follow = rulesOf(objects(), FOLLOW_SUBJECT);
    expect(follow).toContainEqual({
      apiGroups: ['apps'],
      resources: ['deployments', 'statefulsets', 'daemonsets'],
      verbs: ['get', 'list', 'watch', 'patch'],
    });
    // patch: the fan-out record alone, which the follower's fence confines it to (design §6).
    expect(follow).toContainEqual({
      apiGroups: [''],
      resources: ['configmaps', 'secrets'],
      verbs: ['get', 'list', 'watch', 'patch'],
    });
    // A canary's pods: list, never watch, get or anything more (docs/security.md).
    expect(follow).toContainEqual({ apiGroups: [''], resources: ['pods'], verbs: ['list'] });
  });
});

function hours(duration: string): number {
  const match = /^(\d+)h$/.exec(duration);
  if (!match) throw new Error(`expected a duration in hours, got ${duration}`);
  return Number(match[1]);
}

function isNamespacesOnly(rule: { apiGroups?: string[]; resources?: string[] }): boolean {
  return (
    JSON.stringify(rule.apiGroups) === JSON.stringify(['']) &&
    JSON.stringify(rule.resources) === JSON.stringify(['namespaces'])
  );
}

describe('every overlay: the part of each object, and Linux nodes', () => {
  it.each(ALL_OVERLAYS)(
    '%s: app.kubernetes.io/component on every object and pod template, never in a selector',
    (overlay) => {
      for (const o of rendered[overlay]) {
        const follower = o.metadata.labels['app.kubernetes.io/name'] === 'confighash-follow';
        expect(
          o.metadata.labels['app.kubernetes.io/component'],
          `${o.kind}/${o.metadata.name}`,
        ).toBe(follower ? 'follow' : 'webhook');
      }
      for (const d of rendered[overlay].filter((o) => o.kind === 'Deployment')) {
        expect(d.spec.template.metadata.labels['app.kubernetes.io/component']).toBeDefined();
        expect(d.spec.selector.matchLabels).not.toHaveProperty('app.kubernetes.io/component');
        expect(d.spec.template.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
      }
      expect(find(rendered[overlay], 'Service').spec.selector).toEqual({
        'app.kubernetes.io/name': 'confighash',
      });
    },
  );
});

describe('the monitoring components (monitoring, monitoring-follow), on the follow overlay', () => {
  let objects: Obj[];
  beforeAll(async () => {
    objects = await renderWith('overlays/follow', [
      'components/monitoring',
      'components/monitoring-follow',
    ]);
  });

  it('scrape the webhook’s Service over verified TLS: its name, and the CA of the certificates Secret', () => {
    const monitor = find(objects, 'ServiceMonitor', 'confighash');
    const service = find(objects, 'Service', 'confighash');
    expect(monitor.spec.selector.matchLabels).toEqual(service.spec.selector);
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [service.metadata.namespace] });
    const [endpoint] = monitor.spec.endpoints;
    expect(endpoint).toMatchObject({ port: service.spec.ports[0].name, scheme: 'https' });
    expect(endpoint.tlsConfig).toEqual({
      serverName: `confighash.${service.metadata.namespace}.svc`,
      ca: { secret: { name: 'confighash-certs', key: CERT_KEYS.caBundle } },
    });
    expect(commandHelp('serve')).toMatch(/--certs-secret NAME .*\(default confighash-certs\)/);
  });

  it('scrape the follower’s pods on the port its container names', () => {
    const monitor = find(objects, 'PodMonitor', 'confighash-follow');
    const follow = find(objects, 'Deployment', 'confighash-follow');
    expect(monitor.spec.selector.matchLabels).toEqual(follow.spec.selector.matchLabels);
    expect(monitor.spec.podMetricsEndpoints[0].port).toBe(
      container(objects, 'confighash-follow').ports[0].name,
    );
  });

  it('alert with a `for` and a runbook in docs/usage.md, the follower’s in a rule of its own', () => {
    const rules = objects.filter((o) => o.kind === 'PrometheusRule');
    expect(rules.map((r) => r.metadata.name)).toEqual(['confighash', 'confighash-follow']);
    const alerts = rules.flatMap((r) => r.spec.groups.flatMap((g: Obj) => g.rules as Obj[]));
    expect(alerts.length).toBe(13);
    for (const alert of alerts) {
      expect(alert.for, alert.alert).toBeDefined();
      expect(alert.annotations.runbook_url).toMatch(/\/docs\/usage\.md#confighash[a-z]+$/);
    }
  });
});

describe('the network-policy component, on the follow overlay', () => {
  let objects: Obj[];
  beforeAll(async () => {
    objects = await renderWith('overlays/follow', ['components/network-policy']);
  });

  it('lets anyone reach the webhook’s port (the apiserver’s address is no selector), Prometheus the follower’s', () => {
    const webhookPolicy = find(objects, 'NetworkPolicy', 'confighash');
    expect(webhookPolicy.spec.podSelector).toEqual(
      find(objects, 'Deployment', 'confighash').spec.selector,
    );
    expect(webhookPolicy.spec.ingress).toEqual([
      { ports: [{ port: container(objects).ports[0].name, protocol: 'TCP' }] },
    ]);
    const followPolicy = find(objects, 'NetworkPolicy', 'confighash-follow');
    expect(followPolicy.spec.podSelector).toEqual(
      find(objects, 'Deployment', 'confighash-follow').spec.selector,
    );
    expect(followPolicy.spec.ingress).toEqual([
      {
        ports: [{ port: container(objects, 'confighash-follow').ports[0].name, protocol: 'TCP' }],
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        ],
      },
    ]);
  });

  it('lets both out to the apiserver’s ports and DNS only', () => {
    for (const name of ['confighash', 'confighash-follow']) {
      const { spec } = find(objects, 'NetworkPolicy', name);
      expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(spec.egress.flatMap((rule: Obj) => rule.ports)).toEqual([
        { port: 443, protocol: 'TCP' },
        { port: 6443, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
        { port: 53, protocol: 'TCP' },
      ]);
      for (const rule of spec.egress) expect(rule).not.toHaveProperty('to');
    }
  });
});
