// Installing confighash (issue 4) on a real kube-apiserver: the manifests as a
// user applies them, the RBAC they grant proven by running the webhook with the
// manifests' own ServiceAccount token, and two replicas with
// --self-managed-certs racing for one CA and one hash key. There is no kubelet:
// the Deployment's pods stay Pending, so the webhook runs here as local
// processes, registered by URL on 127.0.0.1 (docs/design.md §8).

import { createHmac, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import tls from 'node:tls';
import { dump, loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificate } from '../../src/certs/generate.js';
import { confighashNodeArgs } from '../../tools/cluster/confighash-command.js';
import { httpRequest } from '../../tools/cluster/http.js';
import type { Kubectl, KubectlResult } from '../../tools/cluster/kubectl.js';
import { freePort } from '../../tools/cluster/ports.js';
import { type ManagedProcess, startProcess } from '../../tools/cluster/processes.js';
import { REPO_ROOT as REPO } from '../../tools/cluster/repo.js';
import {
  type ClusterAccess,
  configMap,
  namespace,
  type SharedControlPlane,
  secret,
  serviceAccountKubeconfig,
  useSharedControlPlane,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { named } from '../support/named.js';
import { runConfighash } from '../support/process.js';

const NS = 'confighash-system';
const SERVICE_ACCOUNT = `system:serviceaccount:${NS}:confighash`;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

let shared: SharedControlPlane;
let controlPlane: ClusterAccess;
let kubectl: Kubectl;
let k: (args: readonly string[], input?: string) => Promise<string>;
let rendered: string;
let firstApply: KubectlResult;

async function render(dir: string): Promise<string> {
  return k(['kustomize', dir]);
}

beforeAll(async () => {
  shared = await useSharedControlPlane();
  controlPlane = shared.controlPlane;
  kubectl = shared.kubectl;
  k = shared.k;
  rendered = await render(join(REPO, 'manifests/overlays/default'));
  // The command docs/install.md gives.
  firstApply = await kubectl([
    'apply',
    '--server-side',
    '-k',
    join(REPO, 'manifests/overlays/default'),
  ]);
});

afterAll(async () => {
  await shared?.stop();
});

describe('the default overlay (self-managed certificates), applied server-side', () => {
  it('applies with zero warnings, every object, into a namespace enforcing Pod Security restricted', async () => {
    expect(firstApply.stderr).toBe('');
    expect(firstApply.code).toBe(0);
    const objects = loadAll(rendered) as K8sObject[];
    for (const object of objects) {
      expect(firstApply.stdout).toContain(`/${object.metadata.name} serverside-applied`);
    }
    const labels = JSON.parse(await k(['get', 'namespace', NS, '-o', 'json'])).metadata.labels;
    expect(labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
  });

  it('the zero-warnings check can fail: the same Deployment without its securityContext is warned about', async () => {
    const deployment = (loadAll(rendered) as K8sObject[]).find((o) => o.kind === 'Deployment')!;
    const spec = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    const copy = structuredClone(deployment);
    const copySpec = (copy.spec as { template: { spec: typeof spec } }).template.spec;
    delete copySpec.securityContext;
    for (const container of copySpec.containers as Record<string, unknown>[]) {
      delete container.securityContext;
    }
    const result = await kubectl(
      ['apply', '--server-side', '--dry-run=server', '-f', '-'],
      dump(copy),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('would violate PodSecurity "restricted:latest"');
    expect(spec.securityContext).toBeDefined();
  });

  it("the ReplicaSet's two pods pass Pod Security enforcement (and stay Pending: no kubelet)", async () => {
    let pods: { items: { status: { phase: string } }[] } = { items: [] };
    await waitUntil(async () => {
      pods = JSON.parse(
        await k(['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=confighash', '-o', 'json']),
      );
      return pods.items.length === 2;
    }, 'the two confighash pods');
    expect(pods.items.map((pod) => pod.status.phase)).toEqual(['Pending', 'Pending']);
    const events = await k(['get', 'events', '-n', NS, '-o', 'json']);
    expect(events).not.toContain('violates PodSecurity');
  });

  it('the apiserver (1.36) keeps every field as written: preStop sleep, probes, hardening', async () => {
    const deployment = JSON.parse(
      await k(['get', 'deployment', 'confighash', '-n', NS, '-o', 'json']),
    );
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(container.lifecycle).toEqual({ preStop: { sleep: { seconds: 10 } } });
    expect(pod.terminationGracePeriodSeconds).toBe(110);
    expect(pod.enableServiceLinks).toBe(false);
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', scheme: 'HTTPS' });
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', scheme: 'HTTPS' });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.topologySpreadConstraints[0]).toMatchObject({
      topologyKey: 'kubernetes.io/hostname',
      nodeTaintsPolicy: 'Honor',
      matchLabelKeys: ['pod-template-hash'],
    });
    expect(deployment.spec.replicas).toBe(2);
    const pdb = JSON.parse(await k(['get', 'pdb', 'confighash', '-n', NS, '-o', 'json']));
    expect(pdb.spec).toMatchObject({ minAvailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    // And on the pods the ReplicaSet made from it.
    const pods = JSON.parse(
      await k(['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=confighash', '-o', 'json']),
    );
    expect(pods.items[0].spec.containers[0].lifecycle.preStop.sleep.seconds).toBe(10);
  });
});

describe('the cert-manager overlay (cert-manager is not installed here: no CRDs)', () => {
  it('everything but the cert-manager objects applies server-side (dry run) with zero warnings', async () => {
    const objects = loadAll(
      await render(join(REPO, 'manifests/overlays/cert-manager')),
    ) as K8sObject[];
    const certManager = objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/'));
    expect(certManager.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'Certificate/confighash-ca',
      'Certificate/confighash-serving',
      'Issuer/confighash-ca',
      'Issuer/confighash-selfsigned',
    ]);
    const rest = objects.filter((o) => !certManager.includes(o));
    const result = await kubectl(
      ['apply', '--server-side', '--dry-run=server', '-f', '-'],
      yamlDocuments(...rest),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});

describe("the ServiceAccount's permissions (kubectl auth can-i --as)", () => {
  it.each(
    named([
      { name: 'get a Secret anywhere', args: ['get', 'secrets', '-n', 'default'], allowed: true },
      {
        name: 'get a ConfigMap anywhere',
        args: ['get', 'configmaps', '-n', 'default'],
        allowed: true,
      },
      // The namespace check (docs/design.md §4): labels of namespaces, a watch and a live GET.
      { name: 'get a Namespace', args: ['get', 'namespaces/default'], allowed: true },
      { name: 'list Namespaces', args: ['list', 'namespaces'], allowed: true },
      { name: 'watch Namespaces', args: ['watch', 'namespaces'], allowed: true },
      { name: 'patch a Namespace', args: ['patch', 'namespaces/default'], allowed: false },
      { name: 'list Secrets', args: ['list', 'secrets', '-n', 'default'], allowed: false },
      { name: 'list Secrets cluster-wide', args: ['list', 'secrets', '-A'], allowed: false },
      { name: 'watch Secrets', args: ['watch', 'secrets', '-n', 'default'], allowed: false },
      { name: 'list ConfigMaps', args: ['list', 'configmaps', '-n', 'default'], allowed: false },
      { name: 'watch ConfigMaps', args: ['watch', 'configmaps', '-n', 'default'], allowed: false },
      {
        name: 'create a Secret elsewhere',
        args: ['create', 'secrets', '-n', 'default'],
        allowed: false,
      },
      {
        name: 'update a Secret elsewhere',
        args: ['update', 'secrets', '-n', 'default'],
        allowed: false,
      },
      { name: 'patch a ConfigMap', args: ['patch', 'configmaps', '-n', 'default'], allowed: false },
      {
        name: 'create a Secret in its namespace (the first replica creates its two)',
        args: ['create', 'secrets', '-n', NS],
        allowed: true,
      },
      {
        name: 'update the certificates Secret (renewal)',
        args: ['update', 'secrets/confighash-certs', '-n', NS],
        allowed: true,
      },
      {
        name: 'update the hash key Secret (never overwritten)',
        args: ['update', 'secrets/confighash-hash-key', '-n', NS],
        allowed: false,
      },
      {
        name: 'update another Secret in its namespace',
        args: ['update', 'secrets/other', '-n', NS],
        allowed: false,
      },
      {
        name: 'patch the certificates Secret',
        args: ['patch', 'secrets/confighash-certs', '-n', NS],
        allowed: false,
      },
      {
        name: 'delete the certificates Secret',
        args: ['delete', 'secrets/confighash-certs', '-n', NS],
        allowed: false,
      },
      {
        name: 'patch its MutatingWebhookConfiguration (caBundle)',
        args: ['patch', 'mutatingwebhookconfigurations/confighash'],
        allowed: true,
      },
      {
        name: 'get its MutatingWebhookConfiguration',
        args: ['get', 'mutatingwebhookconfigurations/confighash'],
        allowed: true,
      },
      {
        name: 'patch another MutatingWebhookConfiguration',
        args: ['patch', 'mutatingwebhookconfigurations/other'],
        allowed: false,
      },
      {
        name: 'update its MutatingWebhookConfiguration',
        args: ['update', 'mutatingwebhookconfigurations/confighash'],
        allowed: false,
      },
      {
        name: 'delete its MutatingWebhookConfiguration',
        args: ['delete', 'mutatingwebhookconfigurations/confighash'],
        allowed: false,
      },
      {
        name: 'create a MutatingWebhookConfiguration',
        args: ['create', 'mutatingwebhookconfigurations'],
        allowed: false,
      },
      {
        name: 'list MutatingWebhookConfigurations',
        args: ['list', 'mutatingwebhookconfigurations'],
        allowed: false,
      },
      {
        name: 'patch a Deployment',
        args: ['patch', 'deployments', '-n', 'default'],
        allowed: false,
      },
      { name: 'create a Pod', args: ['create', 'pods', '-n', NS], allowed: false },
      { name: 'update its own Role', args: ['update', 'roles', '-n', NS], allowed: false },
      { name: 'anything at all', args: ['*', '*', '-A'], allowed: false },
    ]),
  )('%s', async (_name, row) => {
    const result = await kubectl(['auth', 'can-i', ...row.args, `--as=${SERVICE_ACCOUNT}`]);
    expect(result.stdout.trim()).toBe(row.allowed ? 'yes' : 'no');
  });

  it('the complete list of what it may write: create a Secret in its namespace, update one, patch its webhook configuration', async () => {
    const list = await k(['auth', 'can-i', '--list', '-n', NS, `--as=${SERVICE_ACCOUNT}`]);
    const writes = list
      .split('\n')
      .slice(1)
      .filter((line) => /\b(create|update|patch|delete|deletecollection|\*)\b/.test(line))
      .map((line) => line.trim().replace(/\s+/g, ' '))
      .filter((line) => !/^selfsubject\w+\.authorization\.k8s\.io|^selfsubjectreviews/.test(line));
    expect(writes.sort()).toEqual([
      'mutatingwebhookconfigurations.admissionregistration.k8s.io [] [confighash] [get patch]',
      // `get` on every Secret is the cluster-wide lookup grant, listed with `create` here.
      'secrets [] [] [get create]',
      'secrets [] [confighash-certs] [get update]',
    ]);
  });
});

// --- the webhook itself, as two replicas with the ServiceAccount's token -------

interface Replica {
  readonly name: string;
  readonly port: number;
  readonly process: ManagedProcess;
  readonly pid: number;
}

const DAY = 86_400_000;
const CERT_HOSTS = [
  'confighash',
  'confighash.confighash-system',
  'confighash.confighash-system.svc',
  '127.0.0.1',
];

describe('two replicas with --self-managed-certs, started together, running as the ServiceAccount', () => {
  let dir: string;
  let replicas: Replica[];
  let appNs: string;

  const secretData = async (name: string): Promise<Record<string, Buffer>> => {
    const object = JSON.parse(await k(['get', 'secret', name, '-n', NS, '-o', 'json']));
    return Object.fromEntries(
      Object.entries(object.data as Record<string, string>).map(([key, value]) => [
        key,
        Buffer.from(value, 'base64'),
      ]),
    );
  };
  const logLines = async (replica: Replica): Promise<Record<string, unknown>[]> =>
    (await readFile(replica.process.logFile, 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const countLogs = async (match: (line: Record<string, unknown>) => boolean) =>
    (await Promise.all(replicas.map(logLines))).flat().filter(match).length;
  const pointWebhookAt = (replica: Replica) =>
    k([
      'patch',
      'mutatingwebhookconfiguration',
      'confighash',
      '--type=json',
      '-p',
      JSON.stringify([
        {
          op: 'replace',
          path: '/webhooks/0/clientConfig/url',
          value: `https://127.0.0.1:${replica.port}/mutate`,
        },
      ]),
    ]);
  const templateHash = async (ns: string) =>
    JSON.parse(await k(['get', 'deployment', 'web', '-n', ns, '-o', 'json'])).spec.template.metadata
      .annotations?.['confighash.dev/hash'] as string | undefined;
  const revision = async (ns: string) => {
    await waitUntil(async () => {
      const d = JSON.parse(await k(['get', 'deployment', 'web', '-n', ns, '-o', 'json']));
      return d.status?.observedGeneration === d.metadata.generation;
    }, 'the deployment controller');
    const d = JSON.parse(await k(['get', 'deployment', 'web', '-n', ns, '-o', 'json']));
    return Number(d.metadata.annotations['deployment.kubernetes.io/revision']);
  };
  /** docs/design.md §3 (v2, keyed for the app's namespace) written out for this app, with the key read from the cluster. */
  const expectedHash = (key: Buffer, config: string, password: string) =>
    createHmac(
      'sha256',
      createHmac('sha256', key).update(`confighash/v2 namespace\n${appNs}`).digest(),
    )
      .update(
        'confighash/v2\n' +
          `ConfigMap\nweb-config\npresent\napp.yaml\n${Buffer.byteLength(config)}\n${config}\n` +
          `Secret\nweb-secret\npresent\npassword\n${Buffer.byteLength(password)}\n${password}\n`,
      )
      .digest('hex');
  const app = (config: string, password = 'hunter2-e2e') =>
    yamlDocuments(
      configMap(appNs, 'web-config', { 'app.yaml': config }),
      secret(appNs, 'web-secret', { password }),
      workload(appNs, 'web'),
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'confighash-install-'));
    // A kubeconfig holding nothing but the ServiceAccount's token: the RBAC under test.
    const kubeconfig = await tokenKubeconfig(dir, 'confighash');
    const ports = [await freePort(), await freePort()];
    // The apiserver cannot reach a Service here (no kube-proxy): register by URL,
    // keeping everything else of the applied configuration.
    await k([
      'patch',
      'mutatingwebhookconfiguration',
      'confighash',
      '--type=json',
      '-p',
      JSON.stringify([
        {
          op: 'replace',
          path: '/webhooks/0/clientConfig',
          value: { url: `https://127.0.0.1:${ports[0]}/mutate` },
        },
      ]),
    ]);
    // Started in the same tick: both find no Secret and race to create it.
    replicas = ports.map((port, index) => {
      const name = `replica-${'ab'[index]}`;
      const process = startProcess(
        name,
        globalThis.process.execPath,
        confighashNodeArgs([
          'serve',
          '--self-managed-certs',
          '--host=127.0.0.1',
          `--port=${port}`,
          '--cert-host=127.0.0.1',
          `--runtime-dir=${join(dir, name)}`,
          '--cert-check-interval=1',
          '--tls-reload-interval=0.5',
          '--log-level=debug',
        ]),
        join(dir, `${name}.log`),
        { cwd: REPO, env: { ...globalThis.process.env, KUBECONFIG: kubeconfig } },
      );
      return { name, port, process, pid: process.child.pid! };
    });
    await Promise.all(replicas.map(waitUntilServing));
    // Logs reach their files through a pipe: wait for each one's last start-up line.
    for (const replica of replicas) {
      await waitUntil(
        async () => (await logLines(replica)).some((line) => line.msg === 'ready'),
        `${replica.name}'s start-up log`,
      );
    }
  });

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.process.stop()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('end with one CA and one serving certificate, served by both, created by exactly one', async () => {
    const secrets = await k(['get', 'secrets', '-n', NS, '-o', 'name']);
    expect(secrets.trim().split('\n').sort()).toEqual([
      'secret/confighash-certs',
      'secret/confighash-hash-key',
    ]);
    const data = await secretData('confighash-certs');
    const stored = new X509Certificate(data['tls.crt']!);
    for (const replica of replicas) {
      expect((await peerCertificate(replica.port)).fingerprint256).toBe(stored.fingerprint256);
      expect(await handshakeTrusted(replica.port, data['ca-bundle.crt']!)).toBe(true);
    }
    for (const host of CERT_HOSTS.slice(0, 3)) expect(stored.checkHost(host)).toBe(host);
    expect(stored.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(await countLogs((l) => l.msg === 'certificates secret' && l.result === 'created')).toBe(
      1,
    );
    expect(await countLogs((l) => l.msg === 'hash key created')).toBe(1);
    expect(await countLogs((l) => l.msg === 'hash key loaded')).toBe(1);
    const configuration = JSON.parse(
      await k(['get', 'mutatingwebhookconfiguration', 'confighash', '-o', 'json']),
    );
    expect(configuration.webhooks[0].clientConfig.caBundle).toBe(
      data['ca-bundle.crt']!.toString('base64'),
    );
    expect((await secretData('confighash-hash-key'))['hash.key']).toHaveLength(32);
  });

  it('the apiserver trusts the patched caBundle: admission hashes, and a config change rolls', async () => {
    appNs = 'install-app';
    await k(['apply', '-f', '-'], yamlDocuments(namespace(appNs, 'true')));
    const key = (await secretData('confighash-hash-key'))['hash.key']!;
    await k(['apply', '--server-side', '-f', '-'], app('v: 1'));
    expect(await templateHash(appNs)).toBe(expectedHash(key, 'v: 1', 'hunter2-e2e'));
    expect(await revision(appNs)).toBe(1);
    await k(['apply', '--server-side', '-f', '-'], app('v: 2'));
    expect(await templateHash(appNs)).toBe(expectedHash(key, 'v: 2', 'hunter2-e2e'));
    expect(await revision(appNs)).toBe(2);
  });

  it('the other replica computes the same hash with the same key: no rollout when it takes over', async () => {
    const key = (await secretData('confighash-hash-key'))['hash.key']!;
    await pointWebhookAt(replicas[1]!);
    const reviewsBefore = await reviewsBy(replicas[1]!);
    await k(['patch', 'deployment', 'web', '-n', appNs, '--type=merge', '-p', '{}']);
    await waitUntil(
      async () => (await reviewsBy(replicas[1]!)) > reviewsBefore,
      'replica b to log the review (its log is written through a pipe)',
    );
    expect(await templateHash(appNs)).toBe(expectedHash(key, 'v: 2', 'hunter2-e2e'));
    expect(await revision(appNs)).toBe(2);
    await k(['apply', '--server-side', '-f', '-'], app('v: 2', 'rotated'));
    expect(await templateHash(appNs)).toBe(expectedHash(key, 'v: 2', 'rotated'));
    expect(await revision(appNs)).toBe(3);
  });

  it('renews a serving certificate that is due and both replicas serve the renewal without a restart', async () => {
    const data = await secretData('confighash-certs');
    const original = new X509Certificate(data['tls.crt']!).fingerprint256;
    // Put in a certificate from the same CA with a sixth of its life left.
    const due = await generateServingCertificate(
      { cert: data['ca.crt']!.toString(), key: data['ca.key']!.toString() },
      CERT_HOSTS,
      3,
      new Date(Date.now() - 2.5 * DAY),
    );
    const injected = new X509Certificate(due.cert).fingerprint256;
    const object = JSON.parse(
      await k(['get', 'secret', 'confighash-certs', '-n', NS, '-o', 'json']),
    );
    object.data['tls.crt'] = Buffer.from(due.cert).toString('base64');
    object.data['tls.key'] = Buffer.from(due.key).toString('base64');
    await k(['replace', '-f', '-'], JSON.stringify(object));

    let renewed = '';
    await waitUntil(async () => {
      renewed = new X509Certificate((await secretData('confighash-certs'))['tls.crt']!)
        .fingerprint256;
      if (renewed === original || renewed === injected) return false;
      const served = await Promise.all(replicas.map((r) => peerCertificate(r.port)));
      return served.every((cert) => cert.fingerprint256 === renewed);
    }, 'both replicas serving the renewed certificate');
    const after = await secretData('confighash-certs');
    expect(after['ca.crt']).toEqual(data['ca.crt']);
    expect(after['ca-bundle.crt']).toEqual(data['ca-bundle.crt']);
    expect(new Date(new X509Certificate(after['tls.crt']!).validTo).getTime()).toBeGreaterThan(
      Date.now() + 300 * DAY,
    );
    await waitUntil(
      async () => (await countLogs((l) => l.result === 'renewed')) > 0,
      'the renewal in the logs',
    );
    expect(await countLogs((l) => l.msg === 'certificates secret' && l.result === 'renewed')).toBe(
      1,
    );
    for (const replica of replicas) {
      expect(replica.process.child.exitCode).toBeNull();
      expect(replica.process.child.pid).toBe(replica.pid);
    }
    // Admission still goes through (to replica b, on its renewed certificate).
    const reviewsBefore = await reviewsBy(replicas[1]!);
    await k(['apply', '--server-side', '-f', '-'], app('v: 3', 'rotated'));
    await waitUntil(
      async () => (await reviewsBy(replicas[1]!)) > reviewsBefore,
      'replica b to log the review (its log is written through a pipe)',
    );
    expect(await revision(appNs)).toBe(4);
  });

  it('without those permissions it does not start, and says why in one line', async () => {
    // `default` has no Role: the same start-up, forbidden.
    const kubeconfig = await tokenKubeconfig(dir, 'default');
    const run = runConfighash(
      ['serve', '--self-managed-certs', `--runtime-dir=${join(dir, 'forbidden')}`],
      { KUBECONFIG: kubeconfig },
    );
    expect(await run.exited).toBe(2);
    expect(run.output.stderr).toBe(
      'confighash: self-managed certificates: cannot read Secret confighash-system/confighash-hash-key: ' +
        'HTTP 403: secrets "confighash-hash-key" is forbidden: User "system:serviceaccount:confighash-system:default" ' +
        'cannot get resource "secrets" in API group "" in the namespace "confighash-system"\n',
    );
  });

  it('an upgrade (the manifests applied again) keeps the caBundle the webhook set', async () => {
    const bundle = (await secretData('confighash-certs'))['ca-bundle.crt']!.toString('base64');
    // Back to the manifests' Service reference, as in a real cluster; the caBundle stays.
    await k([
      'patch',
      'mutatingwebhookconfiguration',
      'confighash',
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'remove', path: '/webhooks/0/clientConfig/url' },
        {
          op: 'add',
          path: '/webhooks/0/clientConfig/service',
          value: { name: 'confighash', namespace: NS, path: '/mutate', port: 443 },
        },
      ]),
    ]);
    const again = await kubectl(['apply', '--server-side', '-f', '-'], rendered);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    const configuration = JSON.parse(
      await k([
        'get',
        'mutatingwebhookconfiguration',
        'confighash',
        '-o',
        'json',
        '--show-managed-fields',
      ]),
    );
    expect(configuration.webhooks[0].clientConfig.caBundle).toBe(bundle);
    const owners = (
      configuration.metadata.managedFields as { manager: string; fieldsV1: unknown }[]
    )
      .filter((entry) => JSON.stringify(entry.fieldsV1).includes('f:caBundle'))
      .map((entry) => entry.manager);
    expect(owners).toEqual(['confighash']);
  });
});

describe('the namespaced RBAC variant (components/namespaced-rbac)', () => {
  it('grants get only where a RoleBinding opts a namespace in', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'confighash-namespaced-'));
    try {
      const manifests = relative(dir, join(REPO, 'manifests'));
      await writeFile(
        join(dir, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources:',
          `  - ${manifests}/overlays/default`,
          'components:',
          `  - ${manifests}/components/namespaced-rbac`,
          '',
        ].join('\n'),
      );
      const objects = loadAll(await render(dir)) as K8sObject[];
      const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding');
      // Namespaces are cluster-scoped: the namespace check's binding stays cluster-wide.
      expect(bindings.map((o) => o.metadata.name).sort()).toEqual([
        'confighash-namespace-reader',
        'confighash-webhook-ca',
      ]);
      expect(
        objects.some(
          (o) => o.kind === 'ClusterRole' && o.metadata.name === 'confighash-config-reader',
        ),
      ).toBe(true);

      // The cluster as that variant leaves it, plus the documented per-namespace binding.
      await k(['delete', 'clusterrolebinding', 'confighash-config-reader']);
      for (const ns of ['shop-in', 'shop-out']) await k(['create', 'namespace', ns]);
      await k([
        'create',
        'rolebinding',
        'confighash-config-reader',
        '-n',
        'shop-in',
        '--clusterrole=confighash-config-reader',
        `--serviceaccount=${NS}:confighash`,
      ]);
      const can = async (...args: string[]) =>
        (await kubectl(['auth', 'can-i', ...args, `--as=${SERVICE_ACCOUNT}`])).stdout.trim();
      expect(await can('get', 'secrets', '-n', 'shop-in')).toBe('yes');
      expect(await can('get', 'configmaps', '-n', 'shop-in')).toBe('yes');
      expect(await can('list', 'secrets', '-n', 'shop-in')).toBe('no');
      expect(await can('get', 'secrets', '-n', 'shop-out')).toBe('no');
      // Its own Secrets stay readable through the namespaced Roles.
      expect(await can('get', 'secrets/confighash-certs', '-n', NS)).toBe('yes');
      expect(await can('get', 'secrets/confighash-hash-key', '-n', NS)).toBe('yes');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// --- helpers ----------------------------------------------------------------------

/** A kubeconfig with the control plane's address and CA and a token of ServiceAccount `name`. */
function tokenKubeconfig(dir: string, name: string): Promise<string> {
  return serviceAccountKubeconfig(controlPlane, k, dir, NS, name);
}

async function reviewsBy(replica: Replica): Promise<number> {
  const text = await readFile(replica.process.logFile, 'utf8');
  return text.split('\n').filter((line) => line.includes('"msg":"admission review"')).length;
}

/** Ready over HTTPS (any certificate: which one it serves is what the tests check). */
async function waitUntilServing(replica: Replica): Promise<void> {
  await waitUntil(
    async () => {
      if (replica.process.child.exitCode !== null) {
        const log = await readFile(replica.process.logFile, 'utf8').catch(() => '');
        throw new Error(`${replica.name} exited: ${log.slice(-2000)}`);
      }
      return httpRequest(`https://127.0.0.1:${replica.port}/readyz`, {
        rejectUnauthorized: false,
        timeoutMs: 1000,
      }).then(
        (response) => response.status === 200,
        () => false,
      );
    },
    `${replica.name} to be ready`,
    60_000,
  );
}

function peerCertificate(port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw));
    });
    socket.on('error', reject);
  });
}

function handshakeTrusted(port: number, caBundle: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: caBundle }, () => {
      socket.end();
      resolve(socket.authorized);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('uninstall, as docs/install.md says', () => {
  it('the MutatingWebhookConfiguration first, then everything else; nothing is left', async () => {
    await k(['delete', 'mutatingwebhookconfiguration', 'confighash']);
    const result = await kubectl([
      'delete',
      '--ignore-not-found',
      '-k',
      join(REPO, 'manifests/overlays/default'),
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    await waitUntil(
      async () => (await kubectl(['get', 'namespace', NS])).code !== 0,
      'the namespace to be gone',
      60_000,
    );
    for (const kind of [
      'clusterroles',
      'clusterrolebindings',
      'mutatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
    ]) {
      expect(await k(['get', kind, '-l', 'app.kubernetes.io/name=confighash', '-o', 'name'])).toBe(
        '',
      );
    }
  });
});
