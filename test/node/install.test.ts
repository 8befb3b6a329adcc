// The install a user runs, on a real node: the image built from this source,
// `kubectl apply --server-side -k manifests/overlays/default` unchanged, two
// replicas Ready under Pod Security `restricted`, reached through their Service;
// an app that reads its ConfigMap from the environment sees a new value after
// one apply; Service links do not crash it; uninstalling leaves writes working.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH, SNAPSHOT, SNAPSHOTS } from '../../src/workload/annotations.js';
import { waitForRollouts } from '../../tools/cluster/main.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { namespace, waitUntil, yamlDocuments } from '../support/e2e.js';
import {
  attachNodeFixture,
  containerPid,
  isReady,
  type NodeFixture,
  type Pod,
  patchedOverlay,
  SYSTEM_NAMESPACE,
  waitForReadyWebhookPods,
  webhookCounters,
} from '../support/node.js';

let fixture: NodeFixture;

beforeAll(async () => {
  fixture = await attachNodeFixture();
  await fixture.install('default');
});

afterAll(async () => {
  await fixture?.stop();
});

/** examples/greeter: an app that prints the ConfigMap key it gets by env, then sleeps. */
async function greeter(greeting: string): Promise<string> {
  const app = await readFile(join(REPO_ROOT, 'examples/greeter/app.yaml'), 'utf8');
  if (!app.includes('GREETING: hello')) throw new Error('examples/greeter/app.yaml changed');
  return app.replace('GREETING: hello', `GREETING: ${greeting}`);
}

/** The greeter, annotated for snapshots, printing its greeting from env and from a mounted file. */
function snapshotGreeter(kind: SnapshotKind, greeting: string): string {
  const config = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'greeter-config' },
    data: { GREETING: greeting },
  };
  const deployment = {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name: 'greeter', annotations: { [SNAPSHOT]: 'true' } },
    spec: {
      ...(kind === 'DaemonSet' ? {} : { replicas: 1 }),
      ...(kind === 'StatefulSet' ? { serviceName: 'greeter' } : {}),
      selector: { matchLabels: { app: 'greeter' } },
      template: {
        metadata: { labels: { app: 'greeter' } },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          volumes: [{ name: 'config', configMap: { name: 'greeter-config' } }],
          containers: [
            {
              name: 'greeter',
              image: 'confighash.local/busybox:1',
              imagePullPolicy: 'Never',
              command: [
                '/bin/sh',
                '-c',
                'echo "greeting=$GREETING file=$(cat /etc/greeter/GREETING)"; exec sleep 3600',
              ],
              env: [
                {
                  name: 'GREETING',
                  valueFrom: { configMapKeyRef: { name: 'greeter-config', key: 'GREETING' } },
                },
              ],
              volumeMounts: [{ name: 'config', mountPath: '/etc/greeter', readOnly: true }],
              securityContext: {
                allowPrivilegeEscalation: false,
                runAsNonRoot: true,
                runAsUser: 65534,
                capabilities: { drop: ['ALL'] },
                seccompProfile: { type: 'RuntimeDefault' },
              },
            },
          ],
        },
      },
    },
  };
  return yamlDocuments(config, deployment);
}

const SNAPSHOT_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;
type SnapshotKind = (typeof SNAPSHOT_KINDS)[number];

/** hello, then bonjour, then `kubectl rollout undo`: the pod prints hello from env and file again. */
async function undoStory(kind: SnapshotKind): Promise<void> {
  const ns = `snapshots-${kind.toLowerCase()}`;
  const target = `${kind.toLowerCase()}/greeter`;
  await fixture.k(['apply', '--server-side', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
  const rolledOut = () => fixture.k(['rollout', 'status', target, '-n', ns, '--timeout=120s']);
  const printing = (greeting: string) =>
    waitUntil(
      async () => {
        const pods = (await appPods(ns, 'greeter')).filter(
          (p) => isReady(p) && !p.metadata.deletionTimestamp,
        );
        const logs = await Promise.all(
          pods.map((p) => fixture.k(['logs', '-n', ns, p.metadata.name])),
        );
        const line = `greeting=${greeting} file=${greeting}`;
        return logs.length === 1 && logs[0]!.includes(line);
      },
      `${kind}'s pod to print ${greeting} from env and file`,
      120_000,
    );
  for (const greeting of ['hello', 'bonjour']) {
    await fixture.k(
      ['apply', '--server-side', '-n', ns, '-f', '-'],
      snapshotGreeter(kind, greeting),
    );
    await rolledOut();
    await printing(greeting);
  }
  await fixture.k(['rollout', 'undo', target, '-n', ns]);
  await rolledOut();
  await printing('hello').catch(async (error: Error) => {
    const state = await fixture.kubectl(['get', 'all,configmap', '-n', ns, '-o', 'yaml']);
    const logs = await fixture.kubectl(['logs', '-n', ns, '-l', 'app=greeter', '--tail=5']);
    throw new Error(`${error.message}\n${logs.stdout}\n${state.stdout}`);
  });
  const live = await fixture.json<{ data: Record<string, string> }>([
    'get',
    'configmap',
    'greeter-config',
    '-n',
    ns,
  ]);
  expect(live.data.GREETING).toBe('bonjour');
}

/**
 * Until the apiserver's reviews reach a replica with snapshots on: the replaced ones keep
 * answering on the connections they hold while they drain (docs/design.md §7), so they are
 * let go at once, and a dry run of an annotated Deployment must say it would make a snapshot.
 */
async function untilSnapshotsServed(): Promise<void> {
  const pods = await fixture.json<{ items: Pod[] }>(['get', 'pods', '-n', SYSTEM_NAMESPACE]);
  const draining = pods.items.filter((pod) => pod.metadata.deletionTimestamp);
  if (draining.length > 0) {
    await fixture.k([
      'delete',
      'pods',
      '-n',
      SYSTEM_NAMESPACE,
      '--grace-period=0',
      '--force',
      ...draining.map((pod) => pod.metadata.name),
    ]);
  }
  const ns = 'snapshots-probe';
  await fixture.k(['apply', '--server-side', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
  let attempt = 0;
  await waitUntil(
    async () => {
      attempt += 1;
      const probe = snapshotGreeter('Deployment', `probe-${attempt}`);
      await fixture.k(['apply', '--server-side', '-n', ns, '-f', '-'], probe);
      const written = await fixture.json<{
        spec: { template: { metadata: { annotations?: Record<string, string> } } };
      }>(['get', 'deployment', 'greeter', '-n', ns]);
      return written.spec.template.metadata.annotations?.[SNAPSHOTS] !== undefined;
    },
    'a replica with snapshots on to answer',
    120_000,
  );
}

async function appPods(ns: string, app: string): Promise<Pod[]> {
  const list = await fixture.json<{ items: Pod[] }>(['get', 'pods', '-n', ns, '-l', `app=${app}`]);
  return list.items;
}

describe('the default overlay on a real node', () => {
  it('runs two Ready replicas of the built image under Pod Security restricted', async () => {
    const pods = await waitForReadyWebhookPods(fixture);
    expect(pods).toHaveLength(2);
    const labels = (
      await fixture.json<{ metadata: { labels: Record<string, string> } }>([
        'get',
        'namespace',
        SYSTEM_NAMESPACE,
      ])
    ).metadata.labels;
    expect(labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
    // Enforcement is on: a pod that breaks `restricted` is refused in the same namespace.
    const refused = await fixture.kubectl([
      'run',
      'rootful',
      '-n',
      SYSTEM_NAMESPACE,
      '--image=confighash.local/busybox:1',
      '--restart=Never',
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('violates PodSecurity "restricted:latest"');
  });

  it('creates its certificates and hash key, and registers its CA', async () => {
    const secrets = await fixture.json<{ items: { metadata: { name: string } }[] }>([
      'get',
      'secrets',
      '-n',
      SYSTEM_NAMESPACE,
    ]);
    const names = secrets.items.map((s) => s.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['confighash-certs', 'confighash-hash-key']));
    const configuration = await fixture.json<{
      webhooks: { clientConfig: { caBundle?: string; service?: { name: string } } }[];
    }>(['get', 'mutatingwebhookconfiguration', 'confighash']);
    const ca = Buffer.from(configuration.webhooks[0]!.clientConfig.caBundle ?? '', 'base64');
    expect(ca.toString()).toContain('BEGIN CERTIFICATE');
    expect(configuration.webhooks[0]!.clientConfig.service?.name).toBe('confighash');
  });

  it('hashes a workload through its Service, and the app sees a new value after one apply', async () => {
    const ns = 'greeter';
    await fixture.k(['apply', '--server-side', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
    const before = await webhookCounters(fixture);
    await fixture.k(['apply', '--server-side', '-n', ns, '-f', '-'], await greeter('hello'));
    const first = await fixture.json<{
      spec: { template: { metadata: { annotations?: Record<string, string> } } };
    }>(['get', 'deployment', 'greeter', '-n', ns]);
    expect(first.spec.template.metadata.annotations?.[HASH]).toMatch(/^[0-9a-f]{64}$/);
    // The apiserver called confighash for it, and nothing failed.
    const after = await webhookCounters(fixture);
    expect(after.requests).toBeGreaterThan(before.requests);
    expect(after.errors - before.errors).toBe(0);
    await fixture.k(['rollout', 'status', 'deployment/greeter', '-n', ns, '--timeout=120s']);
    const oldPods = (await appPods(ns, 'greeter')).map((p) => p.metadata.name);
    for (const pod of oldPods) {
      expect(await fixture.k(['logs', '-n', ns, pod])).toContain('greeting=hello');
    }

    // One server-side apply of the same file with a new value: config and workload together.
    await fixture.k(['apply', '--server-side', '-n', ns, '-f', '-'], await greeter('bonjour'));
    await fixture.k(['rollout', 'status', 'deployment/greeter', '-n', ns, '--timeout=120s']);
    await waitUntil(
      async () => {
        const pods = await appPods(ns, 'greeter');
        return (
          pods.length === 2 && pods.every((p) => !oldPods.includes(p.metadata.name) && isReady(p))
        );
      },
      'the old pods to be gone and two new ones Ready',
      120_000,
    );
    for (const pod of await appPods(ns, 'greeter')) {
      expect(await fixture.k(['logs', '-n', ns, pod.metadata.name])).toContain('greeting=bonjour');
    }
  });

  it('starts with Service links enabled too (CONFIGHASH_PORT=tcp://… in its environment)', async () => {
    await fixture.k([
      'patch',
      'deployment',
      'confighash',
      '-n',
      SYSTEM_NAMESPACE,
      '--type=merge',
      '-p',
      '{"spec":{"template":{"spec":{"enableServiceLinks":true}}}}',
    ]);
    await fixture.rollout();
    const pods = await waitForReadyWebhookPods(fixture);
    const linked = pods.filter((pod) => pod.spec.enableServiceLinks === true);
    expect(linked).toHaveLength(2);
    // The kubelet did put the link there, and the process started with it.
    const pid = await containerPid(fixture, linked[0]!.status.containerStatuses![0]!.containerID!);
    const environment = await fixture.cluster.node.namespaces.exec('cat', [`/proc/${pid}/environ`]);
    expect(environment.split('\0')).toContainEqual(
      expect.stringMatching(/^CONFIGHASH_PORT=tcp:\/\//),
    );
    expect(linked[0]!.status.containerStatuses![0]!.restartCount).toBe(0);
  });

  it('with snapshots, `kubectl rollout undo` of a Deployment, StatefulSet and DaemonSet starts pods that read the old value from env and from the mounted file (docs/design.md §13)', async () => {
    const overlay = await patchedOverlay(
      'manifests/overlays/default',
      [],
      ['manifests/components/snapshots'],
    );
    // The row before patched enableServiceLinks in as kubectl-patch: this apply takes it back.
    await fixture.k(['apply', '--server-side', '--force-conflicts', '-k', overlay]);
    await waitForRollouts(fixture.kubectl);
    await untilSnapshotsServed();
    await Promise.all(SNAPSHOT_KINDS.map((kind) => undoStory(kind)));
    // What the component adds beside the overlay, which the uninstall below does not name.
    await fixture.k([
      'delete',
      'clusterrolebinding/confighash-snapshots',
      'clusterrole/confighash-snapshots',
      'validatingadmissionpolicybinding/confighash-snapshot-fence',
      'validatingadmissionpolicy/confighash-snapshot-fence',
    ]);
  });

  it('uninstalls without leaving a webhook configuration; writes still work', async () => {
    // The namespace goes once its pods have drained (up to 110 s); writes must not wait for that.
    await fixture.k(['delete', '-k', `${REPO_ROOT}/manifests/overlays/default`, '--wait=false']);
    const left = await fixture.kubectl(['get', 'mutatingwebhookconfigurations', '-o', 'name']);
    expect(left.stdout.trim()).toBe('');
    const ns = 'after-uninstall';
    await fixture.k(['apply', '--server-side', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
    await fixture.k(['apply', '--server-side', '-n', ns, '-f', '-'], await greeter('still here'));
    const deployment = await fixture.json<{
      spec: { template: { metadata: { annotations?: Record<string, string> } } };
    }>(['get', 'deployment', 'greeter', '-n', ns]);
    expect(deployment.spec.template.metadata.annotations?.[HASH]).toBeUndefined();
  });
});
