// `confighash serve --self-managed-certs` (and `--hash-key-secret`): the CA,
// serving certificate and hash key live in Secrets that the first replica to
// start creates and every other replica adopts. Each replica writes them to its
// own files (a memory emptyDir; the root filesystem is read-only), where the
// server's TLS reloader picks up renewals, and keeps the
// MutatingWebhookConfiguration's caBundle pointing at the CA.
//
// Concurrency is the apiserver's: a create that finds the Secret already there
// (409) and a replace whose resourceVersion is stale (409) both mean "another
// replica won": read again and use what won. Nothing here ever overwrites the
// hash key.

import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { generateCertificateAuthority, generateServingCertificate } from './generate.js';
import {
  AUTHORITY_VALID_DAYS,
  CERT_KEYS,
  type CertificatePlan,
  caBundleAfterRotation,
  checkHashKey,
  HASH_KEY_KEY,
  inspectCertificates,
  PREVIOUS_HASH_KEY_PREFIX,
  planCertificates,
  previousHashKeyEntries,
  SERVING_VALID_DAYS,
} from './renewal.js';

export type SecretData = Readonly<Record<string, Buffer>>;

interface StoredSecret {
  readonly data: SecretData;
  readonly resourceVersion: string;
}

/**
 * The Secrets of the webhook's own namespace (adapter: src/kube/secrets.ts). Each call gives
 * up when `signal` aborts, and after the adapter's own time limit.
 */
export interface SecretStore {
  readonly namespace: string;
  read(name: string, signal?: AbortSignal): Promise<StoredSecret | undefined>;
  /** 'exists' when someone else created it first (409 AlreadyExists). */
  create(
    name: string,
    type: string,
    data: SecretData,
    signal?: AbortSignal,
  ): Promise<'created' | 'exists'>;
  /** 'conflict' when it changed after `resourceVersion` was read (409 Conflict). */
  replace(
    name: string,
    type: string,
    data: SecretData,
    resourceVersion: string,
    signal?: AbortSignal,
  ): Promise<'replaced' | 'conflict'>;
}

/** The MutatingWebhookConfiguration's trust (adapter: src/kube/webhook-configuration.ts). */
export interface CaBundleTarget {
  /** Sets every webhook's caBundle of configuration `name` to `caBundle` (PEM). */
  ensure(name: string, caBundle: string): Promise<'patched' | 'unchanged'>;
}

interface SelfManagedLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface SelfManagedCertificates {
  readonly secretName: string;
  /** DNS names and IPs the apiserver may dial: the Service's names plus --cert-host. */
  readonly hosts: readonly string[];
  readonly webhookConfiguration: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly checkIntervalMs: number;
  /** Lifetime of the serving certificates it issues, in days (a fraction for tests). */
  readonly servingValidDays: number;
}

export interface SelfManagedOptions {
  /** The webhook's own namespace, where its Secrets live. */
  readonly namespace: string;
  readonly certificates: SelfManagedCertificates | undefined;
  readonly hashKey: { readonly secretName: string; readonly file: string } | undefined;
}

/** The injected clock's timers (src/runtime/clock.ts, passed in by src/commands). */
export interface CheckTimers {
  setTimer(ms: number, fire: () => void, options?: { readonly keepAlive: false }): () => void;
}

export interface SelfManagedPorts {
  readonly secrets: SecretStore;
  readonly webhooks: CaBundleTarget;
  readonly log: SelfManagedLog;
  /** The renewal checks' timers. */
  readonly timers: CheckTimers;
  readonly now?: () => Date;
}

interface CertificateMaterial {
  readonly cert: string;
  readonly key: string;
  readonly caBundle: string;
}

type CertificateResult = 'created' | 'renewed' | 'rotated' | 'kept' | 'adopted';

interface CertificateOutcome {
  readonly material: CertificateMaterial;
  /** `adopted`: another replica's write won, and what it wrote is good. */
  readonly result: CertificateResult;
  readonly reason?: string;
}

const HASH_KEY_BYTES = 32;
const TLS_SECRET_TYPE = 'kubernetes.io/tls';
const OPAQUE_SECRET_TYPE = 'Opaque';
const MAX_ATTEMPTS = 5;
/** After a failed check, try again this soon (or at the check interval, if shorter). */
const RETRY_MS = 10_000;

/** A previous hash key, by its entry in the Secret (`previous-…`). */
interface PreviousHashKey {
  readonly entry: string;
  readonly key: Buffer;
}

/**
 * Reads the hash key Secret, creating it with 32 random bytes when absent. Never replaces
 * it: rotating the key is a person's edit of the Secret (docs/security.md).
 */
export async function ensureHashKey(
  store: SecretStore,
  name: string,
  generate: () => Buffer = () => randomBytes(HASH_KEY_BYTES),
): Promise<{ key: Buffer; previous: readonly PreviousHashKey[]; created: boolean }> {
  let stored = await store.read(name);
  let created = false;
  if (stored === undefined) {
    created =
      (await store.create(name, OPAQUE_SECRET_TYPE, { [HASH_KEY_KEY]: generate() })) === 'created';
    stored = await store.read(name);
    if (stored === undefined) {
      throw new Error(`Secret ${store.namespace}/${name} disappeared right after it was created`);
    }
  }
  const entries = [HASH_KEY_KEY, ...previousHashKeyEntries(stored.data)];
  for (const entry of entries) {
    const problem = checkHashKey(stored.data[entry], HASH_KEY_BYTES, entry);
    if (problem) {
      throw new Error(`Secret ${store.namespace}/${name} ${problem} (it is never overwritten)`);
    }
  }
  const previous = entries.slice(1).map((entry) => ({ entry, key: stored.data[entry]! }));
  return { key: stored.data[HASH_KEY_KEY]!, previous, created };
}

/** Brings the certificates Secret to a good state and returns what it holds. */
export async function reconcileCertificates(
  store: SecretStore,
  secretName: string,
  hosts: readonly string[],
  now: () => Date = () => new Date(),
  servingValidDays: number = SERVING_VALID_DAYS,
): Promise<CertificateOutcome> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const stored = await store.read(secretName);
    const plan = planCertificates(inspectCertificates(stored?.data, hosts), now());
    if (plan.action === 'keep') {
      return { material: materialOf(stored!.data), result: attempt === 1 ? 'kept' : 'adopted' };
    }
    const data = await buildCertificates(plan, stored?.data, hosts, now(), servingValidDays);
    if (plan.action === 'create') {
      if ((await store.create(secretName, TLS_SECRET_TYPE, data)) === 'created') {
        return { material: materialOf(data), result: 'created' };
      }
      continue;
    }
    const written = await store.replace(secretName, TLS_SECRET_TYPE, data, stored!.resourceVersion);
    if (written === 'replaced') {
      return {
        material: materialOf(data),
        result: plan.action === 'new-authority' ? 'rotated' : 'renewed',
        reason: plan.reason,
      };
    }
  }
  throw new Error(
    `Secret ${store.namespace}/${secretName} kept changing while it was written (${MAX_ATTEMPTS} attempts)`,
  );
}

export interface SelfManaged {
  stop(): void;
  /** The previous hash keys of the Secret, each written to a file beside the hash key's. */
  readonly previousHashKeyFiles: readonly string[];
}

/**
 * Starts self-managed mode: the hash key files and the certificate files exist
 * when this resolves (or it throws, and serve fails to start); renewals and the
 * caBundle are then checked every `checkIntervalMs`.
 */
export async function startSelfManaged(
  options: SelfManagedOptions,
  ports: SelfManagedPorts,
): Promise<SelfManaged> {
  const previousHashKeyFiles = options.hashKey
    ? await writeHashKeys(options.namespace, options.hashKey, ports)
    : [];
  if (!options.certificates) return { stop() {}, previousHashKeyFiles };
  const checks = await startCertificateChecks(options.namespace, options.certificates, ports);
  return { ...checks, previousHashKeyFiles };
}

/**
 * The current key to its file, each previous key to a file named as its entry beside it
 * (the layout a Secret volume would give); returns the previous keys' files. A previous
 * key's file whose entry is gone from the Secret is removed: a container restarted in
 * the same pod keeps its runtime directory, and a dropped key should not outlive the drop.
 */
async function writeHashKeys(
  namespace: string,
  hashKey: NonNullable<SelfManagedOptions['hashKey']>,
  { secrets, log }: SelfManagedPorts,
): Promise<string[]> {
  const { key, previous, created } = await ensureHashKey(secrets, hashKey.secretName);
  await writeFileAtomically(hashKey.file, key);
  const dir = dirname(hashKey.file);
  const entries = new Set(previous.map(({ entry }) => entry));
  for (const name of await readdir(dir)) {
    if (name.startsWith(PREVIOUS_HASH_KEY_PREFIX) && !entries.has(name)) {
      await rm(join(dir, name), { force: true });
    }
  }
  const files = previous.map(({ entry }) => join(dir, entry));
  for (const [index, { key: previousKey }] of previous.entries()) {
    await writeFileAtomically(files[index]!, previousKey);
  }
  log.info(
    {
      secret: `${namespace}/${hashKey.secretName}`,
      created,
      previousKeys: previous.map(({ entry }) => entry),
    },
    created ? 'hash key created' : 'hash key loaded',
  );
  return files;
}

/** The first check runs now; then one every interval, sooner after a failure. */
async function startCertificateChecks(
  namespace: string,
  certificates: SelfManagedCertificates,
  ports: SelfManagedPorts,
): Promise<{ stop(): void }> {
  const check = certificateCheck(namespace, certificates, ports);
  const secret = `${namespace}/${certificates.secretName}`;
  let cancel = () => {};
  let stopped = false;
  const schedule = (ok: boolean) => {
    if (stopped) return;
    const delay = ok
      ? certificates.checkIntervalMs
      : Math.min(RETRY_MS, certificates.checkIntervalMs);
    const run = () => {
      check().then(schedule, (error: Error) => {
        ports.log.warn({ secret, reason: error.message }, 'certificates not checked; retrying');
        schedule(false);
      });
    };
    cancel = ports.timers.setTimer(delay, run, { keepAlive: false });
  };
  schedule(await check());
  return {
    stop() {
      stopped = true;
      cancel();
    },
  };
}

/** One check; true when everything is in place. Throws only when the Secret cannot be brought to a good state. */
function certificateCheck(
  namespace: string,
  certificates: SelfManagedCertificates,
  { secrets, webhooks, log, now = () => new Date() }: SelfManagedPorts,
): () => Promise<boolean> {
  let written: CertificateMaterial | undefined;
  const secret = `${namespace}/${certificates.secretName}`;
  const trust = async (caBundle: string): Promise<boolean> => {
    const configuration = certificates.webhookConfiguration;
    try {
      if ((await webhooks.ensure(configuration, caBundle)) === 'patched') {
        log.info({ webhookConfiguration: configuration }, 'caBundle patched');
      }
      return true;
    } catch (error) {
      log.warn(
        { webhookConfiguration: configuration, reason: (error as Error).message },
        'caBundle not patched; retrying',
      );
      return false;
    }
  };
  return async () => {
    const outcome = await reconcileCertificates(
      secrets,
      certificates.secretName,
      certificates.hosts,
      now,
      certificates.servingValidDays,
    );
    if (outcome.result !== 'kept') {
      log.info({ secret, result: outcome.result, reason: outcome.reason }, 'certificates secret');
    }
    const trusted = await trust(outcome.material.caBundle);
    // A new certificate is served only once the apiserver trusts its CA, unless there is
    // nothing to serve yet: then anything is better than not starting.
    if ((trusted || written === undefined) && !sameMaterial(written, outcome.material)) {
      await writeFileAtomically(certificates.keyFile, outcome.material.key);
      await writeFileAtomically(certificates.certFile, outcome.material.cert);
      written = outcome.material;
    }
    return trusted;
  };
}

async function buildCertificates(
  plan: Exclude<CertificatePlan, { action: 'keep' }>,
  stored: SecretData | undefined,
  hosts: readonly string[],
  now: Date,
  servingValidDays: number,
): Promise<SecretData> {
  if (plan.action === 'renew-serving') {
    // Hosts the current certificate already covers stay covered, so replicas
    // started with different --cert-host values converge instead of taking turns.
    const authority = {
      cert: stored![CERT_KEYS.authorityCert]!.toString(),
      key: stored![CERT_KEYS.authorityKey]!.toString(),
    };
    const serving = await generateServingCertificate(
      authority,
      [...new Set([...hosts, ...hostsOf(stored![CERT_KEYS.servingCert]!)])],
      servingValidDays,
      now,
    );
    return {
      ...stored!,
      [CERT_KEYS.servingCert]: Buffer.from(serving.cert),
      [CERT_KEYS.servingKey]: Buffer.from(serving.key),
    };
  }
  const authority = await generateCertificateAuthority(
    'confighash self-managed CA',
    AUTHORITY_VALID_DAYS,
    now,
  );
  const serving = await generateServingCertificate(authority, hosts, servingValidDays, now);
  const previous =
    plan.action === 'new-authority' ? stored?.[CERT_KEYS.authorityCert]?.toString() : undefined;
  return {
    [CERT_KEYS.authorityCert]: Buffer.from(authority.cert),
    [CERT_KEYS.authorityKey]: Buffer.from(authority.key),
    [CERT_KEYS.servingCert]: Buffer.from(serving.cert),
    [CERT_KEYS.servingKey]: Buffer.from(serving.key),
    [CERT_KEYS.caBundle]: Buffer.from(caBundleAfterRotation(authority.cert, previous, now)),
  };
}

function hostsOf(certPem: Buffer): string[] {
  // Only called for a certificate inspectCertificates has already parsed.
  const names = new X509Certificate(certPem).subjectAltName ?? '';
  return names
    .split(', ')
    .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry)?.[1])
    .filter((host): host is string => host !== undefined);
}

function materialOf(data: SecretData): CertificateMaterial {
  return {
    cert: data[CERT_KEYS.servingCert]!.toString(),
    key: data[CERT_KEYS.servingKey]!.toString(),
    caBundle: data[CERT_KEYS.caBundle]!.toString(),
  };
}

function sameMaterial(a: CertificateMaterial | undefined, b: CertificateMaterial): boolean {
  return a !== undefined && a.cert === b.cert && a.key === b.key;
}

/** Write-then-rename, so the reloader never reads half a file. */
async function writeFileAtomically(path: string, content: string | Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const current = await readFile(path).catch(() => undefined);
  if (current?.equals(Buffer.from(content))) return;
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
}
