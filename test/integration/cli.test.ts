// The CLI as a process: option mistakes are one line and exit 2; dev-certs
// writes what serve needs; serve answers real AdmissionReviews over TLS against
// a kubeconfig-reachable API, logs no config values, and shuts down gracefully.

import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../../tools/cluster/http.js';
import { putStandardSources } from '../support/app.js';
import { type FakeApi, kubeconfigFor, startFakeApi } from '../support/fake-api.js';
import { freePort, runConfighash, stopStartedProcesses } from '../support/process.js';
import { admissionReview, NAMESPACE } from '../support/workloads.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'confighash-cli-'));
});
// Also after a failure or a timeout, when a test's own cleanup never runs.
afterEach(stopStartedProcesses);

describe('option mistakes', () => {
  it.each([
    ['no TLS files', ['serve'], /--tls-cert-file is required/],
    [
      'a bad port',
      [
        'serve',
        '--port',
        'http',
        '--tls-cert-file',
        'a',
        '--tls-key-file',
        'b',
        '--hash-key-file',
        'c',
      ],
      /--port must be/,
    ],
    ['an unknown flag', ['serve', '--frobnicate'], /Unknown option '--frobnicate'/],
    ['an unknown command', ['launch'], /unknown command 'launch'/],
    [
      'a bad log level',
      [
        'serve',
        '--log-level',
        'loud',
        '--tls-cert-file',
        'a',
        '--tls-key-file',
        'b',
        '--hash-key-file',
        'c',
      ],
      /--log-level must be one of/,
    ],
    [
      'missing files',
      [
        'serve',
        '--tls-cert-file',
        '/nope/a',
        '--tls-key-file',
        '/nope/b',
        '--hash-key-file',
        '/nope/c',
      ],
      /cannot read --hash-key-file \/nope\/c: ENOENT/,
    ],
  ])('%s: one line on stderr, exit 2', async (_name, args, message) => {
    const run = runConfighash(args);
    expect(await run.exited).toBe(2);
    expect(run.output.stderr).toMatch(message);
    expect(run.output.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a short hash key is refused', async () => {
    const shortKey = join(dir, 'short.key');
    await writeFile(shortKey, 'too short');
    const run = runConfighash([
      'serve',
      '--tls-cert-file',
      'x',
      '--tls-key-file',
      'y',
      '--hash-key-file',
      shortKey,
    ]);
    expect(await run.exited).toBe(2);
    expect(run.output.stderr).toMatch(/has 9 bytes; at least 32 are required/);
  });

  it.each([
    ['serve', ['serve', '--tls-cert-file', 'x', '--tls-key-file', 'y']],
    ['follow', ['follow']],
  ])('%s: a short previous hash key is refused, naming it', async (_name, args) => {
    const key = join(dir, 'current.key');
    const previous = join(dir, 'previous-short.key');
    await writeFile(key, Buffer.alloc(32, 1));
    await writeFile(previous, Buffer.alloc(31, 2));
    const run = runConfighash([
      ...args,
      '--hash-key-file',
      key,
      '--previous-hash-key-file',
      previous,
    ]);
    expect(await run.exited).toBe(2);
    expect(run.output.stderr.trim()).toBe(
      `confighash: --previous-hash-key-file ${previous} has 31 bytes; at least 32 are required`,
    );
  });

  it('options can come from the environment, named in --help', async () => {
    const help = runConfighash(['serve', '--help']);
    expect(await help.exited).toBe(0);
    expect(help.output.stdout).toContain('CONFIGHASH_TLS_CERT_FILE');
    const run = runConfighash(['serve'], {
      CONFIGHASH_TLS_CERT_FILE: 'a',
      CONFIGHASH_TLS_KEY_FILE: 'b',
      CONFIGHASH_HASH_KEY_FILE: '/nope/env-key',
    });
    expect(await run.exited).toBe(2);
    expect(run.output.stderr).toMatch(/\/nope\/env-key/);
  });
});

describe('dev-certs', () => {
  it('writes a CA, a serving cert for localhost and 127.0.0.1 plus --host, and keeps an existing hash key', async () => {
    const certs = join(dir, 'certs');
    const first = runConfighash(['dev-certs', '--dir', certs, '--host', 'webhook.local']);
    expect(await first.exited).toBe(0);
    const key = await readFile(join(certs, 'hash.key'));
    expect(key).toHaveLength(32);
    expect((await stat(join(certs, 'tls.key'))).mode & 0o077).toBe(0);
    const { X509Certificate } = await import('node:crypto');
    const cert = new X509Certificate(await readFile(join(certs, 'tls.crt')));
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.subjectAltName).toContain('DNS:webhook.local');
    expect(cert.verify(new X509Certificate(await readFile(join(certs, 'ca.crt'))).publicKey)).toBe(
      true,
    );
    const second = runConfighash(['dev-certs', '--dir', certs]);
    expect(await second.exited).toBe(0);
    expect(await readFile(join(certs, 'hash.key'))).toEqual(key);
  });
});

describe('serve', () => {
  let api: FakeApi;
  afterAll(async () => {
    await api?.close();
  });

  it('answers AdmissionReviews over TLS, logs no values, and finishes in-flight reviews on SIGTERM', async () => {
    api = await startFakeApi();
    putStandardSources(api, NAMESPACE);
    const certs = join(dir, 'serve-certs');
    expect(await runConfighash(['dev-certs', '--dir', certs]).exited).toBe(0);
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, kubeconfigFor(api.url));
    const port = await freePort();
    const server = runConfighash(
      [
        'serve',
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--tls-cert-file',
        join(certs, 'tls.crt'),
        '--tls-key-file',
        join(certs, 'tls.key'),
        '--hash-key-file',
        join(certs, 'hash.key'),
        '--log-level',
        'debug',
      ],
      { KUBECONFIG: kubeconfig },
    );
    const ca = await readFile(join(certs, 'ca.crt'));
    await expect
      .poll(() => server.output.stdout.includes('"msg":"ready"'), { timeout: 15_000 })
      .toBe(true);

    const post = async (uid: string, query = '') => {
      const answer = await httpRequest(`https://127.0.0.1:${port}/mutate${query}`, {
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(admissionReview({ uid })),
      });
      const body = JSON.parse(answer.body) as {
        response: { uid: string; patch?: string; warnings?: string[] };
      };
      return { ...answer, body };
    };

    const first = await post('cli-1');
    expect(first.status).toBe(200);
    expect(first.body.response.uid).toBe('cli-1');
    expect(first.body.response.patch).toBeDefined();

    // A review whose lookup hangs is in flight when SIGTERM arrives: it must still be answered.
    api.fault('Secret', NAMESPACE, 'db', 'hang');
    const inFlight = post('cli-2', '?timeout=2s');
    await expect.poll(() => api.requests.filter((r) => r.includes('/secrets/db')).length).toBe(2);
    server.child.kill('SIGTERM');
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(answered.body.response.warnings).toEqual([
      'confighash: could not read Secret db (timed out); no hash written',
    ]);
    // The answer closes its connection, so shutdown does not wait for an idle keep-alive.
    expect(answered.headers.connection).toBe('close');
    expect(await server.exited).toBe(0);

    const everything = server.output.stdout + server.output.stderr;
    expect(everything).toContain('"uid":"cli-1"');
    expect(everything).not.toContain('hunter2-secret-value');
    expect(everything).not.toContain(Buffer.from('hunter2-secret-value').toString('base64'));
    expect(everything).not.toContain('port: 8080');
  });
});

describe('a test that times out', () => {
  let pid: number | undefined;

  // `serve` blocks reading a hash key from a FIFO nobody writes: it runs until killed.
  it.fails('times out with its serve process still running', async () => {
    const fifo = join(dir, 'never.key');
    execFileSync('mkfifo', [fifo]);
    const server = runConfighash([
      'serve',
      '--tls-cert-file',
      'x',
      '--tls-key-file',
      'y',
      '--hash-key-file',
      fifo,
    ]);
    pid = server.child.pid;
    await server.exited;
  }, 3_000);

  it('leaves no orphan serve process behind', async () => {
    expect(pid).toBeDefined();
    expect(isRunning(pid!)).toBe(false);
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
