// Command-line options and their environment variables, parsed and validated
// into a frozen Config. Every mistake is one line naming the option; nothing
// here reads files or exits the process.

import { parseArgs } from 'node:util';
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
}

const SERVE_OPTIONS: readonly OptionSpec[] = [
  { flag: 'port', env: 'CONFIGHASH_PORT', value: 'N', defaultValue: '8443', help: 'HTTPS port' },
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
    defaultValue: '25',
    help: 'on SIGTERM, how long in-flight reviews may take',
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
  const values = parseOptions('serve', SERVE_OPTIONS, argv, env);
  if (!values.ok) return values;
  const get = values.get;
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
    }),
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

export function usage(): string {
  return [
    'Usage: confighash <command> [options]',
    '',
    'Commands:',
    '  serve       run the admission webhook (HTTPS)',
    '  dev-certs   write a local CA, serving certificate and hash key',
    '',
    helpFor('serve', SERVE_OPTIONS),
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
        ...Object.fromEntries(specs.map((spec) => [spec.flag, { type: 'string', multiple: true }])),
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
    const fromFlag = parsed.values[flag] as string[] | undefined;
    if (fromFlag && fromFlag.length > 0) return fromFlag;
    const fromEnv = env[envOf(specs, flag)];
    if (fromEnv !== undefined && fromEnv !== '')
      return fromEnv.split(',').map((part) => part.trim());
    return [];
  };
  const get = (flag: string): string | undefined => {
    const fromFlag = parsed.values[flag] as string[] | undefined;
    if (fromFlag && fromFlag.length > 0) return fromFlag[fromFlag.length - 1];
    const fromEnv = env[envOf(specs, flag)];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    return specs.find((spec) => spec.flag === flag)?.defaultValue;
  };
  return { ok: true, get, all };
}

function helpFor(command: string, specs: readonly OptionSpec[]): string {
  const lines = specs.map((spec) => {
    const left = `  --${spec.flag} ${spec.value}`.padEnd(32);
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
