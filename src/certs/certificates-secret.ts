// `confighash serve --self-managed-certs`: the CA and serving certificate live in a Secret
// that the first replica to start creates and every other replica adopts. Each replica
// writes them to its own files (a memory emptyDir; the root filesystem is read-only), where
// the server's TLS reloader picks up renewals, and keeps the MutatingWebhookConfiguration's
// caBundle pointing at the CA.
//
// Concurrency is the apiserver's: a create that finds the Secret already there
// (409) and a replace whose resourceVersion is stale (409) both mean "another
// replica won": read again and use what won.

import { X509Certificate } from 'node:crypto';
import { writeFileAtomically } from '../runtime/files.js';
import { generateCertificateAuthority, generateServingCertificate } from './generate.js';
import type { SecretBytes, SecretStore, SelfManagedPorts } from './ports.js';
import {
  AUTHORITY_VALID_DAYS,
  CERT_KEYS,
  type CertificatePlan,
  caBundleAfterRotation,
  inspectCertificates,
  planCertificates,
  SERVING_VALID_DAYS,
} from './renewal.js';

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

const TLS_SECRET_TYPE = 'kubernetes.io/tls';
const MAX_ATTEMPTS = 5;
/** After a failed check, try again this soon (or at the check interval, if shorter). */
const RETRY_MS = 10_000;

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

/** The first check runs now; then one every interval, sooner after a failure. */
export async function startCertificateChecks(
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
    if (!ok) ports.checkFailed?.();
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
  stored: SecretBytes | undefined,
  hosts: readonly string[],
  now: Date,
  servingValidDays: number,
): Promise<SecretBytes> {
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

function materialOf(data: SecretBytes): CertificateMaterial {
  return {
    cert: data[CERT_KEYS.servingCert]!.toString(),
    key: data[CERT_KEYS.servingKey]!.toString(),
    caBundle: data[CERT_KEYS.caBundle]!.toString(),
  };
}

function sameMaterial(a: CertificateMaterial | undefined, b: CertificateMaterial): boolean {
  return a !== undefined && a.cert === b.cert && a.key === b.key;
}
