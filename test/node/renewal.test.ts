// Self-managed certificate renewal under load, on a real node: the default
// overlay with serving certificates that live one minute (issued a minute
// back-dated, so renewed when 40 s are left: ~20 s after each issue), checked
// every 5 s and reloaded every 2 s. While applies stream in, the serving
// certificate in the Secret is renewed from the same CA, every replica comes to
// serve the renewal, and not one call fails or falls open.

import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/e2e.js';
import {
  attachNodeFixture,
  expectNothingDropped,
  type NodeFixture,
  patchedOverlay,
  SYSTEM_NAMESPACE,
  servedSerial,
  underLoad,
  waitForReadyWebhookPods,
} from '../support/node.js';

let fixture: NodeFixture;

/** The default overlay, as a user would patch it, with short-lived serving certificates. */
function shortLivedCertificatesOverlay(): Promise<string> {
  const env = {
    CONFIGHASH_SERVING_CERT_VALIDITY: '1m',
    CONFIGHASH_CERT_CHECK_INTERVAL: '5',
    CONFIGHASH_TLS_RELOAD_INTERVAL: '2',
  };
  const operations = Object.entries(env).map(([name, value]) => ({
    op: 'add',
    path: '/spec/template/spec/containers/0/env/-',
    value: { name, value },
  }));
  return patchedOverlay('manifests/overlays/default', [
    { target: { kind: 'Deployment', name: 'confighash' }, operations },
  ]);
}

beforeAll(async () => {
  fixture = await attachNodeFixture();
  await fixture.k(['apply', '--server-side', '-k', await shortLivedCertificatesOverlay()]);
  await fixture.rollout();
  await waitForReadyWebhookPods(fixture);
});

afterAll(async () => {
  await fixture?.stop();
});

interface CertificatesSecret {
  data: Record<string, string>;
}

const stored = async () => {
  const secret = await fixture.json<CertificatesSecret>([
    'get',
    'secret',
    'confighash-certs',
    '-n',
    SYSTEM_NAMESPACE,
  ]);
  const pem = (key: string) => Buffer.from(secret.data[key]!, 'base64').toString();
  return { serving: new X509Certificate(pem('tls.crt')), ca: pem('ca.crt') };
};

describe('self-managed certificate renewal on a real node', () => {
  it('runs behind the overlay’s fence: the caBundle patch went through the policy', async () => {
    const fence = 'confighash-webhook-ca-fence';
    // The node's controller-manager type-checks the policy against the configuration's schema.
    interface Policy {
      metadata: { generation: number };
      status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } };
    }
    let policy: Policy | undefined;
    await waitUntil(async () => {
      policy = await fixture.json<Policy>(['get', 'validatingadmissionpolicy', fence]);
      return policy.status?.observedGeneration === policy.metadata.generation;
    }, 'the fence to be type-checked');
    expect(policy?.status?.typeChecking?.expressionWarnings ?? []).toEqual([]);
    const binding = await fixture.json<{ spec: { policyName: string } }>([
      'get',
      'validatingadmissionpolicybinding',
      fence,
    ]);
    expect(binding.spec.policyName).toBe(fence);
    const configuration = await fixture.json<{
      webhooks: { clientConfig: { caBundle?: string } }[];
    }>(['get', 'mutatingwebhookconfiguration', 'confighash']);
    const caBundle = Buffer.from(configuration.webhooks[0]!.clientConfig.caBundle ?? '', 'base64');
    expect(caBundle.toString()).toContain((await stored()).ca.trim());
  });

  it('renews the serving certificate under load without one failed call', async () => {
    const first = await stored();
    const pods = await waitForReadyWebhookPods(fixture);
    const initiallyServed = await Promise.all(pods.map((pod) => servedSerial(fixture, pod)));
    const seen = new Set<string>([first.serving.serialNumber]);
    /** True once every replica serves a certificate stored since the load began. */
    const everyReplicaServesARenewal = async () => {
      const now = await stored();
      expect(now.ca).toBe(first.ca); // renewal, not a new CA
      seen.add(now.serving.serialNumber);
      const served = await Promise.all(pods.map((pod) => servedSerial(fixture, pod)));
      return served.every((serial, i) => serial !== initiallyServed[i] && seen.has(serial));
    };
    const result = await underLoad(fixture, 'load-renewal', () =>
      waitUntil(
        everyReplicaServesARenewal,
        'every replica to serve a renewed certificate',
        120_000,
      ),
    );
    console.info(`renewal: ${seen.size - 1} serving certificate renewals during the load`);
    expect(seen.size).toBeGreaterThanOrEqual(2);
    expectNothingDropped(result);
  });
});
