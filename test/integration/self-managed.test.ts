// Self-managed certificates (src/certs/certificates-secret.ts) and hash key
// (src/hash-key/secret.ts), started together by src/commands/self-managed.ts, against an
// in-memory Secret store with the apiserver's concurrency rules: create of an
// existing name is 409 AlreadyExists, replace with a stale resourceVersion is
// 409 Conflict. Every store call yields first, so concurrent replicas really
// interleave (both read "absent" before either writes). The real apiserver
// version of this is test/e2e/install.test.ts.

import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { reconcileCertificates } from '../../src/certs/certificates-secret.js';
import {
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import type { CaBundleTarget, SecretBytes, SecretStore } from '../../src/certs/ports.js';
import { CERT_KEYS } from '../../src/certs/renewal.js';
import type { SelfManagedOptions } from '../../src/cli/index.js';
import { startSelfManaged } from '../../src/commands/self-managed.js';
import { ensureHashKey, HASH_KEY_KEY } from '../../src/hash-key/secret.js';
import { systemClock } from '../../src/runtime/index.js';

const DAY = 86_400_000;
const T0 = new Date('2030-01-01T00:00:00Z');
const HOSTS = ['confighash', 'confighash.confighash-system', 'confighash.confighash-system.svc'];

interface MemoryStore extends SecretStore {
  readonly secrets: Map<string, { data: SecretBytes; type: string; resourceVersion: string }>;
  readonly writes: string[];
}

function memoryStore(): MemoryStore {
  const secrets: MemoryStore['secrets'] = new Map();
  const writes: string[] = [];
  let version = 0;
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  return {
    namespace: 'confighash-system',
    secrets,
    writes,
    async read(name) {
      await turn();
      const secret = secrets.get(name);
      return secret && { data: secret.data, resourceVersion: secret.resourceVersion };
    },
    async create(name, type, data) {
      await turn();
      if (secrets.has(name)) return 'exists';
      secrets.set(name, { data, type, resourceVersion: String(++version) });
      writes.push(`create ${name}`);
      return 'created';
    },
    async replace(name, type, data, resourceVersion) {
      await turn();
      if (secrets.get(name)?.resourceVersion !== resourceVersion) return 'conflict';
      secrets.set(name, { data, type, resourceVersion: String(++version) });
      writes.push(`replace ${name}`);
      return 'replaced';
    },
  };
}

const clock = (date: Date) => () => date;
const days = (n: number) => new Date(T0.getTime() + n * DAY);

describe('reconcileCertificates', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = memoryStore();
  });

  it('two replicas starting at once: one creates, the other adopts what won', async () => {
    const [a, b] = await Promise.all([
      reconcileCertificates(store, 'certs', HOSTS, clock(T0)),
      reconcileCertificates(store, 'certs', HOSTS, clock(T0)),
    ]);
    expect([a.result, b.result].sort()).toEqual(['adopted', 'created']);
    expect(a.material).toEqual(b.material);
    expect(store.writes).toEqual(['create certs']);
    expect(store.secrets.get('certs')?.type).toBe('kubernetes.io/tls');
    const cert = new X509Certificate(a.material.cert);
    for (const host of HOSTS) expect(cert.checkHost(host)).toBe(host);
    expect(cert.verify(new X509Certificate(a.material.caBundle).publicKey)).toBe(true);
  });

  it('issues serving certificates for the lifetime it is given, and renews them a third before the end', async () => {
    const hour = 1 / 24;
    const first = await reconcileCertificates(store, 'certs', HOSTS, clock(T0), hour);
    const issued = new X509Certificate(first.material.cert);
    expect(Date.parse(issued.validTo) - T0.getTime()).toBe(3_600_000);
    const early = new Date(T0.getTime() + 30 * 60_000);
    expect((await reconcileCertificates(store, 'certs', HOSTS, () => early, hour)).result).toBe(
      'kept',
    );
    const late = new Date(T0.getTime() + 41 * 60_000);
    const renewed = await reconcileCertificates(store, 'certs', HOSTS, () => late, hour);
    expect(renewed.result).toBe('renewed');
    expect(renewed.material.caBundle).toBe(first.material.caBundle);
  });

  it('a later start keeps what is there', async () => {
    const first = await reconcileCertificates(store, 'certs', HOSTS, clock(T0));
    const again = await reconcileCertificates(store, 'certs', HOSTS, clock(days(30)));
    expect(again).toEqual({ material: first.material, result: 'kept' });
    expect(store.writes).toEqual(['create certs']);
  });

  it('renews the serving certificate from the same CA when a third of its life is left; racing replicas write once', async () => {
    const first = await reconcileCertificates(store, 'certs', HOSTS, clock(T0));
    const before = store.secrets.get('certs')!.data;
    const [a, b] = await Promise.all([
      reconcileCertificates(store, 'certs', HOSTS, clock(days(250))),
      reconcileCertificates(store, 'certs', HOSTS, clock(days(250))),
    ]);
    expect([a.result, b.result].sort()).toEqual(['adopted', 'renewed']);
    expect(a.material).toEqual(b.material);
    expect(store.writes).toEqual(['create certs', 'replace certs']);
    const after = store.secrets.get('certs')!.data;
    expect(after[CERT_KEYS.authorityKey]).toEqual(before[CERT_KEYS.authorityKey]);
    expect(a.material.caBundle).toBe(first.material.caBundle);
    expect(a.material.cert).not.toBe(first.material.cert);
    expect(new Date(new X509Certificate(a.material.cert).validTo).getTime()).toBe(
      days(250 + 365).getTime(),
    );
  });

  it('rotates the CA when a third of its life is left, still trusting the old one', async () => {
    const first = await reconcileCertificates(store, 'certs', HOSTS, clock(T0));
    const rotated = await reconcileCertificates(store, 'certs', HOSTS, clock(days(2500)));
    expect(rotated.result).toBe('rotated');
    const oldCa = first.material.caBundle.trim();
    const newCa = store.secrets.get('certs')!.data[CERT_KEYS.authorityCert]!.toString().trim();
    expect(newCa).not.toBe(oldCa);
    expect(rotated.material.caBundle).toBe(`${newCa}\n${oldCa}\n`);
  });

  it('adds a missing host, keeping the hosts the certificate had', async () => {
    await reconcileCertificates(store, 'certs', [...HOSTS, 'old.example'], clock(T0));
    const renewed = await reconcileCertificates(store, 'certs', [...HOSTS, '127.0.0.1'], clock(T0));
    expect(renewed.result).toBe('renewed');
    const cert = new X509Certificate(renewed.material.cert);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('old.example')).toBe('old.example');
    // And the replica that still wants only the old hosts is content with that.
    const other = await reconcileCertificates(store, 'certs', [...HOSTS, 'old.example'], clock(T0));
    expect(other.result).toBe('kept');
  });

  it('replaces an unusable Secret', async () => {
    store.secrets.set('certs', {
      data: { [CERT_KEYS.servingCert]: Buffer.from('x') },
      type: 'kubernetes.io/tls',
      resourceVersion: '7',
    });
    const outcome = await reconcileCertificates(store, 'certs', HOSTS, clock(T0));
    expect(outcome).toMatchObject({ result: 'rotated', reason: 'no ca.crt' });
  });
});

describe('ensureHashKey', () => {
  it('creates 32 random bytes once; racing replicas get the same key', async () => {
    const store = memoryStore();
    const [a, b] = await Promise.all([ensureHashKey(store, 'key'), ensureHashKey(store, 'key')]);
    expect(a.key).toHaveLength(32);
    expect(a.key).toEqual(b.key);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(store.writes).toEqual(['create key']);
  });

  it('uses an existing key as it is, and refuses a short one without overwriting it', async () => {
    const store = memoryStore();
    const existing = Buffer.alloc(48, 7);
    store.secrets.set('key', {
      data: { [HASH_KEY_KEY]: existing },
      type: 'Opaque',
      resourceVersion: '1',
    });
    expect((await ensureHashKey(store, 'key')).key).toEqual(existing);
    store.secrets.set('short', {
      data: { [HASH_KEY_KEY]: Buffer.from('short') },
      type: 'Opaque',
      resourceVersion: '2',
    });
    await expect(ensureHashKey(store, 'short')).rejects.toThrow(
      'Secret confighash-system/short hash.key has 5 bytes; at least 32 are required (it is never overwritten)',
    );
    expect(store.writes).toEqual([]);
  });

  it('reads previous-* entries as previous keys, in name order; other entries are ignored', async () => {
    const store = memoryStore();
    store.secrets.set('key', {
      data: {
        [HASH_KEY_KEY]: Buffer.alloc(32, 1),
        'previous-2026-b': Buffer.alloc(32, 3),
        'previous-2026-a': Buffer.alloc(40, 2),
        'notes.txt': Buffer.from('not a key'),
      },
      type: 'Opaque',
      resourceVersion: '1',
    });
    const { key, previous } = await ensureHashKey(store, 'key');
    expect(key).toEqual(Buffer.alloc(32, 1));
    expect(previous).toEqual([
      { entry: 'previous-2026-a', key: Buffer.alloc(40, 2) },
      { entry: 'previous-2026-b', key: Buffer.alloc(32, 3) },
    ]);
  });

  it('refuses a short previous key, naming its entry', async () => {
    const store = memoryStore();
    store.secrets.set('key', {
      data: { [HASH_KEY_KEY]: Buffer.alloc(32, 1), 'previous-old': Buffer.alloc(31, 2) },
      type: 'Opaque',
      resourceVersion: '1',
    });
    await expect(ensureHashKey(store, 'key')).rejects.toThrow(
      'Secret confighash-system/key previous-old has 31 bytes; at least 32 are required (it is never overwritten)',
    );
  });
});

describe('startSelfManaged', () => {
  const quietLog = { info() {}, warn() {} };

  async function options(intervalMs = 20): Promise<SelfManagedOptions> {
    const dir = await mkdtemp(join(tmpdir(), 'confighash-self-managed-'));
    return {
      namespace: 'confighash-system',
      certificates: {
        secretName: 'certs',
        hosts: HOSTS,
        webhookConfiguration: 'confighash',
        certFile: join(dir, 'run', 'tls.crt'),
        keyFile: join(dir, 'run', 'tls.key'),
        checkIntervalMs: intervalMs,
        servingValidDays: 365,
      },
      hashKey: { secretName: 'key', file: join(dir, 'run', 'hash.key') },
    };
  }

  function recordingTarget(fail: () => boolean = () => false) {
    const calls: string[] = [];
    const target: CaBundleTarget = {
      async ensure(name, caBundle) {
        calls.push(caBundle);
        if (fail()) throw new Error(`cannot read MutatingWebhookConfiguration ${name}: HTTP 404`);
        return calls.filter((c) => c === caBundle).length === 1 ? 'patched' : 'unchanged';
      },
    };
    return { target, calls };
  }

  async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('writes private files from the Secrets and patches the caBundle before resolving', async () => {
    const store = memoryStore();
    const opts = await options(60_000);
    const { target, calls } = recordingTarget();
    const running = await startSelfManaged(opts, {
      timers: systemClock,
      secrets: store,
      webhooks: target,
      log: quietLog,
    });
    running.stop();
    const secret = store.secrets.get('certs')!.data;
    expect(await readFile(opts.certificates!.certFile)).toEqual(secret[CERT_KEYS.servingCert]);
    expect(await readFile(opts.certificates!.keyFile)).toEqual(secret[CERT_KEYS.servingKey]);
    expect(await readFile(opts.hashKey!.file)).toEqual(
      store.secrets.get('key')!.data[HASH_KEY_KEY],
    );
    for (const file of [opts.certificates!.keyFile, opts.hashKey!.file]) {
      expect((await stat(file)).mode & 0o077).toBe(0);
    }
    expect(calls).toEqual([secret[CERT_KEYS.caBundle]!.toString()]);
    expect(running.previousHashKeyFiles).toEqual([]);
  });

  it('writes each previous key beside the hash key, named as its entry, and returns their files', async () => {
    const store = memoryStore();
    const opts = { ...(await options()), certificates: undefined };
    store.secrets.set('key', {
      data: { [HASH_KEY_KEY]: Buffer.alloc(32, 1), 'previous-a': Buffer.alloc(32, 2) },
      type: 'Opaque',
      resourceVersion: '1',
    });
    const running = await startSelfManaged(opts, {
      timers: systemClock,
      secrets: store,
      webhooks: recordingTarget().target,
      log: quietLog,
    });
    running.stop();
    const file = join(dirname(opts.hashKey!.file), 'previous-a');
    expect(running.previousHashKeyFiles).toEqual([file]);
    expect(await readFile(file)).toEqual(Buffer.alloc(32, 2));
    expect((await stat(file)).mode & 0o077).toBe(0);

    // The key dropped from the Secret, the process started again in the same directory.
    store.secrets.set('key', {
      data: { [HASH_KEY_KEY]: Buffer.alloc(32, 1) },
      type: 'Opaque',
      resourceVersion: '2',
    });
    const again = await startSelfManaged(opts, {
      timers: systemClock,
      secrets: store,
      webhooks: recordingTarget().target,
      log: quietLog,
    });
    again.stop();
    expect(again.previousHashKeyFiles).toEqual([]);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    expect(await readFile(opts.hashKey!.file)).toEqual(Buffer.alloc(32, 1));
  });

  it('picks up a certificate another replica renewed, without a restart', async () => {
    const store = memoryStore();
    const opts = await options();
    const running = await startSelfManaged(opts, {
      timers: systemClock,
      secrets: store,
      webhooks: recordingTarget().target,
      log: quietLog,
    });
    try {
      const stored = store.secrets.get('certs')!;
      const authority = {
        cert: stored.data[CERT_KEYS.authorityCert]!.toString(),
        key: stored.data[CERT_KEYS.authorityKey]!.toString(),
      };
      const renewed = await generateServingCertificate(authority, HOSTS, 365);
      await store.replace(
        'certs',
        stored.type,
        {
          ...stored.data,
          [CERT_KEYS.servingCert]: Buffer.from(renewed.cert),
          [CERT_KEYS.servingKey]: Buffer.from(renewed.key),
        },
        stored.resourceVersion,
      );
      await until(
        async () => (await readFile(opts.certificates!.certFile, 'utf8')) === renewed.cert,
        'the renewed certificate on disk',
      );
      expect(await readFile(opts.certificates!.keyFile, 'utf8')).toBe(renewed.key);
    } finally {
      running.stop();
    }
  });

  it('does not serve a certificate from a new CA until the caBundle trusts it; retries the patch', async () => {
    const store = memoryStore();
    const opts = await options();
    let failing = false;
    const { target, calls } = recordingTarget(() => failing);
    const running = await startSelfManaged(opts, {
      timers: systemClock,
      secrets: store,
      webhooks: target,
      log: quietLog,
    });
    try {
      const served = await readFile(opts.certificates!.certFile, 'utf8');
      failing = true;
      // Another replica rotated the CA (here: a whole new CA and certificate).
      const authority = await generateCertificateAuthority('rotated', 3650);
      const serving = await generateServingCertificate(authority, HOSTS, 365);
      const stored = store.secrets.get('certs')!;
      await store.replace(
        'certs',
        stored.type,
        {
          [CERT_KEYS.authorityCert]: Buffer.from(authority.cert),
          [CERT_KEYS.authorityKey]: Buffer.from(authority.key),
          [CERT_KEYS.servingCert]: Buffer.from(serving.cert),
          [CERT_KEYS.servingKey]: Buffer.from(serving.key),
          [CERT_KEYS.caBundle]: Buffer.from(authority.cert),
        },
        stored.resourceVersion,
      );
      const seen = calls.length;
      await until(() => calls.length >= seen + 3, 'three failed patches');
      expect(await readFile(opts.certificates!.certFile, 'utf8')).toBe(served);
      failing = false;
      await until(
        async () => (await readFile(opts.certificates!.certFile, 'utf8')) === serving.cert,
        'the new certificate once trusted',
      );
      expect(calls.at(-1)).toBe(authority.cert);
    } finally {
      running.stop();
    }
  });

  it('starts even when the MutatingWebhookConfiguration is not there yet, and patches it once it is', async () => {
    const store = memoryStore();
    const opts = await options();
    let missing = true;
    const { target, calls } = recordingTarget(() => missing);
    const warnings: string[] = [];
    let failures = 0;
    const running = await startSelfManaged(opts, {
      timers: systemClock,
      secrets: store,
      webhooks: target,
      log: { info() {}, warn: (fields, message) => warnings.push(`${message}: ${fields.reason}`) },
      checkFailed: () => failures++,
    });
    try {
      expect(await readFile(opts.certificates!.certFile, 'utf8')).toContain('BEGIN CERTIFICATE');
      expect(warnings[0]).toBe(
        'caBundle not patched; retrying: cannot read MutatingWebhookConfiguration confighash: HTTP 404',
      );
      // Each failed check counts (confighash_certificate_renewal_failures_total); a good one does not.
      expect(failures).toBeGreaterThanOrEqual(1);
      const failed = calls.length;
      missing = false;
      await until(() => calls.length > failed, 'a successful patch');
      const counted = failures;
      await until(() => calls.length > failed + 2, 'two more checks');
      expect(failures).toBe(counted);
    } finally {
      running.stop();
    }
  });
});
