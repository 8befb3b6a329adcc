// `confighash serve`: its own options (listening, files, logging, shutdown) and
// the validation of every serve option into a frozen ServeConfig. The
// self-managed and follow options have modules of their own; this one composes them.

import type { SelfManagedOptions } from '../certs/self-managed.js';
import type { LogLevel } from '../server/logger.js';
import type { WorkloadKind } from '../workload/index.js';
import {
  FOLLOW_OPTIONS,
  type FollowConfig,
  parseServeFollowConfig,
  SERVE_FOLLOW_OPTION,
} from './follow.js';
import { parseKinds, SERVE_KIND_OPTION } from './kinds.js';
import {
  type Environment,
  envOf,
  fail,
  type OptionSpec,
  type ParseResult,
  parseInteger,
  parseOptions,
  parseSeconds,
} from './options.js';
import { parseSelfManaged, SELF_MANAGED_OPTIONS } from './self-managed.js';

/** What --log-level accepts, in help order. */
export const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

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
  /** --follow (deprecated: `confighash follow`): follow mode's settings; undefined when off. */
  readonly follow: FollowConfig | undefined;
  /** The workload kinds handled: the apps/v1 ones plus every --kind. */
  readonly kinds: readonly WorkloadKind[];
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

/** Every option of serve, in help order. */
export const ALL_SERVE_OPTIONS: readonly OptionSpec[] = [
  ...SERVE_OPTIONS,
  SERVE_KIND_OPTION,
  ...SELF_MANAGED_OPTIONS,
  SERVE_FOLLOW_OPTION,
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
  const follow = parseServeFollowConfig(get);
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
