// The cert-manager overlay on a real node with real cert-manager (its controller
// and cainjector built from Go modules, tools/build-cert-manager.sh): cert-manager
// issues the serving certificate, cainjector puts the CA into the
// MutatingWebhookConfiguration, the pods serve exactly the certificate in the
// Secret, and a renewal reaches the running pods — no restart, no failed call.
//
// The serving Certificate is patched as a user would to renew every 15 s:
// `duration: 1h` (cert-manager's minimum) with `renewBefore: 59m45s`. Both pass
// cert-manager's own validation (renewBefore < duration), which its webhook (not
// run here) enforces.

import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import { type CertManager, startCertManager } from '../../tools/cluster/cert-manager.js';
import { configMap, namespace, waitUntil, yamlDocuments } from '../support/e2e.js';
import {
  attachNodeFixture,
  expectNothingDropped,
  loadWorkload,
  type NodeFixture,
  type Pod,
  patchedOverlay,
  SYSTEM_NAMESPACE,
  servedSerial,
  underLoad,
  waitForReadyWebhookPods,
  webhookPods,
} from '../support/node.js';

const SERVING_CERTIFICATE = 'confighash-serving';
const SERVING_SECRET = 'confighash-serving-cert';
/** Until every pod serves a renewal: one is due 15 s after an issue, plus the kubelet's and the reload's lag. */
const RENEWAL_SERVED_TIMEOUT_MS = 150_000;

let fixture: NodeFixture;
let certManager: CertManager;
let installSeconds: number;

/** The cert-manager overlay with a serving certificate that renews 15 s after each issue. */
function renewingOftenOverlay(): Promise<string> {
  const operations = [
    { op: 'replace', path: '/spec/duration', value: '1h' },
    { op: 'replace', path: '/spec/renewBefore', value: '59m45s' },
  ];
  return patchedOverlay('manifests/overlays/cert-manager', [
    { target: { kind: 'Certificate', name: SERVING_CERTIFICATE }, operations },
  ]);
}

beforeAll(async () => {
  fixture = await attachNodeFixture();
  certManager = await startCertManager({
    kubeconfig: fixture.cluster.kubeconfig,
    kubectl: fixture.kubectl,
    dir: fixture.cluster.dir,
  });
  const started = Date.now();
  await fixture.k(['apply', '--server-side', '-k', await renewingOftenOverlay()]);
  await fixture.k([
    'wait',
    '--for=condition=Ready',
    '--timeout=180s',
    '-n',
    SYSTEM_NAMESPACE,
    `certificate/${SERVING_CERTIFICATE}`,
  ]);
  const issued = Date.now();
  await fixture.rollout();
  await waitForReadyWebhookPods(fixture);
  installSeconds = (Date.now() - started) / 1000;
  console.info(
    `cert-manager: serving certificate Ready ${((issued - started) / 1000).toFixed(1)} s after ` +
      `the apply; confighash 2/2 Ready after ${installSeconds.toFixed(1)} s`,
  );
});

afterAll(async () => {
  await certManager?.stop();
  await fixture?.stop();
});

interface TlsSecret {
  data: Record<string, string>;
}

/** What cert-manager stored: the serving certificate and the CA it was signed by. */
async function storedCertificate(): Promise<{ serial: string; ca: string }> {
  const secret = await fixture.json<TlsSecret>([
    'get',
    'secret',
    SERVING_SECRET,
    '-n',
    SYSTEM_NAMESPACE,
  ]);
  const pem = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString();
  return { serial: new X509Certificate(pem('tls.crt')).serialNumber, ca: pem('ca.crt') };
}

async function caBundle(): Promise<string> {
  const configuration = await fixture.json<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(
    ['get', 'mutatingwebhookconfiguration', 'confighash'],
  );
  return Buffer.from(configuration.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString();
}

const restarts = (pod: Pod) =>
  (pod.status.containerStatuses ?? []).reduce((total, c) => total + c.restartCount, 0);

describe('the cert-manager overlay with real cert-manager on a real node', () => {
  it('issues the serving certificate from the CA Issuer and injects the CA into the caBundle', async () => {
    const stored = await storedCertificate();
    expect(stored.ca).toContain('BEGIN CERTIFICATE');
    const ca = new X509Certificate(stored.ca);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toContain('CN=confighash CA');
    await waitUntil(
      async () => (await caBundle()) === stored.ca,
      'cainjector to set the caBundle',
      60_000,
    );
  });

  it('serves the certificate of the Secret on every replica, and the apiserver trusts it', async () => {
    const stored = await storedCertificate();
    for (const pod of await waitForReadyWebhookPods(fixture)) {
      expect(await servedSerial(fixture, pod)).toBe(stored.serial);
    }
    const ns = 'cert-manager-app';
    await fixture.k(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(namespace(ns, 'true'), configMap(ns, 'app-config', { LEVEL: 'info' })),
    );
    const applied = await fixture.k(
      ['apply', '--server-side', '-o', 'json', '-f', '-'],
      yamlDocuments(loadWorkload(ns, 'app', 'app-config')),
    );
    const annotations = JSON.parse(applied).spec.template.metadata.annotations ?? {};
    expect(annotations[HASH]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('picks up a renewal in the running pods without a restart, and no call fails', async () => {
    const before = await waitForReadyWebhookPods(fixture);
    const first = await storedCertificate();
    const initiallyServed = new Map<string, string>();
    for (const pod of before)
      initiallyServed.set(pod.metadata.uid, await servedSerial(fixture, pod));
    const served = new Map<string, Set<string>>();
    const storedSerials = new Set([first.serial]);
    /** When each serial was first seen stored, and first seen served: the kubelet's and the reload's lag. */
    const storedAt = new Map<string, number>();
    const servedAt = new Map<string, number>();
    /** The pod served something else than before: a certificate renewed since. */
    const movedOn = (pod: Pod) =>
      [...(served.get(pod.metadata.uid) ?? [])].some(
        (serial) => serial !== initiallyServed.get(pod.metadata.uid),
      );
    let renewedAt: number | undefined;
    const started = Date.now();
    /** One look at what is stored and what each pod serves; true once every pod moved on. */
    const look = async () => {
      const now = await storedCertificate();
      expect(now.ca).toBe(first.ca); // a renewal from the same CA: the caBundle stays valid
      storedSerials.add(now.serial);
      if (!storedAt.has(now.serial)) storedAt.set(now.serial, Date.now());
      for (const pod of before) {
        const serial = await servedSerial(fixture, pod);
        const seen = served.get(pod.metadata.uid) ?? new Set<string>();
        seen.add(serial);
        served.set(pod.metadata.uid, seen);
        const key = `${pod.metadata.uid}/${serial}`;
        if (!servedAt.has(key)) servedAt.set(key, Date.now());
      }
      if (before.every(movedOn) && renewedAt === undefined) renewedAt = Date.now();
      return renewedAt !== undefined;
    };
    // The disruption is over when every pod serves a certificate renewed during the load.
    const result = await underLoad(fixture, 'load-cert-manager', () =>
      waitUntil(look, 'every pod to serve a renewed certificate', RENEWAL_SERVED_TIMEOUT_MS),
    );
    const lags = [...servedAt]
      .map(([key, at]) => at - (storedAt.get(key.slice(key.indexOf('/') + 1)) ?? at))
      .filter((lag) => lag > 0);
    console.info(
      `cert-manager renewal: ${storedSerials.size - 1} renewals stored during the load; ` +
        `stored → served within ${lags.length ? (Math.max(...lags) / 1000).toFixed(0) : '?'} s (2 s polls); ` +
        `every pod served a renewed certificate ${renewedAt === undefined ? 'never' : `${((renewedAt - started) / 1000).toFixed(0)} s in`}`,
    );
    expect(storedSerials.size).toBeGreaterThanOrEqual(2);
    expect(before.filter(movedOn).map((pod) => pod.metadata.name)).toEqual(
      before.map((pod) => pod.metadata.name),
    );
    // Every certificate served is one cert-manager stored: never a stale or foreign one.
    const known = new Set([...storedSerials, ...initiallyServed.values()]);
    for (const seen of served.values()) for (const serial of seen) expect(known).toContain(serial);
    expectNothingDropped(result);
    const after = await webhookPods(fixture);
    expect(after.map((pod) => pod.metadata.uid).sort()).toEqual(
      before.map((pod) => pod.metadata.uid).sort(),
    );
    expect(after.map(restarts)).toEqual([0, 0]);
    expect(await caBundle()).toBe(first.ca);
  });
});
