// Per-run PKI for the local control plane: one CA signs the apiserver's serving
// certificate and the admin client certificate; a separate key pair signs
// service-account tokens.

import { generateKeyPairSync } from 'node:crypto';
import selfsigned from 'selfsigned';
import {
  type CertificateAuthority,
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';

export interface ControlPlanePki {
  readonly ca: CertificateAuthority;
  readonly apiserver: { cert: string; key: string };
  readonly admin: { cert: string; key: string };
  readonly serviceAccount: { publicKey: string; privateKey: string };
}

const DAYS = 2;

/** `extraHosts`: more names or addresses the apiserver is dialled at (a node's address). */
export async function generateControlPlanePki(
  extraHosts: readonly string[] = [],
): Promise<ControlPlanePki> {
  const ca = await generateCertificateAuthority('confighash local control plane CA', DAYS);
  const apiserver = await generateServingCertificate(
    ca,
    [
      'kube-apiserver',
      '127.0.0.1',
      'localhost',
      '10.0.0.1',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      ...extraHosts.filter((host) => host !== '127.0.0.1'),
    ],
    DAYS,
  );
  const admin = await generateClientCertificate(ca, 'confighash-admin', ['system:masters']);
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ca,
    apiserver,
    admin,
    serviceAccount: {
      publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  };
}

/** A client certificate (clientAuth) of `ca`, for the admin and for tests of client authentication. */
export async function generateClientCertificate(
  ca: CertificateAuthority,
  commonName: string,
  organizations: readonly string[],
): Promise<{ cert: string; key: string }> {
  const pems = await selfsigned.generate(
    [
      { name: 'commonName', value: commonName },
      ...organizations.map((value) => ({ name: 'organizationName', value })),
    ],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      ca: { cert: ca.cert, key: ca.key },
      notAfterDate: new Date(Date.now() + DAYS * 86_400_000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', clientAuth: true },
      ],
    },
  );
  return { cert: pems.cert, key: pems.private };
}
