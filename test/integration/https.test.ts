// A real HTTPS listener: TLS ≥ 1.2 only, and a certificate swapped on disk is
// served to new connections without a restart or dropping open ones.

import { X509Certificate } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { readServingTls, watchTlsFiles } from '../../src/server/tls.js';
import { startTestApp, type TestApp } from '../support/app.js';

let authority: CertificateAuthority;
let t: TestApp;
let port: number;
let dir: string;
let stopWatching: () => void;
const reloads: string[] = [];

beforeAll(async () => {
  authority = await generateCertificateAuthority('test CA', 1);
  const first = await generateServingCertificate(authority, ['localhost', '127.0.0.1'], 1);
  dir = await mkdtemp(join(tmpdir(), 'confighash-tls-'));
  await writeFile(join(dir, 'tls.crt'), first.cert);
  await writeFile(join(dir, 'tls.key'), first.key);
  const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  const material = await readServingTls(files);
  t = await startTestApp({ tls: material });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  stopWatching = watchTlsFiles(t.app.server as unknown as https.Server, files, material, 50, {
    onReload: () => reloads.push('reloaded'),
    onError: (error) => reloads.push(`error: ${error.message}`),
  });
});

afterAll(async () => {
  stopWatching();
  await t.close();
});

/** Connects and returns the serial number of the certificate the server presents. */
function servedSerial(options: tls.ConnectionOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: authority.cert, ...options }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial);
    });
    socket.on('error', reject);
  });
}

describe('protocol versions', () => {
  it('accepts TLS 1.2 and 1.3', async () => {
    await expect(
      servedSerial({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }),
    ).resolves.toBeTruthy();
    await expect(
      servedSerial({ minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }),
    ).resolves.toBeTruthy();
  });

  it('refuses TLS 1.1 from a client that can speak it', async () => {
    const legacyClient = {
      minVersion: 'TLSv1.1',
      maxVersion: 'TLSv1.1',
      ciphers: 'DEFAULT:@SECLEVEL=0',
    } as const;
    // Control: this client does complete a TLS 1.1 handshake with a server that allows it,
    // so the refusal below is the webhook's doing.
    const permissive = tls.createServer({
      ...(await readServingTls({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') })),
      minVersion: 'TLSv1.1',
      ciphers: 'DEFAULT:@SECLEVEL=0',
    });
    await new Promise<void>((resolve) => permissive.listen(0, '127.0.0.1', resolve));
    const permissivePort = (permissive.address() as AddressInfo).port;
    const negotiated = await new Promise<string | null>((resolve, reject) => {
      const socket = tls.connect(
        { host: '127.0.0.1', port: permissivePort, rejectUnauthorized: false, ...legacyClient },
        () => {
          resolve(socket.getProtocol());
          socket.end();
        },
      );
      socket.on('error', reject);
    }).finally(() => permissive.close());
    expect(negotiated).toBe('TLSv1.1');

    await expect(servedSerial({ ...legacyClient, rejectUnauthorized: false })).rejects.toThrow();
  });
});

it('keeps idle connections longer than the apiserver does (90 s), so the apiserver closes them', () => {
  expect((t.app.server as unknown as https.Server).keepAliveTimeout).toBeGreaterThan(90_000);
});

describe('certificate rotation on disk', () => {
  it('serves the new certificate to new connections without dropping an open one', async () => {
    const agent = new https.Agent({ keepAlive: true, ca: authority.cert, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; serial: string; reused: boolean }>((resolve, reject) => {
        const request = https.get({ host: '127.0.0.1', port, path, agent }, (response) => {
          const serial = (response.socket as tls.TLSSocket).getPeerCertificate().serialNumber;
          response.resume();
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, serial, reused: request.reusedSocket }),
          );
        });
        request.on('error', reject);
      });
    const before = await get('/healthz');
    const initialSerial = await servedSerial();
    expect(before.serial).toBe(initialSerial);

    const next = await generateServingCertificate(authority, ['localhost', '127.0.0.1'], 1);
    await writeFile(join(dir, 'tls.crt'), next.cert);
    await writeFile(join(dir, 'tls.key'), next.key);
    const nextSerial = new X509Certificate(next.cert).serialNumber;
    await expect.poll(() => servedSerial(), { timeout: 5000, interval: 50 }).toBe(nextSerial);
    expect(reloads).toContain('reloaded');

    // The keep-alive connection opened before the swap is still the one in use, and works.
    const after = await get('/healthz');
    expect(after.status).toBe(200);
    expect(after.reused).toBe(true);
    expect(after.serial).toBe(initialSerial);
    agent.destroy();
  });

  it('keeps serving the current certificate while the files are a mismatched pair', async () => {
    const current = await servedSerial();
    const other = await generateServingCertificate(authority, ['localhost', '127.0.0.1'], 1);
    await writeFile(join(dir, 'tls.crt'), other.cert); // key not written yet
    await expect
      .poll(() => reloads.some((entry) => entry.startsWith('error:')), { timeout: 5000 })
      .toBe(true);
    expect(await servedSerial()).toBe(current);
  });
});
