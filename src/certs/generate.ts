// Certificate authority and serving certificate generation with `selfsigned`.
// Always SHA-256 (Go, hence the apiserver, rejects SHA-1 signatures) and EC
// P-256 keys; IP names become IP SANs because the apiserver dials by address.

import { isIP } from 'node:net';
import selfsigned from 'selfsigned';

export interface CertificateAuthority {
  readonly cert: string;
  readonly key: string;
}

interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

const DAY_MS = 86_400_000;
const KEY = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' } as const;

export async function generateCertificateAuthority(
  commonName: string,
  validDays: number,
  now = new Date(),
): Promise<CertificateAuthority> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: commonName }], {
    ...KEY,
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + validDays * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      {
        name: 'keyUsage',
        keyCertSign: true,
        cRLSign: true,
        digitalSignature: true,
        critical: true,
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

export async function generateServingCertificate(
  authority: CertificateAuthority,
  hosts: readonly string[],
  validDays: number,
  now = new Date(),
): Promise<ServingCertificate> {
  if (hosts.length === 0) throw new Error('a serving certificate needs at least one host name');
  const altNames = [...new Set(hosts)].map((host) =>
    isIP(host) ? { type: 7 as const, ip: host } : { type: 2 as const, value: host },
  );
  const pems = await selfsigned.generate([{ name: 'commonName', value: hosts[0]! }], {
    ...KEY,
    ca: { cert: authority.cert, key: authority.key },
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + validDays * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
