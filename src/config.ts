// Command-line options and their environment variables, parsed and validated
// into a frozen Config. Every mistake is one line naming the option; nothing
// here reads files or exits the process.

import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseGoDuration } from './admission/index.js';
import type { SelfManagedOptions } from './certs/self-managed.js';
import { DEFAULT_FOLLOW_OPTIONS, type FollowOptions } from './follow/index.js';
import { LOG_LEVELS, type LogLevel } from './server/logger.js';

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
}

export interface FollowConfig {
  readonly options: FollowOptions;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
}

export interface DevCertsConfig {
  readonly dir: string;
  readonly hosts: readonly string[];
}

export type ParseResult<T> =
  | { readonly ok: true; readonly config: T }
  | { readonly ok: false; readonly error: string }
  | { readonly ok: false; readonly help: string };

type Environment = Readonly<Record<string, string | undefined>>;

interface OptionSpec {
  readonly flag: string;
  readonly env: string;
  readonly value: string;
  readonly defaultValue?: string;
  readonly help: string;
  /** A flag without a value (`--flag`; env `true`/`false`). */
  readonly boolean?: true;
}

const SERVE_OPTIONS: readonly OptionSpec[] = [
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
const SELF_MANAGED_OPTIONS: readonly OptionSpec[] = [
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
const FOLLOW_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'follow',
    env: 'CONFIGHASH_FOLLOW',
    value: '',
    boolean: true,
    help: 'in namespaces labelled confighash.dev/enabled=follow, touch workloads whose config changed',
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

const DEV_CERTS_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'dir',
    env: 'CONFIGHASH_CERTS_DIR',
    value: 'DIR',
    defaultValue: 'certs',
    help: 'where to write ca.crt, tls.crt, tls.key and hash.key',
  },
  {
    flag: 'host',
    env: 'CONFIGHASH_CERT_HOSTS',
    value: 'NAME',
    help: 'extra DNS name or IP for the certificate (repeatable; env: comma-separated)',
  },
];

export function parseServeConfig(
  argv: readonly string[],
  env: Environment,
): ParseResult<ServeConfig> {
  const values = parseOptions(
    'serve',
    [...SERVE_OPTIONS, ...SELF_MANAGED_OPTIONS, ...FOLLOW_OPTIONS],
    argv,
    env,
  );
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
    }),
  };
}

/**
 * --self-managed-certs and --hash-key-secret replace the file flags they stand
 * for: `files` gives those flags their paths in --runtime-dir.
 */
function parseSelfManaged(
  values: Extract<Parsed, { ok: true }>,
): { options: SelfManagedOptions | undefined; files: Record<string, string> } | string {
  const { get, all } = values;
  const certs = get('self-managed-certs') ?? 'false';
  if (certs !== 'true' && certs !== 'false') {
    return `CONFIGHASH_SELF_MANAGED_CERTS must be true or false, got '${certs}'`;
  }
  const hashKeySecret =
    get('hash-key-secret') ??
    (certs === 'true' && !get('hash-key-file') ? 'confighash-hash-key' : undefined);
  if (certs === 'false' && hashKeySecret === undefined) return { options: undefined, files: {} };
  for (const [flag, instead] of [
    ['tls-cert-file', certs === 'true' ? 'self-managed-certs' : undefined],
    ['tls-key-file', certs === 'true' ? 'self-managed-certs' : undefined],
    ['hash-key-file', hashKeySecret ? 'hash-key-secret' : undefined],
  ] as const) {
    if (instead && get(flag)) return `--${flag} and --${instead} cannot be combined`;
  }
  const interval = parseSeconds(get('cert-check-interval'));
  if (interval === undefined || interval <= 0) {
    return `--cert-check-interval must be a positive number of seconds, got '${get('cert-check-interval')}'`;
  }
  const servingValidityMs = parseGoDuration(get('serving-cert-validity'));
  // Below a minute, renewal (a third of the lifetime) would outrun the checks that do it.
  if (servingValidityMs === undefined || servingValidityMs < 60_000) {
    return `--serving-cert-validity must be a duration of at least 1m, such as 8760h, got '${get('serving-cert-validity')}'`;
  }
  const namespace = get('namespace')!;
  const service = get('service-name')!;
  const dir = get('runtime-dir')!;
  const files: Record<string, string> = {};
  if (certs === 'true') {
    files['tls-cert-file'] = join(dir, 'tls.crt');
    files['tls-key-file'] = join(dir, 'tls.key');
  }
  if (hashKeySecret) files['hash-key-file'] = join(dir, 'hash.key');
  const hosts = [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    ...all('cert-host'),
  ];
  return {
    files,
    options: Object.freeze({
      namespace,
      certificates:
        certs === 'true'
          ? Object.freeze({
              secretName: get('certs-secret')!,
              hosts: Object.freeze([...new Set(hosts)]),
              webhookConfiguration: get('webhook-configuration')!,
              certFile: files['tls-cert-file']!,
              keyFile: files['tls-key-file']!,
              checkIntervalMs: interval * 1000,
              servingValidDays: servingValidityMs / 86_400_000,
            })
          : undefined,
      hashKey: hashKeySecret
        ? Object.freeze({ secretName: hashKeySecret, file: files['hash-key-file']! })
        : undefined,
    }),
  };
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

export function parseDevCertsConfig(
  argv: readonly string[],
  env: Environment,
): ParseResult<DevCertsConfig> {
  const values = parseOptions('dev-certs', DEV_CERTS_OPTIONS, argv, env);
  if (!values.ok) return values;
  const extra = values.all('host');
  const hosts = [...new Set(['localhost', '127.0.0.1', ...extra])];
  return { ok: true, config: Object.freeze({ dir: values.get('dir')!, hosts }) };
}

/**
 * Every environment variable an option is read from. A variable the kubelet sets for a
 * Service (its links: `<SERVICE>_PORT…`, `<SERVICE>_SERVICE_…`) must never be one of
 * these: `CONFIGHASH_PORT=tcp://10.0.0.221:443` once crash-looped every pod.
 */
export function optionEnvironmentVariables(): readonly string[] {
  const specs = [
    ...SERVE_OPTIONS,
    ...SELF_MANAGED_OPTIONS,
    ...FOLLOW_OPTIONS,
    ...DEV_CERTS_OPTIONS,
  ];
  return [...new Set(specs.map((spec) => spec.env))];
}

export function usage(): string {
  return [
    'Usage: confighash <command> [options]',
    '',
    'Commands:',
    '  serve       run the admission webhook (HTTPS)',
    '  dev-certs   write a local CA, serving certificate and hash key',
    '',
    helpFor('serve', [...SERVE_OPTIONS, ...SELF_MANAGED_OPTIONS, ...FOLLOW_OPTIONS]),
    '',
    helpFor('dev-certs', DEV_CERTS_OPTIONS),
    '',
    'The Kubernetes API is found as kubectl finds it: KUBECONFIG, ~/.kube/config, or in-cluster.',
  ].join('\n');
}

// --- parsing machinery ---------------------------------------------------------

type Parsed =
  | { ok: true; get: (flag: string) => string | undefined; all: (flag: string) => string[] }
  | { ok: false; error: string }
  | { ok: false; help: string };

function parseOptions(
  command: string,
  specs: readonly OptionSpec[],
  argv: readonly string[],
  env: Environment,
): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(
          specs.map((spec) => [
            spec.flag,
            { type: spec.boolean ? 'boolean' : 'string', multiple: true } as const,
          ]),
        ),
      },
    });
  } catch (error) {
    return {
      ok: false,
      error: `${(error as Error).message.split('\n', 1)[0]} (see confighash ${command} --help)`,
    };
  }
  if (parsed.values.help) return { ok: false, help: helpFor(command, specs) };
  const all = (flag: string): string[] => {
    const fromFlag = (parsed.values[flag] as (string | boolean)[] | undefined)?.map(String);
    if (fromFlag && fromFlag.length > 0) return fromFlag;
    const fromEnv = env[envOf(specs, flag)];
    if (fromEnv !== undefined && fromEnv !== '')
      return fromEnv.split(',').map((part) => part.trim());
    return [];
  };
  const get = (flag: string): string | undefined => {
    const fromFlag = (parsed.values[flag] as (string | boolean)[] | undefined)?.map(String);
    if (fromFlag && fromFlag.length > 0) return fromFlag[fromFlag.length - 1];
    const fromEnv = env[envOf(specs, flag)];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    return specs.find((spec) => spec.flag === flag)?.defaultValue;
  };
  return { ok: true, get, all };
}

function helpFor(command: string, specs: readonly OptionSpec[]): string {
  const lines = specs.map((spec) => {
    const left = `  --${spec.flag} ${spec.value}`.trimEnd().padEnd(32);
    const fallback = spec.defaultValue ? ` (default ${spec.defaultValue})` : '';
    return `${left}${spec.help}${fallback}\n${' '.repeat(32)}env ${spec.env}`;
  });
  return [`confighash ${command} options:`, ...lines].join('\n');
}

function envOf(specs: readonly OptionSpec[], flag: string): string {
  return specs.find((spec) => spec.flag === flag)?.env ?? '';
}

function parseInteger(text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

function parseSeconds(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+(\.\d+)?$/.test(text)) return undefined;
  return Number(text);
}

function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}
