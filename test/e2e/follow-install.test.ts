// Follow mode as installed (manifests/overlays/follow): the manifests apply
// cleanly, and `confighash follow` running with the token of its own
// ServiceAccount (confighash-follow) rolls an out-of-band change — so the RBAC of
// components/follow is enough — while `kubectl auth can-i` shows it can do nothing
// more than follow mode needs, and that the webhook's ServiceAccount (confighash)
// can neither list, watch nor patch workloads (docs/design.md §10). On the same install, the
// README's quick start runs as written (test/support/readme.ts says which blocks it runs).

import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { confighashNodeArgs } from '../../tools/cluster/confighash-command.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import {
  type LocalFollower,
  registerLocalWebhook,
  startLocalFollower,
} from '../../tools/cluster/webhook.js';
import {
  configMap,
  e2eFile,
  namespace,
  secret,
  serviceAccountKubeconfig,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { quickStartBlocks } from '../support/readme.js';

const OVERLAY = join(REPO_ROOT, 'manifests/overlays/follow');
const FOLLOW_AS = '--as=system:serviceaccount:confighash-system:confighash-follow';
const SERVING_AS = '--as=system:serviceaccount:confighash-system:confighash';

let follower: LocalFollower;
let applyStderr: string;

const file = e2eFile([], {
  async setup({ e2e }) {
    const applied = await e2e.kubectl(['apply', '--server-side', '-k', OVERLAY]);
    expect(applied.code).toBe(0);
    applyStderr = applied.stderr;
    // The manifests register the in-cluster Service, which has no pods here (no kubelet):
    // point the same MutatingWebhookConfiguration back at the local webhook.
    await registerLocalWebhook(e2e.kubectl, e2e.webhook);
    const kubeconfig = await serviceAccountKubeconfig(
      e2e.controlPlane,
      e2e.k,
      e2e.dir,
      'confighash-system',
      'confighash-follow',
    );
    follower = await startLocalFollower({
      dir: e2e.dir,
      kubeconfig,
      webhook: e2e.webhook,
      name: 'sa-follower',
      extraArgs: [
        '--lease-namespace=confighash-system',
        '--follow-debounce=1s',
        '--identity=sa-follower',
      ],
    });
  },
  async teardown() {
    await follower?.stop();
  },
});

/** A follow namespace holding Deployment `web`, its ConfigMap `web-config` and Secret `web-secret`. */
async function applyFollowedApp(ns: string): Promise<void> {
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, 'follow')));
  await file.e2e.k(
    ['apply', '-f', '-'],
    yamlDocuments(
      configMap(ns, 'web-config', { a: '1' }),
      secret(ns, 'web-secret', { b: '2' }),
      workload(ns, 'web'),
    ),
  );
}

it('the follow overlay applies server-side with zero warnings', () => {
  expect(applyStderr).not.toMatch(/warning/i);
});

it('`confighash follow` with its ServiceAccount’s token takes the Lease and rolls an out-of-band change, with an Event', async () => {
  const ns = 'follow-as-installed';
  await applyFollowedApp(ns);
  await waitUntil(
    async () =>
      (await file.api.leaseHolder('confighash-system', 'confighash-follow')) === 'sa-follower',
    'the follower to hold the Lease',
  );
  await file.e2e.k(['replace', '-f', '-'], yamlDocuments(secret(ns, 'web-secret', { b: '3' })));
  await waitUntil(
    async () => (await file.api.revision(ns, 'web')) === 2,
    'the follow-mode rollout',
  );
  const events = await file.e2e.k([
    'get',
    'events.events.k8s.io',
    '-n',
    ns,
    '-o',
    'jsonpath={.items[*].reason}',
  ]);
  expect(events).toContain('ConfigChanged');
  const log = await import('node:fs/promises').then((fs) =>
    fs.readFile(join(file.e2e.dir, 'sa-follower.log'), 'utf8'),
  );
  expect(log).not.toMatch(/forbidden/i);
});

/**
 * A directory holding `kubectl-confighash`: this checkout's CLI, as `npm install -g` of its
 * packed tarball would put it on PATH for kubectl's plugin lookup.
 */
async function cliOnPath(dir: string): Promise<string> {
  const bin = join(dir, 'readme-bin');
  await mkdir(bin, { recursive: true });
  const command = [process.execPath, ...confighashNodeArgs([])]
    .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
    .join(' ');
  await writeFile(join(bin, 'kubectl-confighash'), `#!/bin/sh\nexec ${command} "$@"\n`);
  await chmod(join(bin, 'kubectl-confighash'), 0o755);
  return bin;
}

it('the README quick start, its blocks as written, rolls its Deployment on a ConfigMap change, on the follow overlay installed from this checkout', async () => {
  const blocks = quickStartBlocks(await readFile(join(REPO_ROOT, 'README.md'), 'utf8'));
  const runs = blocks.filter((block) => block.notRun === undefined);
  expect(runs.length).toBeGreaterThanOrEqual(3);
  await waitUntil(
    async () =>
      (await file.api.leaseHolder('confighash-system', 'confighash-follow')) === 'sa-follower',
    'the follower to hold the Lease',
  );
  const env = {
    ...process.env,
    KUBECONFIG: file.e2e.controlPlane.kubeconfig,
    PATH: `${await cliOnPath(file.e2e.dir)}:${process.env.PATH}`,
  };
  let stdout = '';
  for (const block of runs) {
    const ran = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', block.script], {
      cwd: REPO_ROOT,
      env,
      timeout: 90_000,
    }).catch((error: Error & { stderr?: string }) => {
      throw new Error(`README.md:${block.line}: ${error.message}\n${error.stderr ?? ''}`);
    });
    stdout += ran.stdout;
  }
  // `kubectl get rs`: two ReplicaSets, the second made by follow mode's touch.
  expect(stdout.split('\n').filter((line) => line.startsWith('web-'))).toHaveLength(2);
  const replicaSets = await file.api.replicaSets('demo', 'web');
  expect(replicaSets).toHaveLength(2);
  expect(replicaSets[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
  expect(replicaSets[1]!.hash).not.toBe(replicaSets[0]!.hash);
  expect(stdout).toContain('deployment/web in namespace demo');
});

/**
 * Another mutator that changes the workload on every update, as a sidecar injector or a
 * policy engine may: a MutatingAdmissionPolicy (GA in 1.36) stamping an annotation.
 * `exceptFollower`: the remedy docs/follow.md gives, a matchCondition leaving the follower out.
 */
function otherMutator(ns: string, exceptFollower: boolean): string {
  const name = 'fence-other-mutator';
  const conditions = [
    { name: 'in-namespace', expression: `request.namespace == '${ns}'` },
    ...(exceptFollower
      ? [
          {
            name: 'not-the-follower',
            expression: `request.userInfo.username != '${FOLLOW_AS.slice('--as='.length)}'`,
          },
        ]
      : []),
  ];
  return yamlDocuments(
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['v1'],
              operations: ['UPDATE'],
              resources: ['deployments'],
            },
          ],
        },
        matchConditions: conditions,
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: {
              expression:
                'Object{metadata: Object.metadata{annotations: {"example.com/last-write": oldObject.metadata.resourceVersion}}}',
            },
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name },
    },
  );
}

it('a touch that another mutator widens is denied by the fence, said in a TouchDenied Event, and goes through once that mutator leaves the follower out', async () => {
  const ns = 'follow-widened';
  await applyFollowedApp(ns);
  await file.e2e.k(['apply', '--server-side', '-f', '-'], otherMutator(ns, false));
  try {
    // The mutator is effective once an update of the workload carries its annotation.
    await waitUntil(async () => {
      await file.e2e.k([
        'annotate',
        '-n',
        ns,
        'deployment/web',
        `probe=${Date.now()}`,
        '--overwrite',
      ]);
      return (await file.e2e.k(['get', '-n', ns, 'deployment/web', '-o', 'json'])).includes(
        'example.com/last-write',
      );
    }, 'the other mutator to be effective');
    const reasons = () =>
      file.e2e.k([
        'get',
        'events.events.k8s.io',
        '-n',
        ns,
        '--field-selector',
        'regarding.name=web',
        '-o',
        'jsonpath={.items[*].reason}',
      ]);
    await file.e2e.k(['replace', '-f', '-'], yamlDocuments(secret(ns, 'web-secret', { b: '3' })));
    await waitUntil(
      async () => (await reasons()).includes('TouchDenied'),
      'a TouchDenied Event',
      40_000,
    );
    expect(await file.api.revision(ns, 'web')).toBe(1);
    const note = await file.e2e.k([
      'get',
      'events.events.k8s.io',
      '-n',
      ns,
      '--field-selector',
      'reason=TouchDenied',
      '-o',
      'jsonpath={.items[0].note}',
    ]);
    expect(note).toContain("ValidatingAdmissionPolicy 'confighash-follow-fence'");
    // The remedy of docs/follow.md: the other mutator leaves the follower's writes alone.
    await file.e2e.k(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      otherMutator(ns, true),
    );
    await waitUntil(
      async () => (await file.api.revision(ns, 'web')) === 2,
      'the retried touch to roll the workload',
      60_000,
    );
    expect(await reasons()).toContain('ConfigChanged');
  } finally {
    await file.e2e.k(['delete', '-f', '-'], otherMutator(ns, true));
  }
});

describe('what follow mode’s ServiceAccount may do (kubectl auth can-i)', () => {
  it.each([
    ['list secrets in any namespace', ['list', 'secrets', '-n', 'shop'], 'yes'],
    ['watch configmaps in any namespace', ['watch', 'configmaps', '-n', 'shop'], 'yes'],
    ['patch deployments', ['patch', 'deployments.apps', '-n', 'shop'], 'yes'],
    ['patch statefulsets', ['patch', 'statefulsets.apps', '-n', 'shop'], 'yes'],
    ['patch daemonsets', ['patch', 'daemonsets.apps', '-n', 'shop'], 'yes'],
    ['create events', ['create', 'events.events.k8s.io', '-n', 'shop'], 'yes'],
    ['watch namespaces', ['watch', 'namespaces'], 'yes'],
    [
      'renew its Lease',
      ['update', 'leases.coordination.k8s.io/confighash-follow', '-n', 'confighash-system'],
      'yes',
    ],
    [
      'update another Lease',
      ['update', 'leases.coordination.k8s.io/kube-scheduler', '-n', 'confighash-system'],
      'no',
    ],
    [
      'create a Lease elsewhere',
      ['create', 'leases.coordination.k8s.io', '-n', 'kube-system'],
      'no',
    ],
    ['update deployments (only patch)', ['update', 'deployments.apps', '-n', 'shop'], 'no'],
    ['delete deployments', ['delete', 'deployments.apps', '-n', 'shop'], 'no'],
    ['create deployments', ['create', 'deployments.apps', '-n', 'shop'], 'no'],
    ['patch pods', ['patch', 'pods', '-n', 'shop'], 'no'],
    ['update secrets in an app namespace', ['update', 'secrets', '-n', 'shop'], 'no'],
    ['create configmaps', ['create', 'configmaps', '-n', 'shop'], 'no'],
    ['patch namespaces', ['patch', 'namespaces'], 'no'],
    ['delete events', ['delete', 'events.events.k8s.io', '-n', 'shop'], 'no'],
  ])('%s: %s', async (_name, args, expected) => {
    const result = await file.e2e.kubectl(['auth', 'can-i', ...args, FOLLOW_AS]);
    expect(result.stdout.trim()).toBe(expected);
  });
});

// The serving pods answer anyone who reaches the Service: their ServiceAccount reads
// config by name and nothing more, in the follow install too.
describe('what the webhook’s ServiceAccount may do in the follow install (kubectl auth can-i)', () => {
  it.each([
    ['get secrets (its lookups)', ['get', 'secrets', '-n', 'shop'], 'yes'],
    ['get configmaps (its lookups)', ['get', 'configmaps', '-n', 'shop'], 'yes'],
    ['patch deployments', ['patch', 'deployments.apps', '-n', 'shop'], 'no'],
    ['list deployments', ['list', 'deployments.apps', '-n', 'shop'], 'no'],
    ['watch deployments', ['watch', 'deployments.apps', '-n', 'shop'], 'no'],
    ['patch statefulsets', ['patch', 'statefulsets.apps', '-n', 'shop'], 'no'],
    ['patch daemonsets', ['patch', 'daemonsets.apps', '-n', 'shop'], 'no'],
    ['list secrets', ['list', 'secrets', '-n', 'shop'], 'no'],
    ['watch configmaps', ['watch', 'configmaps', '-n', 'shop'], 'no'],
    ['create events', ['create', 'events.events.k8s.io', '-n', 'shop'], 'no'],
    [
      'renew the follow Lease',
      ['update', 'leases.coordination.k8s.io/confighash-follow', '-n', 'confighash-system'],
      'no',
    ],
  ])('%s: %s', async (_name, args, expected) => {
    const result = await file.e2e.kubectl(['auth', 'can-i', ...args, SERVING_AS]);
    expect(result.stdout.trim()).toBe(expected);
  });
});
