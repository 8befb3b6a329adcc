// The chart on a real node (charts/confighash): `helm install` with Helm 3, then with
// Helm 4, each time the webhook hashes a workload through its Service; Helm 4 upgrades
// confighash itself to a new image while server-side applies keep coming, and no
// admission fails; `helm uninstall` leaves no object of the chart and writes keep
// working. One node for the file. Helm 4 installs into a namespace of its own: the
// apiserver keeps its connections to the Helm 3 replicas, which drain for up to 110 s
// after the uninstall, and they can no longer read anything (their ServiceAccount and
// bindings are gone), so a reinstall into the same namespace within that time gets
// unhashed writes (measured: answered 200, no patch) until those connections close.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import { manifestImage } from '../../tools/cluster/images.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { configMap, namespace, yamlDocuments } from '../support/e2e.js';
import { CHART, type HelmMajor, helmAgainst, helmOrSkip } from '../support/helm.js';
import {
  attachNodeFixture,
  expectNothingDropped,
  loadWorkload,
  type NodeFixture,
  SYSTEM_NAMESPACE,
  underLoad,
  waitForReadyWebhookPods,
  waitUntilOnlyStayingReplicasServe,
  webhookCounters,
  webhookPods,
} from '../support/node.js';
import { runConfighash } from '../support/process.js';

const RELEASE = 'confighash';
const helm = helmOrSkip('Helm node tests');
let fixture: NodeFixture;

beforeAll(async () => {
  if (!helm) return;
  fixture = await attachNodeFixture();
});

afterAll(async () => {
  await fixture?.stop();
});

const run = (major: HelmMajor, releaseNamespace: string, args: readonly string[]) =>
  helmAgainst(helm!, fixture.cluster.kubeconfig, fixture.cluster.dir)(
    major,
    releaseNamespace,
    args,
  );

/** A new workload's template hash after a server-side apply of it and its ConfigMap. */
async function hashOf(ns: string, name: string, level: string): Promise<string | undefined> {
  await fixture.k(
    ['apply', '--server-side', '-f', '-'],
    yamlDocuments(
      namespace(ns, 'true'),
      configMap(ns, `${name}-config`, { LEVEL: level }),
      loadWorkload(ns, name, `${name}-config`),
    ),
  );
  const deployment = await fixture.json<{
    spec: { template: { metadata: { annotations?: Record<string, string> } } };
  }>(['get', 'deployment', name, '-n', ns]);
  return deployment.spec.template.metadata.annotations?.[HASH];
}

/** Objects of the chart still there (the Secrets the webhook made are its own). */
async function chartObjectsLeft(releaseNamespace: string): Promise<string> {
  const selector = ['-l', 'app.kubernetes.io/name=confighash', '-o', 'name'];
  const clusterWide = await fixture.k([
    'get',
    'mutatingwebhookconfigurations,clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings',
    ...selector,
  ]);
  const namespaced = await fixture.k([
    'get',
    'deployments,services,serviceaccounts,roles,rolebindings,poddisruptionbudgets,configmaps',
    '-n',
    releaseNamespace,
    ...selector,
  ]);
  return `${clusterWide}${namespaced}`.trim();
}

/** manifests/base/namespace.yaml under another name: Pod Security `restricted` enforced. */
async function createReleaseNamespace(ns: string): Promise<void> {
  const manifest = await fixture.k([
    'create',
    '--dry-run=client',
    '-o',
    'json',
    '-f',
    join(REPO_ROOT, 'manifests/base/namespace.yaml'),
  ]);
  const object = JSON.parse(manifest);
  object.metadata.name = ns;
  await fixture.k(['apply', '--server-side', '-f', '-'], JSON.stringify(object));
}

/** Into a namespace enforcing Pod Security `restricted`, as docs/install.md says. */
async function install(
  major: HelmMajor,
  ns: string,
  values: readonly string[] = [],
): Promise<void> {
  await createReleaseNamespace(ns);
  await run(major, ns, ['install', RELEASE, CHART, ...values.flatMap((v) => ['--set', v])]);
  await fixture.k(['rollout', 'status', 'deployment/confighash', '-n', ns, '--timeout=240s']);
  await waitForReadyWebhookPods(fixture, 2, ns);
}

async function uninstallLeavesWritesWorking(
  major: HelmMajor,
  releaseNamespace: string,
  ns: string,
): Promise<void> {
  await run(major, releaseNamespace, ['uninstall', RELEASE]);
  expect(await chartObjectsLeft(releaseNamespace)).toBe('');
  // Writes to an opted-in namespace still succeed, unhashed: nothing is registered.
  expect(await hashOf(ns, 'after-uninstall', 'info')).toBeUndefined();
}

describe.skipIf(!helm)('the chart on a real node', () => {
  it('Helm 3: install → the webhook hashes through its Service → uninstall leaves nothing', async () => {
    await install(3, SYSTEM_NAMESPACE);
    const before = await webhookCounters(fixture);
    const first = await hashOf('helm3-app', 'app', 'info');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashOf('helm3-app', 'app', 'debug')).not.toBe(first);
    const after = await webhookCounters(fixture);
    expect(after.requests).toBeGreaterThan(before.requests);
    expect(after.errors - before.errors).toBe(0);
    await uninstallLeavesWritesWorking(3, SYSTEM_NAMESPACE, 'helm3-app');
  });

  it('Helm 4: install, upgrade to a new image under continuous applies with 0 failed admissions, uninstall', async () => {
    const ns = 'confighash-helm4';
    await install(4, ns);
    expect(await hashOf('helm4-app', 'app', 'info')).toMatch(/^[0-9a-f]{64}$/);
    // The same build under a second tag: a new image as far as the Deployment knows.
    const image = await manifestImage();
    const repository = image.slice(0, image.lastIndexOf(':'));
    const newTag = 'upgrade-test';
    await fixture.cluster.node.ctr(['images', 'tag', '--force', image, `${repository}:${newTag}`]);
    const oldPods = (await webhookPods(fixture, ns)).map((p) => p.metadata.name);

    // The upgrade is over when only the new replicas serve and the old ones have had SIGTERM.
    const result = await underLoad(fixture, 'helm4-upgrade', async () => {
      await run(4, ns, ['upgrade', RELEASE, CHART, '--set', `image.tag=${newTag}`]);
      await fixture.k(['rollout', 'status', 'deployment/confighash', '-n', ns, '--timeout=240s']);
      await waitUntilOnlyStayingReplicasServe(fixture, ns);
    });
    expectNothingDropped(result);
    const pods = await waitForReadyWebhookPods(fixture, 2, ns);
    expect(pods.filter((p) => oldPods.includes(p.metadata.name))).toEqual([]);
    const running = await fixture.k([
      'get',
      'deployment',
      'confighash',
      '-n',
      ns,
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);
    expect(running).toBe(`${repository}:${newTag}`);
    await uninstallLeavesWritesWorking(4, ns, 'helm4-app');
  });

  it('Helm 4, certificates.mode=existingSecret: serves the given Secret, trusted through the given caBundle', async () => {
    const ns = 'confighash-tls';
    const certs = join(fixture.cluster.dir, 'existing-certs');
    const made = runConfighash(['dev-certs', '--dir', certs, '--host', `confighash.${ns}.svc`]);
    expect(await made.exited).toBe(0);
    await createReleaseNamespace(ns);
    await fixture.k([
      'create',
      'secret',
      'tls',
      'webhook-tls',
      '-n',
      ns,
      '--cert',
      join(certs, 'tls.crt'),
      '--key',
      join(certs, 'tls.key'),
    ]);
    const caBundle = (await readFile(join(certs, 'ca.crt'))).toString('base64');
    await install(4, ns, [
      'certificates.mode=existingSecret',
      'certificates.existingSecret.name=webhook-tls',
      `certificates.existingSecret.caBundle=${caBundle}`,
    ]);
    expect(await hashOf('tls-app', 'app', 'info')).toMatch(/^[0-9a-f]{64}$/);
    await uninstallLeavesWritesWorking(4, ns, 'tls-app');
  });
});
