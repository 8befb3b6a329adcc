// --client-ca-file on a real HTTPS listener (docs/design.md §7, "Authenticating the apiserver"):
// /mutate's port completes a TLS handshake only with a client certificate of that CA — no
// certificate, or one of another CA, and there is no HTTP at all — and the CA is reloaded
// from disk with the serving certificate. The probes' port answers /healthz, /readyz and
// /metrics without a certificate, and never /mutate. A listener without a client CA
// answers the same certificate-less POST (the control).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { createAdmissionMetrics } from '../../src/server/admission-metrics.js';
import { buildTlsProbeApp } from '../../src/server/app.js';
import { readServingTls, type TlsFiles, watchTlsFiles } from '../../src/server/tls.js';
import { httpRequest } from '../../tools/cluster/http.js';
import { generateClientCertificate } from '../../tools/cluster/pki.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { admissionReview } from '../support/workloads.js';

let serving: CertificateAuthority;
let clientCa: CertificateAuthority;
let otherCa: CertificateAuthority;
let client: { cert: string; key: string };
let dir: string;
let files: TlsFiles;
let authenticated: TestApp;
let open: TestApp;
let probes: FastifyInstance;
let stopWatching: () => void;

const portOf = (app: FastifyInstance) => (app.server.address() as AddressInfo).port;

beforeAll(async () => {
  serving = await generateCertificateAuthority('serving CA', 1);
  clientCa = await generateCertificateAuthority('client CA', 1);
  otherCa = await generateCertificateAuthority('another CA', 1);
  client = await generateClientCertificate(clientCa, 'kube-apiserver', []);
  const pair = await generateServingCertificate(serving, ['127.0.0.1'], 1);
  dir = await mkdtemp(join(tmpdir(), 'confighash-client-auth-'));
  files = {
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    clientCaFile: join(dir, 'client-ca.crt'),
  };
  await writeFile(files.certFile, pair.cert);
  await writeFile(files.keyFile, pair.key);
  await writeFile(files.clientCaFile!, clientCa.cert);
  const material = await readServingTls(files);
  authenticated = await startTestApp({ tls: material });
  open = await startTestApp({ tls: { cert: pair.cert, key: pair.key } });
  probes = buildTlsProbeApp({
    metrics: createAdmissionMetrics({ collectProcessMetrics: false }),
    readiness: { isReady: () => true },
    tls: material,
  });
  for (const app of [authenticated.app, open.app, probes]) {
    await app.listen({ port: 0, host: '127.0.0.1' });
  }
  const servers = [authenticated.app, probes].map((app) => app.server as unknown as https.Server);
  stopWatching = watchTlsFiles(servers, files, material, 50, {
    onReload: () => {},
    onError: () => {},
  });
});

afterAll(async () => {
  stopWatching?.();
  await Promise.all([authenticated?.close(), open?.close(), probes?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** POSTs a review; resolves with the HTTP status, or rejects when there is no HTTP at all. */
function postReview(app: FastifyInstance, certificate?: { cert: string; key: string }) {
  return httpRequest(`https://127.0.0.1:${portOf(app)}/mutate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admissionReview()),
    ca: serving.cert,
    ...certificate,
    // A new connection each time: a kept-alive one would carry the handshake it began with.
    agent: false,
    timeoutMs: 5000,
  }).then((response) => response.status);
}

/** A failed handshake: the server's TLS alert, or the connection closed under it. */
const REFUSED_AT_TLS = /certificate required|unknown ca|ECONNRESET|socket hang up|EPIPE/i;

describe('/mutate with --client-ca-file', () => {
  it('answers a caller with a certificate of the client CA', async () => {
    expect(await postReview(authenticated.app, client)).toBe(200);
  });

  it('refuses a caller without a certificate at TLS: no HTTP status at all', async () => {
    await expect(postReview(authenticated.app)).rejects.toThrow(REFUSED_AT_TLS);
  });

  it('refuses a certificate of another CA at TLS', async () => {
    const stranger = await generateClientCertificate(otherCa, 'kube-apiserver', []);
    await expect(postReview(authenticated.app, stranger)).rejects.toThrow(REFUSED_AT_TLS);
  });

  it('without it (the control), the same certificate-less POST is answered', async () => {
    expect(await postReview(open.app)).toBe(200);
  });

  it('reloads the client CA from disk: the new CA’s certificates are taken, the old ones refused', async () => {
    const next = await generateCertificateAuthority('next client CA', 1);
    const nextClient = await generateClientCertificate(next, 'kube-apiserver', []);
    await writeFile(files.clientCaFile!, next.cert);
    await expect
      .poll(() => postReview(authenticated.app, nextClient).catch(() => 0), { timeout: 5000 })
      .toBe(200);
    await expect(postReview(authenticated.app, client)).rejects.toThrow(REFUSED_AT_TLS);
    await writeFile(files.clientCaFile!, clientCa.cert);
    await expect
      .poll(() => postReview(authenticated.app, client).catch(() => 0), { timeout: 5000 })
      .toBe(200);
  });
});

describe('the probes’ port', () => {
  it.each(['/healthz', '/readyz', '/metrics'])(
    'answers GET %s without a certificate',
    async (path) => {
      const response = await httpRequest(`https://127.0.0.1:${portOf(probes)}${path}`, {
        ca: serving.cert,
      });
      expect(response.status).toBe(200);
    },
  );

  it('has no /mutate: a review POSTed there is refused unread (413), as every body on this port is', async () => {
    expect(await postReview(probes)).toBe(413);
  });
});
