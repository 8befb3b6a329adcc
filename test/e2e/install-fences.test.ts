// A taken pod stays small (docs/design.md §7, docs/security.md "No pod can mint a token" and
// "The follower can only touch"), on a real apiserver, in every install variant: the kustomize
// overlays (default, follow, cert-manager) and the chart (defaults, follow.enabled,
// certificates.mode=certManager), each applied as it renders — its ServiceAccounts, RBAC and
// policies — one after another into the same namespace. Impersonating each ServiceAccount
// (`kubectl --as`, dry runs on the server, so admission runs and nothing is stored):
// - neither can create a service-account-token Secret, for itself or the other, nor a Secret
//   of another name, while the hash key (and the serving certificates) may still be made, and
//   an existing hash key is never updated;
// - the follower can touch workloads only in follow namespaces and only the annotations
//   confighash writes, of their ConfigMaps and Secrets write only the fan-out record, never
//   rewrite managedFields, create only its own Events about its namespaces' objects and only its
//   Lease; and it holds rights on the opt-in kinds only where follow mode (its fence) is
//   installed. Every variant is rendered with both opt-in kinds on.
// The last rows remove each binding and see the same writes go through: RBAC alone allows
// them, so it is the policies that refuse. Nothing here runs the webhook or a workload's pods.

import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateAuthority } from '../../src/certs/generate.js';
import { FIELD_MANAGER } from '../../src/kube/client.js';
import {
  ADOPTED_HASH,
  CANARY,
  ENABLED,
  EXCLUDE,
  HASH,
  HASHED_VERSIONS,
  INCLUDE,
  LIVE_RELOAD,
  ROLLOUT_WINDOW,
  SNAPSHOT,
  SNAPSHOT_OF,
  SOURCES,
} from '../../src/workload/annotations.js';
import { FANOUT_STATE } from '../../src/workload/fanout-record.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { runScript } from '../../tools/cluster/scripts.js';
import {
  configMap,
  namespace,
  type SharedControlPlane,
  secret,
  useSharedControlPlane,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { CHART, helmOrSkip, runHelm } from '../support/helm.js';
import { renderKustomization } from '../support/kustomize.js';

// biome-ignore lint/suspicious/noExplicitAny: rendered YAML.
type Obj = Record<string, any>;

const NAMESPACE = 'confighash-system';
const SERVING = `system:serviceaccount:${NAMESPACE}:confighash`;
const FOLLOWER = `system:serviceaccount:${NAMESPACE}:confighash-follow`;
const SECRET_FENCE = 'confighash-secret-fence';
const FOLLOW_FENCE = 'confighash-follow-fence';
/** The opt-in kinds' API groups (components argo-rollouts and openkruise). */
const KIND_GROUPS = ['argoproj.io', 'apps.kruise.io'];
/** What decides who may write what; the rest of an install is not needed to ask. */
const KINDS = [
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
];

const helm = helmOrSkip('install-fences (chart variants)');

interface Variant {
  readonly name: string;
  readonly follow: boolean;
  render(): Promise<string>;
}

/** The overlay with both opt-in kinds' components, as a user adds them after it. */
const KIND_COMPONENTS = ['components/argo-rollouts', 'components/openkruise'];
const kustomize = (overlay: string) => () =>
  renderKustomization(`overlays/${overlay}`, KIND_COMPONENTS);
/** The chart with both opt-in kinds on. */
const chart = (values: string[]) => () =>
  runHelm(helm![3], [
    'template',
    'confighash',
    CHART,
    '-n',
    NAMESPACE,
    ...['kinds.argoRollouts=true', 'kinds.openKruise=true', ...values].flatMap((v) => ['--set', v]),
  ]);

const VARIANTS: Variant[] = [
  { name: 'kustomize default overlay', follow: false, render: kustomize('default') },
  { name: 'kustomize follow overlay', follow: true, render: kustomize('follow') },
  { name: 'kustomize cert-manager overlay', follow: false, render: kustomize('cert-manager') },
  ...(helm
    ? [
        { name: 'chart defaults', follow: false, render: chart([]) },
        { name: 'chart follow.enabled=true', follow: true, render: chart(['follow.enabled=true']) },
        {
          name: 'chart certificates.mode=certManager',
          follow: false,
          render: chart(['certificates.mode=certManager']),
        },
      ]
    : []),
];

let shared: SharedControlPlane;

/**
 * A dry run on the server (admission runs, nothing is stored), as `user`; the follower's
 * patches under its field manager, as it sends them (its fence lets no other manager's entry
 * appear in managedFields).
 */
function dryRun(user: string, args: readonly string[], input?: string) {
  const manager =
    user === FOLLOWER && args[0] === 'patch' ? [`--field-manager=${FIELD_MANAGER}`] : [];
  return shared.kubectl([...args, ...manager, '--dry-run=server', `--as=${user}`], input);
}

function tokenSecret(name: string, account: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: NAMESPACE,
      annotations: { 'kubernetes.io/service-account.name': account },
    },
    type: 'kubernetes.io/service-account-token',
  });
}

function plainSecret(name: string, type = 'Opaque', data: Record<string, string> = { key: 'x' }) {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NAMESPACE },
    type,
    stringData: data,
  });
}

/** What a ServiceAccount tries with the Secrets of the install's namespace. */
const MINTING: [string, string][] = [
  ['a token Secret for the serving ServiceAccount', tokenSecret('minted-serving', 'confighash')],
  ['a token Secret for the follower', tokenSecret('minted-follow', 'confighash-follow')],
  ['an Opaque Secret of another name', plainSecret('anything-else')],
  [
    'the hash key Secret’s name with the token type',
    tokenSecret('confighash-hash-key', 'confighash'),
  ],
];

const FOLLOW_NS = 'fence-follow';
const ADMISSION_NS = 'fence-admission';
const PLAIN_NS = 'fence-plain';

/** The follower's writes, each a dry run: [name, kubectl args, allowed]. */
const TOUCHES: [string, string[], boolean][] = [
  [
    'the empty merge patch `{}`',
    ['patch', '-n', FOLLOW_NS, 'deployment/web', '--type=merge', '-p={}'],
    true,
  ],
  [
    'the hash annotation on the pod template',
    [
      'patch',
      '-n',
      FOLLOW_NS,
      'deployment/web',
      '--type=merge',
      `-p=${JSON.stringify({ spec: { template: { metadata: { annotations: { [HASH]: 'f'.repeat(64) } } } } })}`,
    ],
    true,
  ],
  [
    'a confighash.dev/ annotation on the workload',
    [
      'patch',
      '-n',
      FOLLOW_NS,
      'deployment/web',
      '--type=merge',
      '-p={"metadata":{"annotations":{"confighash.dev/adopted-hash":null}}}',
    ],
    true,
  ],
  [
    'the image',
    [
      'patch',
      '-n',
      FOLLOW_NS,
      'deployment/web',
      '--type=json',
      '-p=[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil.example/x:1"}]',
    ],
    false,
  ],
  [
    'replicas',
    ['patch', '-n', FOLLOW_NS, 'deployment/web', '--type=merge', '-p={"spec":{"replicas":9}}'],
    false,
  ],
  [
    'a pod template label',
    [
      'patch',
      '-n',
      FOLLOW_NS,
      'deployment/web',
      '--type=merge',
      '-p={"spec":{"template":{"metadata":{"labels":{"x":"y"}}}}}',
    ],
    false,
  ],
  [
    'another annotation on the pod template',
    [
      'patch',
      '-n',
      FOLLOW_NS,
      'deployment/web',
      '--type=merge',
      '-p={"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"now"}}}}}',
    ],
    false,
  ],
  [
    'a label on the workload',
    [
      'patch',
      '-n',
      FOLLOW_NS,
      'deployment/web',
      '--type=merge',
      '-p={"metadata":{"labels":{"x":"y"}}}',
    ],
    false,
  ],
  [
    '`{}` in an admission-only namespace',
    ['patch', '-n', ADMISSION_NS, 'deployment/web', '--type=merge', '-p={}'],
    false,
  ],
  [
    '`{}` in a namespace not opted in',
    ['patch', '-n', PLAIN_NS, 'deployment/web', '--type=merge', '-p={}'],
    false,
  ],
  [
    '`{}` of a kube-system DaemonSet',
    ['patch', '-n', 'kube-system', 'daemonset/fence-probe', '--type=merge', '-p={}'],
    false,
  ],
  [
    'the image of a kube-system DaemonSet',
    [
      'patch',
      '-n',
      'kube-system',
      'daemonset/fence-probe',
      '--type=json',
      '-p=[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"evil.example/x:1"}]',
    ],
    false,
  ],
];

const mergePatch = (ns: string, object: string, patch: object) => [
  'patch',
  '-n',
  ns,
  object,
  '--type=merge',
  `-p=${JSON.stringify(patch)}`,
];
const onWorkload = (annotations: Record<string, string | null>) => ({ metadata: { annotations } });
const onTemplate = (annotations: Record<string, string | null>) => ({
  spec: { template: { metadata: { annotations } } },
});

/** What confighash writes: the template's hash and sources, the workload's two (design §7). */
const WRITTEN = (seed: string) => ({
  metadata: { annotations: { [ADOPTED_HASH]: seed.repeat(64), [HASHED_VERSIONS]: `v-${seed}` } },
  spec: {
    template: {
      metadata: { annotations: { [HASH]: seed.repeat(64), [SOURCES]: 'configmap/web-config' } },
    },
  },
});

/** The confighash.dev/ keys confighash never writes on a workload: lasting changes, not touches. */
const FOREIGN_KEYS: [string, string][] = [
  [ENABLED, 'false'],
  [EXCLUDE, 'configmap/web-config'],
  [INCLUDE, 'secret/web-secret'],
  [LIVE_RELOAD, 'true'],
  [ROLLOUT_WINDOW, 'Mon 03:00-03:01'],
  [CANARY, 'true'],
  ['confighash.dev/anything', 'x'],
];

/** A Rollout and a CloneSet (their CRDs from tools/crds.sh): the fence reads CRD objects too. */
const CUSTOM_KINDS = [
  ['rollout', 'argoproj.io/v1alpha1', 'Rollout', 'rollouts.argoproj.io'],
  ['cloneset', 'apps.kruise.io/v1alpha1', 'CloneSet', 'clonesets.apps.kruise.io'],
] as const;
const customWorkload = ([name, apiVersion, kind]: (typeof CUSTOM_KINDS)[number]) => {
  const { spec } = workload(FOLLOW_NS, name) as Obj;
  const { revisionHistoryLimit: _, ...rest } = spec;
  return { apiVersion, kind, metadata: { name, namespace: FOLLOW_NS }, spec: rest };
};
const CUSTOM: [string, string[], boolean][] = CUSTOM_KINDS.flatMap(
  ([name, , kind, resource]): [string, string[], boolean][] => [
    [`\`{}\` of a ${kind}`, mergePatch(FOLLOW_NS, `${resource}/${name}`, {}), true],
    [
      `the keys confighash writes on a ${kind}`,
      mergePatch(FOLLOW_NS, `${resource}/${name}`, WRITTEN('c')),
      true,
    ],
    [
      `${ENABLED}: "false" on a ${kind}`,
      mergePatch(FOLLOW_NS, `${resource}/${name}`, onWorkload({ [ENABLED]: 'false' })),
      false,
    ],
    [
      `${LIVE_RELOAD} on a ${kind}’s pod template`,
      mergePatch(FOLLOW_NS, `${resource}/${name}`, onTemplate({ [LIVE_RELOAD]: 'true' })),
      false,
    ],
    [
      `the replicas of a ${kind}`,
      mergePatch(FOLLOW_NS, `${resource}/${name}`, { spec: { replicas: 5 } }),
      false,
    ],
  ],
);

/** The follower's writes of confighash.dev/ keys: only those confighash writes (design §7). */
const KEYS: [string, string[], boolean][] = [
  ...FOREIGN_KEYS.flatMap(([key, value]): [string, string[], boolean][] => [
    [
      `${key}: "${value}" on the workload`,
      mergePatch(FOLLOW_NS, 'deployment/web', onWorkload({ [key]: value })),
      false,
    ],
    [
      `${key}: "${value}" on the pod template`,
      mergePatch(FOLLOW_NS, 'deployment/web', onTemplate({ [key]: value })),
      false,
    ],
  ]),
  [
    `${ENABLED} changed from "true" to "false"`,
    mergePatch(FOLLOW_NS, 'deployment/opted', onWorkload({ [ENABLED]: 'false' })),
    false,
  ],
  [
    `${ENABLED} removed from the workload`,
    mergePatch(FOLLOW_NS, 'deployment/opted', onWorkload({ [ENABLED]: null })),
    false,
  ],
  [
    `${ROLLOUT_WINDOW} removed from the pod template`,
    mergePatch(FOLLOW_NS, 'deployment/opted', onTemplate({ [ROLLOUT_WINDOW]: null })),
    false,
  ],
  [
    'the four keys confighash writes, where kubectl client-side apply wrote them',
    mergePatch(FOLLOW_NS, 'deployment/hashed-csa', WRITTEN('c')),
    true,
  ],
  [
    'the four keys confighash writes, where a server-side apply wrote them',
    mergePatch(FOLLOW_NS, 'deployment/hashed-ssa', WRITTEN('c')),
    true,
  ],
];

const event = (ns: string, changes: Obj = {}) =>
  JSON.stringify({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { generateName: 'web-', namespace: ns },
    eventTime: new Date().toISOString().replace('Z', '000Z'),
    reportingController: 'confighash.dev/follow',
    reportingInstance: 'fence-test',
    action: 'Touch',
    reason: 'ConfigChanged',
    type: 'Normal',
    ...changes,
    regarding: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns,
      name: 'web',
      ...changes.regarding,
    },
  });
const lease = (name: string) =>
  JSON.stringify({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: NAMESPACE },
    spec: { holderIdentity: 'fence-test' },
  });

/** What the follower creates: its own Events about its namespaces' objects, its Lease. */
const CREATES: [string, string, boolean][] = [
  ['an Event of confighash.dev/follow about a workload of its namespace', event(FOLLOW_NS), true],
  [
    'an Event about a ConfigMap of its namespace',
    event(FOLLOW_NS, { regarding: { apiVersion: '/v1', kind: 'ConfigMap', name: 'shared' } }),
    true,
  ],
  [
    'an Event about a kube-system object, in a follow namespace',
    event(FOLLOW_NS, {
      regarding: { kind: 'DaemonSet', namespace: 'kube-system', name: 'fence-probe' },
    }),
    false,
  ],
  [
    'an Event about a kube-system object, in kube-system',
    event('kube-system', { regarding: { kind: 'DaemonSet', name: 'fence-probe' } }),
    false,
  ],
  ['an Event in a namespace not opted in', event(PLAIN_NS), false],
  [
    'an Event of another reporting controller',
    event(FOLLOW_NS, { reportingController: 'kubelet' }),
    false,
  ],
  [
    'an Event about a Pod',
    event(FOLLOW_NS, { regarding: { apiVersion: 'v1', kind: 'Pod', name: 'web-0' } }),
    false,
  ],
  ['its Lease confighash-follow', lease('confighash-follow'), true],
  ['a Lease of another name', lease('other-leader'), false],
];

/** managedFields as the apiserver keeps them (kubectl hides them unless asked). */
async function managedFieldsOf(object: string): Promise<Obj[]> {
  const args = ['get', '-n', FOLLOW_NS, object, '-o', 'json', '--show-managed-fields'];
  return JSON.parse(await shared.k(args)).metadata.managedFields;
}

const REPLICAS = { 'f:spec': { 'f:replicas': {} } };
const withoutReplicas = (entry: Obj): Obj => {
  const { 'f:replicas': _, ...spec } = entry.fieldsV1['f:spec'];
  return { ...entry, fieldsV1: { ...entry.fieldsV1, 'f:spec': spec } };
};

/**
 * Rewrites of field ownership, each sent with a change the fence otherwise allows (docs/design.md
 * §7): read now, since they carry the entries the apiserver keeps. [name, kubectl args, allowed].
 */
async function managedFieldsRewrites(): Promise<[string, string[], boolean][]> {
  const workload = await managedFieldsOf('deployment/hashed-ssa');
  const source = await managedFieldsOf('configmap/shared');
  const hash = onTemplate({ [HASH]: 'd'.repeat(64) });
  const rewrite = (managedFields: Obj[]) =>
    mergePatch(FOLLOW_NS, 'deployment/hashed-ssa', {
      ...hash,
      metadata: { managedFields },
    });
  const entry = (manager: string) => ({
    manager,
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: workload[0]?.time,
    fieldsType: 'FieldsV1',
    fieldsV1: REPLICAS,
  });
  return [
    ['the hash, with managedFields sent back as read', rewrite(workload), true],
    ['spec.replicas handed to a new manager', rewrite([...workload, entry('hpa')]), false],
    [
      'spec.replicas taken from the applier’s entry',
      rewrite(workload.map((e) => (e.manager === 'kubectl' ? withoutReplicas(e) : e))),
      false,
    ],
    ['spec.replicas claimed by its own entry', rewrite([...workload, entry('confighash')]), false],
    [
      'another manager’s entry dropped',
      rewrite(workload.filter((e) => e.manager !== 'kubectl-label')),
      false,
    ],
    [
      'the fan-out record, with the data’s owner dropped from managedFields',
      mergePatch(FOLLOW_NS, 'configmap/shared', {
        metadata: {
          ...JSON.parse(RECORD).metadata,
          managedFields: source.map((e) => {
            const { 'f:data': _, ...fields } = e.fieldsV1;
            return { ...e, fieldsV1: fields };
          }),
        },
      }),
      false,
    ],
  ];
}

const RECORD = JSON.stringify({
  metadata: { annotations: { [FANOUT_STATE]: '{"change":"0123456789abcdef","phase":"halted"}' } },
});
const patchOf = (ns: string, object: string, patch: string) => [
  'patch',
  '-n',
  ns,
  object,
  '--type=merge',
  `-p=${patch}`,
];

/** The follower's writes of sources: the fan-out record only (docs/design.md §6). */
const RECORDS: [string, string[], boolean][] = [
  ['the fan-out record of a ConfigMap', patchOf(FOLLOW_NS, 'configmap/shared', RECORD), true],
  ['the fan-out record of a Secret', patchOf(FOLLOW_NS, 'secret/shared', RECORD), true],
  [
    'a ConfigMap’s data',
    patchOf(FOLLOW_NS, 'configmap/shared', '{"data":{"LEVEL":"evil"}}'),
    false,
  ],
  [
    'a Secret’s data',
    patchOf(FOLLOW_NS, 'secret/shared', '{"stringData":{"LEVEL":"evil"}}'),
    false,
  ],
  [
    'the approval annotation of a ConfigMap',
    patchOf(
      FOLLOW_NS,
      'configmap/shared',
      '{"metadata":{"annotations":{"confighash.dev/approved-change":"0123456789abcdef"}}}',
    ),
    false,
  ],
  [
    'a ConfigMap’s label',
    patchOf(FOLLOW_NS, 'configmap/shared', '{"metadata":{"labels":{"x":"y"}}}'),
    false,
  ],
  [
    'the fan-out record of a ConfigMap in a namespace not opted in',
    patchOf(PLAIN_NS, 'configmap/shared', RECORD),
    false,
  ],
  [
    'the fan-out record of a Secret in a namespace not opted in',
    patchOf(PLAIN_NS, 'secret/shared', RECORD),
    false,
  ],
  [
    'the fan-out record of a kube-system ConfigMap',
    patchOf('kube-system', 'configmap/fence-probe', RECORD),
    false,
  ],
];

const touch = (what: string) => TOUCHES.find(([name]) => name === what)![1];
const IMAGE_PATCH = touch('the image');
const KUBE_SYSTEM_PATCH = touch('the image of a kube-system DaemonSet');
const MINT_PROBE = tokenSecret('probe', 'confighash');

beforeAll(async () => {
  shared = await useSharedControlPlane();
  const crds = await runScript(join(REPO_ROOT, 'tools/crds.sh'), 'tools/crds.sh');
  for (const crd of ['rollouts.yaml', 'clonesets.yaml']) {
    await shared.k(['apply', '--server-side', '-f', join(crds, crd)]);
  }
  // Polled: `kubectl wait` fails outright on a CRD the apiserver has not given conditions yet.
  await waitUntil(async () => {
    const crds = JSON.parse(await shared.k(['get', 'crd', '-o', 'json'])) as {
      items: { status?: { conditions?: { type: string; status: string }[] } }[];
    };
    return crds.items.every((crd) =>
      (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True'),
    );
  }, 'the CRDs to be established');
  await shared.k(
    ['apply', '-f', '-'],
    yamlDocuments(
      namespace(NAMESPACE),
      namespace(FOLLOW_NS, 'follow'),
      namespace(ADMISSION_NS, 'true'),
      namespace(PLAIN_NS),
      workload(FOLLOW_NS, 'web'),
      opted(),
      hashed('hashed-csa'),
      workload(ADMISSION_NS, 'web'),
      workload(PLAIN_NS, 'web'),
      workload('kube-system', 'fence-probe', { kind: 'DaemonSet' }),
      ...[FOLLOW_NS, PLAIN_NS].flatMap((ns) => [
        configMap(ns, 'shared', { LEVEL: 'info' }),
        secret(ns, 'shared', { LEVEL: 'info' }),
      ]),
      configMap('kube-system', 'fence-probe', { LEVEL: 'info' }),
    ),
  );
  // Two managers: the server-side applier and kubectl label (managedFields rewrites).
  await shared.k(['apply', '--server-side', '-f', '-'], yamlDocuments(hashed('hashed-ssa')));
  await shared.k(['label', '-n', FOLLOW_NS, 'deployment/hashed-ssa', 'team=shop']);
  await shared.k(['apply', '-f', '-'], yamlDocuments(...CUSTOM_KINDS.map(customWorkload)));
});

/** A workload opted in by annotation, with a rollout window on its template. */
function opted(): Obj {
  const object = workload(FOLLOW_NS, 'opted', { annotations: { [ENABLED]: 'true' } }) as Obj;
  object.spec.template.metadata.annotations = { [ROLLOUT_WINDOW]: '* 00:00-23:59' };
  return object;
}

/** A workload carrying the four keys confighash writes, as its creator sent them. */
function hashed(name: string): Obj {
  const object = workload(FOLLOW_NS, name) as Obj;
  const written = WRITTEN('a');
  object.metadata.annotations = written.metadata.annotations;
  object.spec.template.metadata.annotations = written.spec.template.metadata.annotations;
  return object;
}

afterAll(async () => {
  await shared?.stop();
});

describe.each(VARIANTS)('$name', (variant) => {
  let objects: Obj[];
  const accounts = variant.follow ? [SERVING, FOLLOWER] : [SERVING];

  beforeAll(async () => {
    objects = (loadAll(await variant.render()) as Obj[]).filter((o) => KINDS.includes(o?.kind));
    await shared.k(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      yamlDocuments(...objects),
    );
    await waitForFences(accounts, true);
  });

  afterAll(async () => {
    await shared.k(
      ['delete', '--wait', '--ignore-not-found', '-f', '-'],
      yamlDocuments(...objects),
    );
  });

  it('ships the policies of its ServiceAccounts, each bound to Deny', () => {
    const policies = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
    const names = policies.map((o) => o.spec.policyName);
    expect(names).toContain(SECRET_FENCE);
    expect(names.includes(FOLLOW_FENCE)).toBe(variant.follow);
    for (const binding of policies) expect(binding.spec.validationActions).toEqual(['Deny']);
  });

  it(`renders the follower’s rights on the opt-in kinds ${variant.follow ? 'with' : 'only with'} follow mode`, async () => {
    const kindRules = objects
      .filter((o) => /Role$/.test(o.kind))
      .flatMap((o) => o.rules as Obj[])
      .filter((rule) => rule.apiGroups.some((g: string) => KIND_GROUPS.includes(g)));
    expect(kindRules.length > 0).toBe(variant.follow);
    // A SubjectAccessReview, not `kubectl auth can-i`: the kinds' CRDs are not installed here,
    // and can-i cannot name the group of a resource the server does not list.
    for (const [group, resource] of [
      ['argoproj.io', 'rollouts'],
      ['apps.kruise.io', 'clonesets'],
      ['apps.kruise.io', 'statefulsets'],
    ]) {
      const review = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: FOLLOWER,
          groups: [
            'system:serviceaccounts',
            `system:serviceaccounts:${NAMESPACE}`,
            'system:authenticated',
          ],
          resourceAttributes: { group, resource, verb: 'patch', namespace: FOLLOW_NS },
        },
      };
      const answer = JSON.parse(
        await shared.k(['create', '-f', '-', '-o', 'json'], JSON.stringify(review)),
      );
      expect({ resource, allowed: answer.status.allowed }).toEqual({
        resource,
        allowed: variant.follow,
      });
    }
  });

  describe.each(accounts)('as %s', (account) => {
    it.concurrent.each(MINTING)('refuses %s', async (_what, secret) => {
      expectAnswer(await dryRun(account, ['create', '-f', '-'], secret), false, SECRET_FENCE);
    });

    it('may still create the hash key Secret', async () => {
      const hashKey = plainSecret('confighash-hash-key');
      expectAnswer(await dryRun(account, ['create', '-f', '-'], hashKey), true, SECRET_FENCE);
    });
  });

  it('lets the serving ServiceAccount create its certificates Secret, and not the follower', async () => {
    const { cert, key } = await generateCertificateAuthority('install-fences', 1);
    const certs = plainSecret('confighash-certs', 'kubernetes.io/tls', {
      'tls.crt': cert,
      'tls.key': key,
    });
    expectAnswer(await dryRun(SERVING, ['create', '-f', '-'], certs), true, SECRET_FENCE);
    if (!variant.follow) return;
    expectAnswer(await dryRun(FOLLOWER, ['create', '-f', '-'], certs), false, SECRET_FENCE);
  });

  if (variant.follow)
    describe('the follower’s writes', () => {
      it.concurrent.each(titled(TOUCHES))('%s', async (_title, args, allowed) => {
        expectAnswer(await dryRun(FOLLOWER, args), allowed, FOLLOW_FENCE);
      });

      it.concurrent.each(titled(RECORDS))('%s', async (_title, args, allowed) => {
        expectAnswer(await dryRun(FOLLOWER, args), allowed, FOLLOW_FENCE);
      });

      it.concurrent.each(titled(CUSTOM))('%s', async (_title, args, allowed) => {
        expectAnswer(await dryRun(FOLLOWER, args), allowed, FOLLOW_FENCE);
      });

      it.concurrent.each(titled(KEYS))('%s', async (_title, args, allowed) => {
        expectAnswer(await dryRun(FOLLOWER, args), allowed, FOLLOW_FENCE);
      });

      it.concurrent.each(
        CREATES.map(([what, object, allowed]) => [
          `${allowed ? 'allows' : 'denies'} creating ${what}`,
          object,
          allowed,
        ]),
      )('%s', async (_title, object, allowed) => {
        const created = await dryRun(FOLLOWER, ['create', '-f', '-'], object as string);
        expectAnswer(created, allowed as boolean, FOLLOW_FENCE);
      });

      it('denies every rewrite of managedFields, and allows them sent back as they are', async () => {
        const rows = await managedFieldsRewrites();
        const answers = await Promise.all(rows.map(([, args]) => dryRun(FOLLOWER, args)));
        // Every row's answer first, so that a failure names each rewrite that went through.
        expect(rows.map(([what], i) => ({ what, allowed: answers[i]!.code === 0 }))).toEqual(
          rows.map(([what, , allowed]) => ({ what, allowed })),
        );
        for (const [i, [, , allowed]] of rows.entries()) {
          expectAnswer(answers[i]!, allowed, FOLLOW_FENCE);
        }
      });
    });

  // The hash key is only ever created (docs/design.md §7): a taken follower, whose `patch` on
  // Secrets reaches this namespace too, cannot swap the key of a running install. The serving
  // ServiceAccount has no update right at all: RBAC refuses it before any policy.
  if (variant.follow)
    it('denies the follower an update of the hash key Secret; the break row lets it through', async () => {
      const key = plainSecret('confighash-hash-key');
      await shared.k(['create', '-f', '-'], key);
      try {
        const swap = ['patch', 'secret', '-n', NAMESPACE, 'confighash-hash-key', '--type=merge'];
        const args = [...swap, '-p', JSON.stringify({ stringData: { 'hash.key': 'chosen' } })];
        expectAnswer(await dryRun(FOLLOWER, args), false, SECRET_FENCE);
        const bindings = objects.filter(
          (o) => o.kind === 'ValidatingAdmissionPolicyBinding' && o.metadata.name === SECRET_FENCE,
        );
        await shared.k(['delete', '--wait', '-f', '-'], yamlDocuments(...bindings));
        try {
          await waitUntil(
            async () => (await dryRun(FOLLOWER, args)).code === 0,
            'the hash key update to go through without the Secret fence',
          );
        } finally {
          await shared.k(['apply', '--server-side', '-f', '-'], yamlDocuments(...bindings));
          await waitForFences(accounts, true);
        }
      } finally {
        await shared.k(['delete', '-n', NAMESPACE, 'secret', 'confighash-hash-key']);
      }
    });

  // The break-test of this variant: without the bindings, RBAC alone lets the same writes
  // through. Not concurrent, and last: the rows above are dry runs that may run side by side,
  // and the bindings are put back by the next variant's apply.
  it('without its bindings, the same writes go through (RBAC alone allows them)', async () => {
    const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
    await shared.k(['delete', '--wait', '-f', '-'], yamlDocuments(...bindings));
    await waitForFences(accounts, false);
    if (variant.follow) {
      expectAnswer(await dryRun(FOLLOWER, KUBE_SYSTEM_PATCH), true, FOLLOW_FENCE);
      const secretData = RECORDS.find(([what]) => what === 'a Secret’s data')![1];
      expectAnswer(await dryRun(FOLLOWER, secretData), true, FOLLOW_FENCE);
      const optOut = KEYS.find(([what]) => what.startsWith(`${ENABLED}: "false" on the workload`))!;
      expectAnswer(await dryRun(FOLLOWER, optOut[1]), true, FOLLOW_FENCE);
      const handOver = (await managedFieldsRewrites()).find(([what]) =>
        what.startsWith('spec.replicas handed'),
      )!;
      expectAnswer(await dryRun(FOLLOWER, handOver[1]), true, FOLLOW_FENCE);
      for (const [what, object] of CREATES.filter(([, , allowed]) => !allowed)) {
        const created = await dryRun(FOLLOWER, ['create', '-f', '-'], object);
        expect({ what, ...created }).toMatchObject({ what, code: 0 });
      }
    }
    await shared.k(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      yamlDocuments(...bindings),
    );
  });
});

/** Each row titled by what is expected of it: "allows …" or "denies …". */
function titled<T extends readonly [string, readonly string[], boolean]>(rows: readonly T[]) {
  return rows.map(
    ([what, args, allowed]) => [`${allowed ? 'allows' : 'denies'} ${what}`, args, allowed] as const,
  );
}

/** Allowed with nothing said, or refused by that policy (never by RBAC or for another reason). */
function expectAnswer(
  result: { code: number | null; stderr: string },
  allowed: boolean,
  policy: string,
) {
  if (allowed) {
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  } else {
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`ValidatingAdmissionPolicy '${policy}'`);
  }
}

/**
 * The fences refuse once the apiserver's policy informer has them (and let through once their
 * bindings are gone): probed with dry runs of writes they refuse — minting a token, as each
 * ServiceAccount, and the follower's image patch.
 */
function waitForFences(accounts: readonly string[], effective: boolean): Promise<void> {
  const probes = [
    ...accounts.map((user) => ({
      user,
      args: ['create', '-f', '-'],
      input: MINT_PROBE,
      policy: SECRET_FENCE,
    })),
    ...(accounts.includes(FOLLOWER)
      ? [{ user: FOLLOWER, args: IMAGE_PATCH, input: undefined, policy: FOLLOW_FENCE }]
      : []),
  ];
  return waitUntil(
    async () => {
      for (const { user, args, input, policy } of probes) {
        const result = await dryRun(user, args, input);
        if (effective ? !result.stderr.includes(policy) : result.code !== 0) return false;
      }
      return true;
    },
    `the fences to be ${effective ? 'effective' : 'gone'}`,
  );
}

const SNAPSHOT_FENCE = 'confighash-snapshot-fence';
const SNAPSHOT_NAME = 'shared-snap-0123456789abcdef';

/** A snapshot of ConfigMap `source` as the serving pods make it (docs/design.md §13), with changes. */
function snapshotConfigMap(ns: string, change: (object: Obj) => void = () => {}): string {
  const object: Obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: SNAPSHOT_NAME,
      namespace: ns,
      labels: { [SNAPSHOT]: 'true' },
      annotations: { [SNAPSHOT_OF]: 'configmap/shared' },
    },
    immutable: true,
    data: { LEVEL: 'info' },
  };
  change(object);
  return JSON.stringify(object);
}

describe('the snapshot fence (components/snapshots, docs/design.md §13)', () => {
  let objects: Obj[];
  const create = (input: string) => dryRun(SERVING, ['create', '-f', '-'], input);
  const patch = (ns: string, target: string, body: Obj) =>
    dryRun(SERVING, ['patch', '-n', ns, target, '--type=merge', `-p=${JSON.stringify(body)}`]);

  beforeAll(async () => {
    const rendered = await renderKustomization('overlays/default', ['components/snapshots']);
    objects = (loadAll(rendered) as Obj[]).filter((o) => KINDS.includes(o?.kind));
    await shared.k(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      yamlDocuments(...objects),
    );
    // A snapshot made earlier, to update and delete; the admin is not fenced.
    await shared.k(['create', '-f', '-'], snapshotConfigMap(ADMISSION_NS));
    await waitUntil(
      async () => (await create(snapshotConfigMap(PLAIN_NS))).stderr.includes(SNAPSHOT_FENCE),
      'the snapshot fence to be effective',
    );
  });

  afterAll(async () => {
    await shared.k([
      'delete',
      '-n',
      ADMISSION_NS,
      'configmap',
      SNAPSHOT_NAME,
      '--ignore-not-found',
    ]);
    await shared.k(
      ['delete', '--wait', '--ignore-not-found', '-f', '-'],
      yamlDocuments(...objects),
    );
  });

  const CREATES: [string, () => string, boolean][] = [
    [
      'a snapshot, in a namespace opted in',
      () =>
        snapshotConfigMap(ADMISSION_NS, (o) => {
          o.metadata.name = 'shared-snap-fedcba9876543210';
        }),
      true,
    ],
    ['a snapshot, in a namespace not opted in', () => snapshotConfigMap(PLAIN_NS), false],
    ['a snapshot in kube-system', () => snapshotConfigMap('kube-system'), false],
    [
      'a snapshot that is not immutable',
      () =>
        snapshotConfigMap(FOLLOW_NS, (o) => {
          o.immutable = false;
        }),
      false,
    ],
    [
      'a snapshot named for another source',
      () =>
        snapshotConfigMap(FOLLOW_NS, (o) => {
          o.metadata.annotations[SNAPSHOT_OF] = 'configmap/other';
        }),
      false,
    ],
    [
      'a ConfigMap a workload reads by its name',
      () => JSON.stringify(configMap(FOLLOW_NS, 'web-config', { LEVEL: 'x' })),
      false,
    ],
  ];

  it.concurrent.each(CREATES)('create of %s', async (_what, input, allowed) => {
    expectAnswer(await create(input()), allowed, SNAPSHOT_FENCE);
  });

  it('lets a snapshot gain an owner, and nothing else of it change', async () => {
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      uid: '0a6b2a4e-0000-4000-8000-000000000001',
    };
    const target = `configmap/${SNAPSHOT_NAME}`;
    expectAnswer(
      await patch(ADMISSION_NS, target, { metadata: { ownerReferences: [owner] } }),
      true,
      SNAPSHOT_FENCE,
    );
    expectAnswer(
      await patch(ADMISSION_NS, target, { metadata: { labels: { x: 'y' } } }),
      false,
      SNAPSHOT_FENCE,
    );
    expectAnswer(
      await patch(ADMISSION_NS, target, {
        metadata: { annotations: { [SNAPSHOT_OF]: 'configmap/other' } },
      }),
      false,
      SNAPSHOT_FENCE,
    );
  });

  it('lets a snapshot be deleted, and no other ConfigMap, nor another ConfigMap be changed', async () => {
    const remove = (ns: string, name: string) =>
      dryRun(SERVING, ['delete', '-n', ns, 'configmap', name]);
    expectAnswer(await remove(ADMISSION_NS, SNAPSHOT_NAME), true, SNAPSHOT_FENCE);
    expectAnswer(await remove(FOLLOW_NS, 'shared'), false, SNAPSHOT_FENCE);
    expectAnswer(
      await patch(FOLLOW_NS, 'configmap/shared', { data: { LEVEL: 'debug' } }),
      false,
      SNAPSHOT_FENCE,
    );
  });

  it('without its binding, a plain ConfigMap create goes through (RBAC alone allows it)', async () => {
    const binding = objects.find(
      (o) => o.kind === 'ValidatingAdmissionPolicyBinding' && o.spec.policyName === SNAPSHOT_FENCE,
    )!;
    await shared.k(['delete', 'validatingadmissionpolicybinding', binding.metadata.name]);
    const plain = JSON.stringify(configMap(FOLLOW_NS, 'web-config', { LEVEL: 'x' }));
    let last = { code: null as number | null, stderr: '' };
    await waitUntil(async () => {
      last = await create(plain);
      return last.code === 0;
    }, 'the snapshot fence to be gone').catch((error: Error) => {
      throw new Error(`${error.message}: ${last.stderr}`);
    });
    expectAnswer(last, true, SNAPSHOT_FENCE);
  });
});

describe('the sample policy of docs/security.md: who may opt a namespace in', () => {
  const POLICY = 'confighash-opt-in-label';
  const USER = ['--as=alice', '--as-group=system:authenticated'];
  const ADMIN_GROUP = [...USER, '--as-group=confighash-admins'];
  const label = (value: string) =>
    `-p=${JSON.stringify({ metadata: { labels: { 'confighash.dev/enabled': value } } })}`;
  const patchNamespace = (who: string[], ns: string, patch: string) => [
    'patch',
    'namespace',
    ns,
    '--type=merge',
    patch,
    ...who,
  ];
  const OPT_IN = patchNamespace(USER, PLAIN_NS, label('true'));

  beforeAll(async () => {
    await shared.k([
      'apply',
      '--server-side',
      '-f',
      join(REPO_ROOT, 'examples/policies/opt-in-label.yaml'),
    ]);
    // alice may get and patch namespaces at all (RBAC), so what refuses her is the policy.
    await shared.k([
      'create',
      'clusterrole',
      'fence-namespace-patcher',
      '--verb=get,patch',
      '--resource=namespaces',
    ]);
    await shared.k([
      'create',
      'clusterrolebinding',
      'fence-namespace-patcher',
      '--clusterrole=fence-namespace-patcher',
      '--user=alice',
    ]);
    await waitUntil(
      async () => (await shared.kubectl([...OPT_IN, '--dry-run=server'])).stderr.includes(POLICY),
      `${POLICY} to be effective`,
    );
  });

  afterAll(async () => {
    await shared.k(['delete', '-f', join(REPO_ROOT, 'examples/policies/opt-in-label.yaml')]);
    await shared.k(['delete', 'clusterrolebinding,clusterrole', 'fence-namespace-patcher']);
  });

  it.concurrent.each(
    titled([
      ['opting a namespace in', OPT_IN, false],
      [
        'switching a namespace to follow',
        patchNamespace(USER, ADMISSION_NS, label('follow')),
        false,
      ],
      [
        'opting a namespace out',
        patchNamespace(
          USER,
          FOLLOW_NS,
          '-p={"metadata":{"labels":{"confighash.dev/enabled":null}}}',
        ),
        false,
      ],
      [
        'another label',
        patchNamespace(USER, PLAIN_NS, '-p={"metadata":{"labels":{"team":"shop"}}}'),
        true,
      ],
      [
        'opting in, as a member of confighash-admins',
        patchNamespace(ADMIN_GROUP, PLAIN_NS, label('true')),
        true,
      ],
    ]),
  )('%s', async (_title, args, allowed) => {
    expectAnswer(await shared.kubectl([...args, '--dry-run=server']), allowed, POLICY);
  });
});

describe('the sample policy of docs/follow.md: who may approve, halt or resume a fan-out', () => {
  const POLICY = 'confighash-fanout-control';
  const FILE = join(REPO_ROOT, 'examples/policies/fanout-control.yaml');
  const USER = ['--as=bob', '--as-group=system:authenticated'];
  const ADMIN_GROUP = [...USER, '--as-group=confighash-admins'];
  const annotate = (who: string[], object: string, annotations: Record<string, string | null>) => [
    ...patchOf(FOLLOW_NS, object, JSON.stringify({ metadata: { annotations } })),
    ...who,
  ];
  const RESUME = { 'confighash.dev/fanout-control': 'resume 0123456789abcdef' };
  const PROBE = annotate(USER, 'configmap/shared', RESUME);

  beforeAll(async () => {
    await shared.k(['apply', '--server-side', '-f', FILE]);
    // bob may patch ConfigMaps and Secrets at all (RBAC), so what refuses him is the policy.
    await shared.k([
      'create',
      'clusterrole',
      'fence-source-patcher',
      '--verb=get,patch',
      '--resource=configmaps,secrets',
    ]);
    await shared.k([
      'create',
      'clusterrolebinding',
      'fence-source-patcher',
      '--clusterrole=fence-source-patcher',
      '--user=bob',
    ]);
    await waitUntil(
      async () => (await shared.kubectl([...PROBE, '--dry-run=server'])).stderr.includes(POLICY),
      `${POLICY} to be effective`,
    );
  });

  afterAll(async () => {
    await shared.k(['delete', '-f', FILE]);
    await shared.k(['delete', 'clusterrolebinding,clusterrole', 'fence-source-patcher']);
  });

  it.concurrent.each(
    titled([
      ['resuming a fan-out', PROBE, false],
      [
        'halting one, on a Secret',
        annotate(USER, 'secret/shared', {
          'confighash.dev/fanout-control': 'halt 0123456789abcdef',
        }),
        false,
      ],
      [
        'approving a change',
        annotate(USER, 'configmap/shared', {
          'confighash.dev/approved-change': '0123456789abcdef',
        }),
        false,
      ],
      ['another annotation', annotate(USER, 'configmap/shared', { team: 'shop' }), true],
      [
        'a change of data',
        [...patchOf(FOLLOW_NS, 'configmap/shared', '{"data":{"LEVEL":"debug"}}'), ...USER],
        true,
      ],
      [
        'resuming, as a member of confighash-admins',
        annotate(ADMIN_GROUP, 'configmap/shared', RESUME),
        true,
      ],
    ]),
  )('%s', async (_title, args, allowed) => {
    expectAnswer(await shared.kubectl([...args, '--dry-run=server']), allowed, POLICY);
  });
});
