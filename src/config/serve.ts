// `confighash serve`: its options (listening and files, self-managed
// certificates, follow mode) and their validation into a frozen ServeConfig.

import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseGoDuration } from '../admission/index.js';
import type { SelfManagedCertificates, SelfManagedOptions } from '../certs/self-managed.js';
import { DEFAULT_FOLLOW_OPTIONS, type FollowOptions } from '../follow/index.js';
import { LOG_LEVELS, type LogLevel } from '../server/logger.js';
import { FOLLOW_NAMESPACE_SELECTOR, type WorkloadKind } from '../workload/index.js';
import { parseKinds, SERVE_KIND_OPTION } from './kinds.js';
import {
  type Environment,
  envOf,
  fail,
  type OptionSpec,
  type Parsed,
  type ParseResult,
  parseInteger,
  parseOptions,
  parseSeconds,
} from './options.js';

export interface ServeConfig {
  readonly port: number;
  readonly host: string;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly hashKeyFile: string;
  readonly logLevel: LogLevel;
  readonly tlsReloadIntervalMs: number;
  readonly shutdownTimeoutMs: number;
  /** --self-managed-certs / --hash-key-secret: the files above are written from Secrets. */
  readonly selfManaged: SelfManagedOptions | undefined;
  /** --follow: follow mode's settings; undefined when off. */
  readonly follow: FollowConfig | undefined;
  /** The workload kinds handled: the apps/v1 ones plus every --kind. */
  readonly kinds: readonly WorkloadKind[];
}

export interface FollowConfig {
  readonly options: FollowOptions;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
}

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'port',
    env: 'CONFIGHASH_LISTEN_PORT',
    value: 'N',
    defaultValue: '8443',
    help: 'HTTPS port',
  },
  {
    flag: 'host',
    env: 'CONFIGHASH_HOST',
    value: 'ADDR',
    defaultValue: '0.0.0.0',
    help: 'address to listen on',
  },
  {
    flag: 'tls-cert-file',
    env: 'CONFIGHASH_TLS_CERT_FILE',
    value: 'PATH',
    help: 'serving certificate (PEM); reloaded when it changes',
  },
  {
    flag: 'tls-key-file',
    env: 'CONFIGHASH_TLS_KEY_FILE',
    value: 'PATH',
    help: 'serving key (PEM); reloaded when it changes',
  },
  {
    flag: 'hash-key-file',
    env: 'CONFIGHASH_HASH_KEY_FILE',
    value: 'PATH',
    help: 'HMAC key, at least 32 bytes; the same on every replica',
  },
  {
    flag: 'log-level',
    env: 'CONFIGHASH_LOG_LEVEL',
    value: 'LEVEL',
    defaultValue: 'info',
    help: LOG_LEVELS.join('|'),
  },
  {
    flag: 'tls-reload-interval',
    env: 'CONFIGHASH_TLS_RELOAD_INTERVAL',
    value: 'SECONDS',
    defaultValue: '10',
    help: 'how often the certificate files are checked',
  },
  {
    flag: 'shutdown-timeout',
    env: 'CONFIGHASH_SHUTDOWN_TIMEOUT',
    value: 'SECONDS',
    defaultValue: '95',
    help: 'on SIGTERM, how long to keep answering until clients close their connections (the apiserver closes idle ones after 90 s)',
  },
];

// Self-managed certificates and hash key (docs/install.md). Names must match the RBAC
// resourceNames in manifests/.
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
    help: 'read the hash key from this Secret, created when absent (instead of --hash-key-file; default confighash-hash-key with --self-managed-certs)',
  },
  {
    flag: 'namespace',
    env: 'CONFIGHASH_NAMESPACE',
    value: 'NS',
    defaultValue: 'confighash-system',
    help: "the webhook's own namespace: its Secrets and Service",
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
    help: 'writable directory for the certificate, key and hash key from the Secrets',
  },
  {
    flag: 'cert-check-interval',
    env: 'CONFIGHASH_CERT_CHECK_INTERVAL',
    value: 'SECONDS',
    defaultValue: '3600',
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

// Follow mode (DESIGN.md §6): rolls on config changes that no write of the workload carries.
export const FOLLOW_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'follow',
    env: 'CONFIGHASH_FOLLOW',
    value: '',
    boolean: true,
    help: `in namespaces labelled ${FOLLOW_NAMESPACE_SELECTOR}, touch workloads whose config changed`,
  },
  {
    flag: 'follow-resync',
    env: 'CONFIGHASH_FOLLOW_RESYNC',
    value: 'DURATION',
    defaultValue: '10m',
    help: 'full resync of the follow namespaces this often',
  },
  {
    flag: 'follow-debounce',
    env: 'CONFIGHASH_FOLLOW_DEBOUNCE',
    value: 'DURATION',
    defaultValue: '10s',
    help: 'wait this long after the last change before touching',
  },
  {
    flag: 'follow-min-interval',
    env: 'CONFIGHASH_FOLLOW_MIN_INTERVAL',
    value: 'DURATION',
    defaultValue: '60s',
    help: 'touch one workload at most this often',
  },
  {
    flag: 'follow-rate',
    env: 'CONFIGHASH_FOLLOW_RATE',
    value: 'N',
    defaultValue: '5',
    help: 'touches per second, for the whole cluster',
  },
  {
    flag: 'follow-burst',
    env: 'CONFIGHASH_FOLLOW_BURST',
    value: 'N',
    defaultValue: '20',
    help: 'touches allowed at once above that rate',
  },
  {
    flag: 'lease-namespace',
    env: 'POD_NAMESPACE',
    value: 'NS',
    defaultValue: 'confighash-system',
    help: 'namespace of the follow-mode Lease',
  },
  {
    flag: 'lease-name',
    env: 'CONFIGHASH_LEASE_NAME',
    value: 'NAME',
    defaultValue: 'confighash-follow',
    help: 'name of the follow-mode Lease',
  },
  {
    flag: 'identity',
    env: 'POD_NAME',
    value: 'ID',
    help: 'this replica in the Lease (default: host name and process id)',
  },
];

/** Every option of serve, in help order. */
export const ALL_SERVE_OPTIONS: readonly OptionSpec[] = [
  ...SERVE_OPTIONS,
  SERVE_KIND_OPTION,
  ...SELF_MANAGED_OPTIONS,
  ...FOLLOW_OPTIONS,
];

export function parseServeConfig(
  argv: readonly string[],
  env: Environment,
): ParseResult<ServeConfig> {
  const values = parseOptions('serve', ALL_SERVE_OPTIONS, argv, env);
  if (!values.ok) return values;
  const selfManaged = parseSelfManaged(values);
  if (typeof selfManaged === 'string') return fail(selfManaged);
  const get = (flag: string) => selfManaged.files[flag] ?? values.get(flag);
  const port = parseInteger(get('port'), 1, 65535);
  if (port === undefined)
    return fail(`--port must be a whole number from 1 to 65535, got '${get('port')}'`);
  for (const flag of ['tls-cert-file', 'tls-key-file', 'hash-key-file']) {
    if (!get(flag)) return fail(`--${flag} is required (or set ${envOf(SERVE_OPTIONS, flag)})`);
  }
  const logLevel = get('log-level') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    return fail(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got '${logLevel}'`);
  }
  const reload = parseSeconds(get('tls-reload-interval'));
  if (reload === undefined || reload <= 0) {
    return fail(
      `--tls-reload-interval must be a positive number of seconds, got '${get('tls-reload-interval')}'`,
    );
  }
  const shutdown = parseSeconds(get('shutdown-timeout'));
  if (shutdown === undefined) {
    return fail(`--shutdown-timeout must be a number of seconds, got '${get('shutdown-timeout')}'`);
  }
  const follow = parseFollowConfig(get);
  if (typeof follow === 'string') return fail(follow);
  const kinds = parseKinds(values.all('kind'));
  if (typeof kinds === 'string') return fail(kinds);
  return {
    ok: true,
    config: Object.freeze({
      port,
      host: get('host')!,
      tlsCertFile: get('tls-cert-file')!,
      tlsKeyFile: get('tls-key-file')!,
      hashKeyFile: get('hash-key-file')!,
      logLevel,
      tlsReloadIntervalMs: reload * 1000,
      shutdownTimeoutMs: shutdown * 1000,
      selfManaged: selfManaged.options,
      follow,
      kinds,
    }),
  };
}

type Values = Extract<Parsed, { ok: true }>;

/**
 * --self-managed-certs and --hash-key-secret replace the file flags they stand
 * for: `files` gives those flags their paths in --runtime-dir.
 */
function parseSelfManaged(
  values: Values,
): { options: SelfManagedOptions | undefined; files: Record<string, string> } | string {
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
  const interval = parseSeconds(get('cert-check-interval'));
  if (interval === undefined || interval <= 0) {
    return `--cert-check-interval must be a positive number of seconds, got '${get('cert-check-interval')}'`;
  }
  const servingValidityMs = parseGoDuration(get('serving-cert-validity'));
  // Below a minute, renewal (a third of the lifetime) would outrun the checks that do it.
  if (servingValidityMs === undefined || servingValidityMs < 60_000) {
    return `--serving-cert-validity must be a duration of at least 1m, such as 8760h, got '${get('serving-cert-validity')}'`;
  }
  const dir = get('runtime-dir')!;
  const files: Record<string, string> = {};
  if (managedCerts) {
    files['tls-cert-file'] = join(dir, 'tls.crt');
    files['tls-key-file'] = join(dir, 'tls.key');
  }
  if (hashKeySecret) files['hash-key-file'] = join(dir, 'hash.key');
  const options: SelfManagedOptions = {
    namespace: get('namespace')!,
    certificates: managedCerts
      ? certificateOptions(values, files, {
          checkIntervalMs: interval * 1000,
          servingValidDays: servingValidityMs / 86_400_000,
        })
      : undefined,
    hashKey: hashKeySecret
      ? Object.freeze({ secretName: hashKeySecret, file: files['hash-key-file']! })
      : undefined,
  };
  return { files, options: Object.freeze(options) };
}

/** A file flag given together with the option that replaces it. */
function combinedFileFlag(
  get: Values['get'],
  managedCerts: boolean,
  keyFromSecret: boolean,
): string | undefined {
  for (const [flag, instead] of [
    ['tls-cert-file', managedCerts ? 'self-managed-certs' : undefined],
    ['tls-key-file', managedCerts ? 'self-managed-certs' : undefined],
    ['hash-key-file', keyFromSecret ? 'hash-key-secret' : undefined],
  ] as const) {
    if (instead && get(flag)) return `--${flag} and --${instead} cannot be combined`;
  }
  return undefined;
}

/** The certificate covers the Service's DNS names plus every --cert-host. */
function certificateOptions(
  { get, all }: Values,
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

/** Follow mode's flags, when --follow is on; a string is the one-line mistake. */
function parseFollowConfig(
  get: (flag: string) => string | undefined,
): FollowConfig | undefined | string {
  const enabled = get('follow') ?? 'false';
  if (enabled !== 'true' && enabled !== 'false') {
    return `CONFIGHASH_FOLLOW must be true or false, got '${enabled}'`;
  }
  if (enabled === 'false') return undefined;
  const duration = (flag: string): number | string => {
    const value = parseGoDuration(get(flag));
    return value === undefined
      ? `--${flag} must be a duration such as 10s or 5m, got '${get(flag)}'`
      : value;
  };
  const resyncMs = duration('follow-resync');
  const debounceMs = duration('follow-debounce');
  const minIntervalMs = duration('follow-min-interval');
  for (const value of [resyncMs, debounceMs, minIntervalMs])
    if (typeof value === 'string') return value;
  if ((resyncMs as number) < 1000)
    return `--follow-resync must be at least 1s, got '${get('follow-resync')}'`;
  const ratePerSecond = Number(get('follow-rate'));
  if (!(ratePerSecond > 0))
    return `--follow-rate must be a positive number, got '${get('follow-rate')}'`;
  const burst = parseInteger(get('follow-burst'), 1, 100_000);
  if (burst === undefined)
    return `--follow-burst must be a whole number of at least 1, got '${get('follow-burst')}'`;
  return {
    options: {
      ...DEFAULT_FOLLOW_OPTIONS,
      resyncMs: resyncMs as number,
      debounceMs: debounceMs as number,
      minIntervalMs: minIntervalMs as number,
      ratePerSecond,
      burst,
    },
    leaseNamespace: get('lease-namespace')!,
    leaseName: get('lease-name')!,
    identity: get('identity') ?? `${hostname()}_${process.pid}`,
  };
}
