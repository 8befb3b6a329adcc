// docs/design.md §5's last row with real cert-manager (tools/cluster/cert-manager.ts)
// on the local control plane: a Secret that cert-manager renews is config changed
// outside any apply. No write of the workload carries it, so in a `true` namespace
// nothing rolls; in a `follow` namespace follow mode rolls the workload once per
// renewal. The Certificate renews 15 s after each issue (`duration: 1h`, the shortest
// cert-manager's validation allows, and `renewBefore: 59m45s`, which it allows as less
// than the duration and at least 5 minutes).

import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type CertManager, startCertManager } from '../../tools/cluster/cert-manager.js';
import { LOCAL_FOLLOW_ARGS } from '../../tools/cluster/main.js';
import { e2eFile, namespace, waitUntil, workload, yamlDocuments } from '../support/e2e.js';

let certManager: CertManager;
const file = e2eFile([], {
  follow: LOCAL_FOLLOW_ARGS,
  async setup({ e2e }) {
    certManager = await startCertManager({
      kubeconfig: e2e.controlPlane.kubeconfig,
      kubectl: e2e.kubectl,
      dir: e2e.dir,
    });
  },
  async teardown() {
    await certManager?.stop();
  },
});

/** A namespace with a self-signed Certificate renewed every 15 s, and a workload mounting its Secret. */
async function tlsApp(ns: string, label: 'true' | 'follow'): Promise<void> {
  const issuer = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'selfsigned', namespace: ns },
    spec: { selfSigned: {} },
  };
  const certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web-tls', namespace: ns },
    spec: {
      secretName: 'web-tls',
      dnsNames: [`web.${ns}.svc`],
      duration: '1h',
      renewBefore: '59m45s',
      privateKey: { rotationPolicy: 'Always' },
      issuerRef: { kind: 'Issuer', name: 'selfsigned' },
    },
  };
  await file.e2e.k(
    ['apply', '--server-side', '-f', '-'],
    yamlDocuments(namespace(ns, label), issuer, certificate),
  );
  await file.e2e.k([
    'wait',
    '--for=condition=Ready',
    '--timeout=120s',
    '-n',
    ns,
    'certificate/web-tls',
  ]);
  const podSpec = {
    volumes: [{ name: 'tls', secret: { secretName: 'web-tls' } }],
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1',
        volumeMounts: [{ name: 'tls', mountPath: '/etc/tls' }],
      },
    ],
  };
  // Client-side, as the users who need follow mode apply: once, never again.
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(workload(ns, 'web', { podSpec })));
}

async function servingSerial(ns: string): Promise<string> {
  const secret = JSON.parse(await file.e2e.k(['get', 'secret', 'web-tls', '-n', ns, '-o', 'json']));
  return new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64')).serialNumber;
}

describe('a Secret renewed by cert-manager (config changed outside any apply)', () => {
  it('rolls the workload in a follow namespace, and nothing in a true namespace', async () => {
    await tlsApp('cm-true', 'true');
    await tlsApp('cm-follow', 'follow');
    for (const ns of ['cm-true', 'cm-follow']) {
      expect(await file.api.revision(ns, 'web')).toBe(1);
      expect(
        (await file.api.templateAnnotations(ns, 'deployment', 'web'))['confighash.dev/sources'],
      ).toBe('secret/web-tls');
    }
    const issued = {
      true: await servingSerial('cm-true'),
      follow: await servingSerial('cm-follow'),
    };
    const started = Date.now();
    await waitUntil(
      async () => (await servingSerial('cm-follow')) !== issued.follow,
      'cert-manager to renew the follow namespace certificate',
      120_000,
    );
    const renewedAfter = (Date.now() - started) / 1000;
    await waitUntil(
      async () => (await file.api.revision('cm-follow', 'web')) === 2,
      'follow mode to roll the workload after the renewal',
      60_000,
    );
    console.info(
      `cert-manager renewal seen ${renewedAfter.toFixed(0)} s in; follow rolled ` +
        `${((Date.now() - started) / 1000 - renewedAfter).toFixed(0)} s after it`,
    );
    await waitUntil(
      async () => (await servingSerial('cm-true')) !== issued.true,
      'cert-manager to renew the true namespace certificate',
      120_000,
    );
    // Give follow mode the same chance it had in the other namespace: it must not act here.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await file.api.revision('cm-true', 'web')).toBe(1);
  }, 300_000); // two renewals and a roll: usually under a minute, past the suite's 120 s default when slow
});
