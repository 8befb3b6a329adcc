// The fence of self-managed mode (docs/design.md §7, §10 "a compromised serving pod rewrites its
// own webhook registration") on a real apiserver. Applied as the default overlay renders
// them: the ValidatingAdmissionPolicy and its binding, the self-managed RBAC, the
// ServiceAccount and the MutatingWebhookConfiguration. Then, as that ServiceAccount
// (`kubectl --as`, and the webhook's own caBundle adapter with a token of it): every widening
// write is refused by the policy, a caBundle patch goes through; the same write by the admin
// goes through, and without the binding so does the ServiceAccount's — so it is the policy,
// not RBAC, that refuses. The configuration calls a Service that does not exist here and
// only opted-in namespaces; nothing in this file writes a workload.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToCluster } from '../../src/kube/connection.js';
import { createCaBundleTarget } from '../../src/kube/webhook-configuration.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { credentialsFromFile } from '../support/credentials.js';
import {
  type SharedControlPlane,
  serviceAccountKubeconfig,
  useSharedControlPlane,
  waitUntil,
  yamlDocuments,
} from '../support/e2e.js';

const NAMESPACE = 'confighash-system';
const ACCOUNT = `system:serviceaccount:${NAMESPACE}:confighash`;
const CONFIGURATION = 'mutatingwebhookconfiguration/confighash';
const FENCE = 'confighash-webhook-ca-fence';
/** What the overlay installs that the fence is about: the rest (Deployment, Service…) is not needed. */
const KINDS = [
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingWebhookConfiguration',
];

// biome-ignore lint/suspicious/noExplicitAny: rendered YAML and kubectl's JSON.
type Obj = Record<string, any>;

let shared: SharedControlPlane;
let overlay: Obj[];

/** A JSON patch of the configuration, by the admin or (`as`) an impersonated user. */
function patch(operations: object[], options: { as?: string; dryRun?: boolean } = {}) {
  return shared.kubectl([
    'patch',
    CONFIGURATION,
    '--type=json',
    `-p=${JSON.stringify(operations)}`,
    ...(options.as ? [`--as=${options.as}`] : []),
    ...(options.dryRun ? ['--dry-run=server'] : []),
  ]);
}

const configuration = async (): Promise<Obj> =>
  JSON.parse(await shared.k(['get', CONFIGURATION, '-o', 'json']));

/**
 * The fence refuses a write once the apiserver's policy informer has it: probed, with a dry run
 * of a write that each of its validations refuses.
 */
function waitForFence(effective: boolean): Promise<void> {
  const widening = [
    { op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Fail' },
    { op: 'add', path: '/metadata/labels/probe', value: 'fence' },
  ];
  return waitUntil(
    async () => {
      const result = await patch(widening, { as: ACCOUNT, dryRun: true });
      return effective ? result.stderr.includes(FENCE) : result.code === 0;
    },
    `the fence to be ${effective ? 'effective' : 'gone'}`,
  );
}

beforeAll(async () => {
  shared = await useSharedControlPlane();
  const { stdout } = await promisify(execFile)('kubectl', [
    'kustomize',
    join(REPO_ROOT, 'manifests/overlays/default'),
  ]);
  overlay = (loadAll(stdout) as Obj[]).filter((o) => KINDS.includes(o.kind));
  await shared.k(['apply', '--server-side', '-f', '-'], yamlDocuments(...overlay));
  await waitForFence(true);
});

afterAll(async () => {
  await shared?.stop();
});

describe('the fence, impersonating the serving ServiceAccount', () => {
  const service = { namespace: NAMESPACE, name: 'confighash', path: '/mutate', port: 443 };
  const widenings: [string, object[]][] = [
    [
      'a namespaceSelector that selects every namespace',
      [{ op: 'replace', path: '/webhooks/0/namespaceSelector', value: {} }],
    ],
    [
      'a rule for Secrets',
      [
        {
          op: 'add',
          path: '/webhooks/0/rules/-',
          value: {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['secrets'],
            scope: '*',
          },
        },
      ],
    ],
    ['failurePolicy Fail', [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Fail' }]],
    [
      'another Service',
      [{ op: 'replace', path: '/webhooks/0/clientConfig/service/name', value: 'elsewhere' }],
    ],
    [
      'a URL instead of the Service',
      [
        { op: 'remove', path: '/webhooks/0/clientConfig/service' },
        { op: 'add', path: '/webhooks/0/clientConfig/url', value: 'https://198.51.100.7/mutate' },
      ],
    ],
    [
      'a webhook added',
      [
        {
          op: 'add',
          path: '/webhooks/-',
          value: {
            name: 'more.confighash.dev',
            admissionReviewVersions: ['v1'],
            clientConfig: { service },
            rules: [
              {
                apiGroups: ['*'],
                apiVersions: ['*'],
                operations: ['*'],
                resources: ['*'],
              },
            ],
            sideEffects: 'None',
            failurePolicy: 'Ignore',
          },
        },
      ],
    ],
    ['the webhook removed', [{ op: 'remove', path: '/webhooks/0' }]],
    [
      'a matchCondition',
      [
        {
          op: 'add',
          path: '/webhooks/0/matchConditions',
          value: [{ name: 'all', expression: 'true' }],
        },
      ],
    ],
    ['another timeout', [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 30 }]],
    [
      'an objectSelector',
      [
        {
          op: 'replace',
          path: '/webhooks/0/objectSelector',
          value: { matchLabels: { picked: 'yes' } },
        },
      ],
    ],
    [
      'an annotation (cert-manager’s cainjector would act on it)',
      [
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { 'cert-manager.io/inject-ca-from-secret': 'kube-system/other-ca' },
        },
      ],
    ],
    [
      'an owner (the garbage collector would act on it)',
      [
        {
          op: 'add',
          path: '/metadata/ownerReferences',
          value: [
            {
              apiVersion: 'v1',
              kind: 'Namespace',
              name: 'default',
              uid: '00000000-0000-0000-0000-000000000000',
            },
          ],
        },
      ],
    ],
  ];

  it.each(widenings)('refuses %s', async (_, operations) => {
    const before = await configuration();
    const result = await patch(operations, { as: ACCOUNT });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`ValidatingAdmissionPolicy '${FENCE}'`);
    expect(result.stderr).toContain('denied request');
    expect((await configuration()).webhooks).toEqual(before.webhooks);
  });

  it('refuses deleting the configuration (RBAC already does) and creating it', async () => {
    const deleted = await shared.kubectl(['delete', CONFIGURATION, `--as=${ACCOUNT}`]);
    expect(deleted.code).not.toBe(0);
    expect(deleted.stderr).toMatch(/forbidden/i);
    const webhookConfiguration = overlay.find((o) => o.kind === 'MutatingWebhookConfiguration')!;
    const created = await shared.kubectl(
      ['create', '--dry-run=server', `--as=${ACCOUNT}`, '-f', '-'],
      JSON.stringify({ ...webhookConfiguration, metadata: { name: 'confighash-second' } }),
    );
    expect(created.code).not.toBe(0);
    expect(created.stderr).toMatch(/forbidden/i);
  });

  it('lets the webhook’s own caBundle adapter set the caBundle, with a token of the ServiceAccount', async () => {
    const kubeconfig = await serviceAccountKubeconfig(
      shared.controlPlane,
      shared.k,
      shared.dir,
      NAMESPACE,
      'confighash',
    );
    const connection = connectToCluster(await credentialsFromFile(kubeconfig));
    try {
      const target = createCaBundleTarget(connection);
      const pem = shared.controlPlane.caCert;
      const before = await configuration();
      expect(await target.ensure('confighash', pem)).toBe('patched');
      const after = await configuration();
      expect(after.webhooks[0].clientConfig.caBundle).toBe(Buffer.from(pem).toString('base64'));
      // The apiserver's own churn (resourceVersion, generation, managedFields) did not trip it.
      expect(after.metadata.generation).toBeGreaterThan(before.metadata.generation);
      expect(await target.ensure('confighash', pem)).toBe('unchanged');
    } finally {
      connection.close();
    }
  });

  it('lets a caBundle patch through by kubectl too, and keeps refusing one that also widens', async () => {
    const caBundle = Buffer.from('not checked by the apiserver').toString('base64');
    const set = { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: caBundle };
    expect((await patch([set], { as: ACCOUNT })).code).toBe(0);
    const widening = { op: 'replace', path: '/webhooks/0/namespaceSelector', value: {} };
    expect((await patch([set, widening], { as: ACCOUNT })).stderr).toContain(FENCE);
  });

  it('refuses nobody else: the admin’s widening write goes through', async () => {
    const widening = [{ op: 'replace', path: '/webhooks/0/namespaceSelector', value: {} }];
    const result = await patch(widening, { dryRun: true });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  // Last: it removes the binding. Without it, RBAC lets the very same write through.
  it('without the binding, the ServiceAccount’s widening write goes through', async () => {
    await shared.k(['delete', 'validatingadmissionpolicybinding', FENCE]);
    await waitForFence(false);
    const widening = [{ op: 'replace', path: '/webhooks/0/namespaceSelector', value: {} }];
    const result = await patch(widening, { as: ACCOUNT });
    expect(result.stderr).toBe('');
    expect((await configuration()).webhooks[0].namespaceSelector).toEqual({});
  });
});
