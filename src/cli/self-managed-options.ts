// `confighash serve`'s self-managed certificates and hash key (docs/install.md):
// the options that put the serving certificate, its key and the hash key in
// Secrets, and the paths in --runtime-dir that stand for the file flags then.

import { join } from 'node:path';
import type { SelfManagedCertificates } from '../certs/certificates-secret.js';
import type { HashKeySecret } from '../hash-key/secret.js';
import { type OptionSpec, type OptionValues, parseDuration } from './options.js';

/** `serve` and `follow`'s Secrets: the certificates (serve only) and the hash key. */
export interface SelfManagedOptions {
  /** The webhook's own namespace, where its Secrets live. */
  readonly namespace: string;
  readonly certificates: SelfManagedCertificates | undefined;
  readonly hashKey: HashKeySecret | undefined;
}

// Names must match the RBAC resourceNames in manifests/.
export const SELF_MANAGED_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'self-managed-certs',
    env: 'CONFIGHASH_SELF_MANAGED_CERTS',
    value: '',
    boolean: true,
    help: 'keep a CA and serving certificate in a Secret, renew them, patch the caBundle (instead of --tls-*-file)',
  },
  {
    flag: 'hash-key-secret',
    env: 'CONFIGHASH_HASH_KEY_SECRET',
    value: 'NAME',
    help: 'read the hash key from this Secret, created when absent, and its previous keys from its previous-* entries (instead of --hash-key-file and --previous-hash-key-file; default confighash-hash-key with --self-managed-certs)',
  },
  {
    flag: 'namespace',
    env: 'CONFIGHASH_NAMESPACE',
    value: 'NS',
    defaultValue: 'confighash-system',
    help: "the webhook's own namespace: its Secrets and Service; never hashed in, whatever its label",
  },
  {
    flag: 'service-name',
    env: 'CONFIGHASH_WEBHOOK_SERVICE',
    value: 'NAME',
    defaultValue: 'confighash',
    help: 'the Service the apiserver calls; its DNS names go into the certificate',
  },
  {
    flag: 'cert-host',
    env: 'CONFIGHASH_CERT_HOSTS',
    value: 'NAME',
    help: 'extra DNS name or IP for the certificate (repeatable; env: comma-separated)',
  },
  {
    flag: 'certs-secret',
    env: 'CONFIGHASH_CERTS_SECRET',
    value: 'NAME',
    defaultValue: 'confighash-certs',
    help: 'the Secret holding the CA and serving certificate',
  },
  {
    flag: 'webhook-configuration',
    env: 'CONFIGHASH_WEBHOOK_CONFIGURATION',
    value: 'NAME',
    defaultValue: 'confighash',
    help: 'the MutatingWebhookConfiguration whose caBundle is kept current',
  },
  {
    flag: 'runtime-dir',
    env: 'CONFIGHASH_RUNTIME_DIR',
    value: 'DIR',
    defaultValue: '/run/confighash',
    help: 'writable directory for the certificate, key and hash keys from the Secrets',
  },
  {
    flag: 'cert-check-interval',
    env: 'CONFIGHASH_CERT_CHECK_INTERVAL',
    value: 'DURATION',
    defaultValue: '1h',
    help: 'how often the certificates Secret and the caBundle are checked (renewal, other replicas)',
  },
  {
    flag: 'serving-cert-validity',
    env: 'CONFIGHASH_SERVING_CERT_VALIDITY',
    value: 'DURATION',
    defaultValue: '8760h',
    help: 'lifetime of a serving certificate it issues; renewed when a third is left',
  },
];

/** The self-managed options, and the paths they give the file flags they replace. */
export interface SelfManagedConfig {
  readonly options: SelfManagedOptions | undefined;
  readonly files: Readonly<Record<string, string>>;
}

/**
 * --self-managed-certs and --hash-key-secret replace the file flags they stand
 * for: `files` gives those flags their paths in --runtime-dir.
 */
export function parseSelfManaged(values: OptionValues): SelfManagedConfig | string {
  const { get } = values;
  const certs = get('self-managed-certs') ?? 'false';
  if (certs !== 'true' && certs !== 'false') {
    return `CONFIGHASH_SELF_MANAGED_CERTS must be true or false, got '${certs}'`;
  }
  const managedCerts = certs === 'true';
  const hashKeySecret =
    get('hash-key-secret') ??
    (managedCerts && !get('hash-key-file') ? 'confighash-hash-key' : undefined);
  if (!managedCerts && hashKeySecret === undefined) return { options: undefined, files: {} };
  const conflict = combinedFileFlag(get, managedCerts, hashKeySecret !== undefined);
  if (conflict) return conflict;
  const timing = managedCerts ? certificateTiming(get) : undefined;
  if (typeof timing === 'string') return timing;
  const dir = get('runtime-dir')!;
  const files: Record<string, string> = {};
  if (managedCerts) {
    files['tls-cert-file'] = join(dir, 'tls.crt');
    files['tls-key-file'] = join(dir, 'tls.key');
  }
  if (hashKeySecret) files['hash-key-file'] = join(dir, 'hash.key');
  const options: SelfManagedOptions = {
    namespace: get('namespace')!,
    certificates: timing ? certificateOptions(values, files, timing) : undefined,
    hashKey: hashKeySecret
      ? Object.freeze({ secretName: hashKeySecret, file: files['hash-key-file']! })
      : undefined,
  };
  return { files, options: Object.freeze(options) };
}

/**
 * The options `confighash follow` shares with serve to read the hash key from its
 * Secret (--hash-key-secret, in --namespace, written to --runtime-dir): parseSelfManaged
 * reads them, and without --self-managed-certs needs no other.
 */
export const HASH_KEY_SECRET_OPTIONS: readonly OptionSpec[] = SELF_MANAGED_OPTIONS.filter((spec) =>
  ['hash-key-secret', 'namespace', 'runtime-dir'].includes(spec.flag),
);

/** How often the certificates are checked, and how long the ones it issues are valid. */
function certificateTiming(
  get: OptionValues['get'],
): Pick<SelfManagedCertificates, 'checkIntervalMs' | 'servingValidDays'> | string {
  const interval = parseDuration(get('cert-check-interval'));
  if (interval === undefined || interval <= 0) {
    return `--cert-check-interval must be a positive duration such as 1h (a bare number is seconds), got '${get('cert-check-interval')}'`;
  }
  const servingValidityMs = parseDuration(get('serving-cert-validity'));
  // Below a minute, renewal (a third of the lifetime) would outrun the checks that do it.
  if (servingValidityMs === undefined || servingValidityMs < 60_000) {
    return `--serving-cert-validity must be a duration of at least 1m, such as 8760h, got '${get('serving-cert-validity')}'`;
  }
  return { checkIntervalMs: interval, servingValidDays: servingValidityMs / 86_400_000 };
}

/** A file flag given together with the option that replaces it. */
function combinedFileFlag(
  get: OptionValues['get'],
  managedCerts: boolean,
  keyFromSecret: boolean,
): string | undefined {
  for (const [flag, instead] of [
    ['tls-cert-file', managedCerts ? 'self-managed-certs' : undefined],
    ['tls-key-file', managedCerts ? 'self-managed-certs' : undefined],
    ['hash-key-file', keyFromSecret ? 'hash-key-secret' : undefined],
    ['previous-hash-key-file', keyFromSecret ? 'hash-key-secret' : undefined],
  ] as const) {
    if (instead && get(flag)) return `--${flag} and --${instead} cannot be combined`;
  }
  return undefined;
}

/** The certificate covers the Service's DNS names plus every --cert-host. */
function certificateOptions(
  { get, all }: OptionValues,
  files: Record<string, string>,
  timing: Pick<SelfManagedCertificates, 'checkIntervalMs' | 'servingValidDays'>,
): SelfManagedCertificates {
  const namespace = get('namespace')!;
  const service = get('service-name')!;
  const hosts = [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    ...all('cert-host'),
  ];
  return Object.freeze({
    secretName: get('certs-secret')!,
    hosts: Object.freeze([...new Set(hosts)]),
    webhookConfiguration: get('webhook-configuration')!,
    certFile: files['tls-cert-file']!,
    keyFile: files['tls-key-file']!,
    ...timing,
  });
}
