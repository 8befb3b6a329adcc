// `confighash serve`: its own options (listening, files, logging, shutdown) and
// the validation of every serve option into a frozen ServeConfig. The
// self-managed options have a module of their own; this one composes them.

import { MAX_TIMEOUT_MS, WEBHOOK_TIMEOUT_MS } from '../admission/index.js';
import type { LogLevel } from '../runtime/logger.js';
import type { WorkloadKind } from '../workload/index.js';
import { parseKinds, SERVE_KIND_OPTION } from './kind-options.js';
import {
  type Environment,
  envOf,
  fail,
  type OptionSpec,
  type OptionValues,
  type ParseResult,
  parseDuration,
  parseInteger,
  parseOptions,
} from './options.js';
import type { SelfManagedConfig, SelfManagedOptions } from './self-managed-options.js';
import { parseSelfManaged, SELF_MANAGED_OPTIONS } from './self-managed-options.js';

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
  /** --previous-hash-key-file: keys hashes were written with before; theirs stay current. */
  readonly previousHashKeyFiles: readonly string[];
  readonly logLevel: LogLevel;
  readonly tlsReloadIntervalMs: number;
  readonly shutdownTimeoutMs: number;
  /** --webhook-timeout: the registration's timeoutSeconds; no review runs longer, whatever its `?timeout=`. */
  readonly webhookTimeoutMs: number;
  /** --self-managed-certs / --hash-key-secret: the files above are written from Secrets. */
  readonly selfManaged: SelfManagedOptions | undefined;
  /** The workload kinds handled: the apps/v1 ones plus every --kind. */
  readonly kinds: readonly WorkloadKind[];
  /** Never opted in, whatever their labels: the webhook's own (--namespace) and every --excluded-namespace. */
  readonly excludedNamespaces: readonly string[];
  /** --client-ca-file: callers of /mutate must present a certificate of that CA; probes move to probePort. */
  readonly clientAuth: { readonly caFile: string; readonly probePort: number } | undefined;
  /** --snapshots: snapshot workloads' ConfigMaps are copied, and their copies kept (docs/design.md §13). */
  readonly snapshots: SnapshotsConfig | undefined;
}

export interface SnapshotsConfig {
  /** --snapshot-resync: how often owners are set and unnamed snapshots collected. */
  readonly resyncMs: number;
  /** --snapshot-grace: a snapshot nothing names is deleted only once older than this. */
  readonly graceMs: number;
}

/** Shared by serve and follow: the follower leaves alone what the webhook never hashes. */
export const EXCLUDED_NAMESPACE_OPTION: OptionSpec = {
  flag: 'excluded-namespace',
  env: 'CONFIGHASH_EXCLUDED_NAMESPACES',
  value: 'NS',
  help: 'never hash (serve) or follow (follow) in this namespace, whatever its label, as kube-system and --namespace (repeatable; env: comma-separated)',
};

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
    flag: 'previous-hash-key-file',
    env: 'CONFIGHASH_PREVIOUS_HASH_KEY_FILES',
    value: 'PATH',
    help: 'a key hashes were written with before --hash-key-file (a rotation): they stay current, new ones use --hash-key-file; at least 32 bytes (repeatable; env: comma-separated)',
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
    value: 'DURATION',
    defaultValue: '10s',
    help: 'how often the certificate files are checked',
  },
  {
    flag: 'client-ca-file',
    env: 'CONFIGHASH_CLIENT_CA_FILE',
    value: 'PATH',
    help: 'require a client certificate signed by this CA (PEM; reloaded when it changes): the apiserver presents one when its admission configuration says so (docs/install.md); a caller without one fails the TLS handshake',
  },
  {
    flag: 'probe-port',
    env: 'CONFIGHASH_PROBE_PORT',
    value: 'N',
    defaultValue: '8444',
    help: 'with --client-ca-file: HTTPS port of /healthz, /readyz and /metrics without a client certificate, for the kubelet and Prometheus (never /mutate)',
  },
  {
    flag: 'shutdown-timeout',
    env: 'CONFIGHASH_SHUTDOWN_TIMEOUT',
    value: 'DURATION',
    defaultValue: '95s',
    help: 'on SIGTERM, how long to keep answering until clients close their connections (the apiserver closes idle ones after 90 s)',
  },
  {
    flag: 'webhook-timeout',
    env: 'CONFIGHASH_WEBHOOK_TIMEOUT',
    value: 'DURATION',
    defaultValue: `${WEBHOOK_TIMEOUT_MS / 1000}s`,
    help: `the registration's timeoutSeconds (whole seconds, 1s to ${MAX_TIMEOUT_MS / 1000}s): a review's deadline is the lesser of this and the caller's ?timeout=`,
  },
  EXCLUDED_NAMESPACE_OPTION,
  {
    flag: 'snapshots',
    env: 'CONFIGHASH_SNAPSHOTS',
    value: '',
    boolean: true,
    help: 'copy the ConfigMaps of workloads annotated confighash.dev/snapshot: "true" into immutable snapshots their templates name, so rollout undo brings the config back (needs the snapshots RBAC and fence: docs/install.md)',
  },
  {
    flag: 'snapshot-resync',
    env: 'CONFIGHASH_SNAPSHOT_RESYNC',
    value: 'DURATION',
    defaultValue: '60s',
    help: 'with --snapshots: how often snapshots get the owners that name them, and unnamed ones are collected',
  },
  {
    flag: 'snapshot-grace',
    env: 'CONFIGHASH_SNAPSHOT_GRACE',
    value: 'DURATION',
    defaultValue: '10m',
    help: 'with --snapshots: a snapshot nothing names is deleted once older than this',
  },
];

/** A namespace name: an RFC 1123 label. */
const NAMESPACE_NAME = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Every option of serve, in help order. */
export const ALL_SERVE_OPTIONS: readonly OptionSpec[] = [
  ...SERVE_OPTIONS,
  SERVE_KIND_OPTION,
  ...SELF_MANAGED_OPTIONS,
];

export function parseServeConfig(
  argv: readonly string[],
  env: Environment,
): ParseResult<ServeConfig> {
  const listening = parseListening('serve', ALL_SERVE_OPTIONS, argv, env);
  if (!listening.ok) return listening;
  const { values, selfManaged, get, port } = listening.config;
  for (const flag of ['tls-cert-file', 'tls-key-file', 'hash-key-file']) {
    if (!get(flag)) return fail(`--${flag} is required (or set ${envOf(SERVE_OPTIONS, flag)})`);
  }
  const logLevel = parseLogLevel(get('log-level'));
  if (!isLogLevel(logLevel)) return fail(logLevel);
  const times = parseServeTimes(get);
  if (typeof times === 'string') return fail(times);
  const clientAuth = parseClientAuth(get, port);
  if (typeof clientAuth === 'string') return fail(clientAuth);
  const scope = parseWorkloadScope(get('namespace')!, values.all);
  if (typeof scope === 'string') return fail(scope);
  const snapshots = parseSnapshots(get);
  if (typeof snapshots === 'string') return fail(snapshots);
  const { kinds, excludedNamespaces } = scope;
  return {
    ok: true,
    config: Object.freeze({
      port,
      host: get('host')!,
      tlsCertFile: get('tls-cert-file')!,
      tlsKeyFile: get('tls-key-file')!,
      hashKeyFile: get('hash-key-file')!,
      previousHashKeyFiles: Object.freeze(values.all('previous-hash-key-file')),
      logLevel,
      ...times,
      selfManaged: selfManaged.options,
      kinds,
      excludedNamespaces,
      clientAuth,
      snapshots,
    }),
  };
}

/** --tls-reload-interval, --shutdown-timeout and --webhook-timeout, in milliseconds. */
function parseServeTimes(
  get: (flag: string) => string | undefined,
): { tlsReloadIntervalMs: number; shutdownTimeoutMs: number; webhookTimeoutMs: number } | string {
  const reload = parseDuration(get('tls-reload-interval'));
  if (reload === undefined || reload <= 0) {
    return `--tls-reload-interval must be a positive duration such as 10s (a bare number is seconds), got '${get('tls-reload-interval')}'`;
  }
  const shutdown = parseDuration(get('shutdown-timeout'));
  if (shutdown === undefined) {
    return `--shutdown-timeout must be a duration such as 95s (a bare number is seconds), got '${get('shutdown-timeout')}'`;
  }
  const webhookTimeout = parseDuration(get('webhook-timeout'));
  if (
    webhookTimeout === undefined ||
    webhookTimeout % 1000 !== 0 ||
    webhookTimeout < 1000 ||
    webhookTimeout > MAX_TIMEOUT_MS
  ) {
    return `--webhook-timeout must be whole seconds from 1s to ${MAX_TIMEOUT_MS / 1000}s (the registration's timeoutSeconds), got '${get('webhook-timeout')}'`;
  }
  return {
    tlsReloadIntervalMs: reload,
    shutdownTimeoutMs: shutdown,
    webhookTimeoutMs: webhookTimeout,
  };
}

function parseSnapshots(
  get: (flag: string) => string | undefined,
): ServeConfig['snapshots'] | string {
  const on = get('snapshots') ?? 'false';
  if (on !== 'true' && on !== 'false') {
    return `CONFIGHASH_SNAPSHOTS must be true or false, got '${on}'`;
  }
  if (on === 'false') return undefined;
  const resync = parseDuration(get('snapshot-resync'));
  if (resync === undefined || resync <= 0) {
    return `--snapshot-resync must be a positive duration such as 60s (a bare number is seconds), got '${get('snapshot-resync')}'`;
  }
  const grace = parseDuration(get('snapshot-grace'));
  if (grace === undefined) {
    return `--snapshot-grace must be a duration such as 10m (a bare number is seconds), got '${get('snapshot-grace')}'`;
  }
  return { resyncMs: resync, graceMs: grace };
}

function parseClientAuth(
  get: (flag: string) => string | undefined,
  port: number,
): ServeConfig['clientAuth'] | string {
  const caFile = get('client-ca-file');
  if (!caFile) return undefined;
  const probePort = parseInteger(get('probe-port'), 1, 65535);
  if (probePort === undefined) {
    return `--probe-port must be a whole number from 1 to 65535, got '${get('probe-port')}'`;
  }
  if (probePort === port) {
    return `--probe-port must differ from --port (${port}): that port requires a client certificate`;
  }
  return { caFile, probePort };
}

/** --port of serve and of follow: the port, or the one-line error. */
export function parsePort(value: string | undefined): number | string {
  return (
    parseInteger(value, 1, 65535) ?? `--port must be a whole number from 1 to 65535, got '${value}'`
  );
}

/** --log-level of serve and of follow: the level, or the one-line error. */
export function parseLogLevel(value: string | undefined): LogLevel | string {
  return isLogLevel(value)
    ? value
    : `--log-level must be one of ${LOG_LEVELS.join(', ')}, got '${value}'`;
}

export function isLogLevel(value: string | undefined): value is LogLevel {
  return LOG_LEVELS.includes(value as LogLevel);
}

/**
 * What serve and follow parse first, alike: their options, the files self-managed mode
 * writes taking the place of the flags that name them (`get`), and the port to listen on.
 */
export function parseListening(
  command: string,
  specs: readonly OptionSpec[],
  argv: readonly string[],
  env: Environment,
): ParseResult<{
  values: OptionValues;
  selfManaged: SelfManagedConfig;
  get: (flag: string) => string | undefined;
  port: number;
}> {
  const values = parseOptions(command, specs, argv, env);
  if (!values.ok) return values;
  const selfManaged = parseSelfManaged(values);
  if (typeof selfManaged === 'string') return fail(selfManaged);
  const get = (flag: string) => selfManaged.files[flag] ?? values.get(flag);
  const port = parsePort(get('port'));
  if (typeof port === 'string') return fail(port);
  return { ok: true, config: { values, selfManaged, get, port } };
}

/**
 * What serve and follow both handle: the kinds (the apps/v1 ones and every --kind) and the
 * namespaces never handled (this process's own and every --excluded-namespace); or the
 * one-line error of the first option that is wrong.
 */
export function parseWorkloadScope(
  ownNamespace: string,
  all: (flag: string) => readonly string[],
): { kinds: readonly WorkloadKind[]; excludedNamespaces: readonly string[] } | string {
  const kinds = parseKinds(all('kind'));
  if (typeof kinds === 'string') return kinds;
  const excludedNamespaces = parseExcludedNamespaces(ownNamespace, all('excluded-namespace'));
  if (typeof excludedNamespaces === 'string') return excludedNamespaces;
  return { kinds, excludedNamespaces };
}

/**
 * This process's own namespace (--namespace) and every --excluded-namespace, once each;
 * or the one-line error naming the first that is not a namespace name.
 */
export function parseExcludedNamespaces(
  own: string,
  excluded: readonly string[],
): readonly string[] | string {
  const bad = [own, ...excluded].find((name) => !NAMESPACE_NAME.test(name));
  if (bad !== undefined) {
    return `--excluded-namespace and --namespace take a namespace name (lowercase letters, digits, '-'; at most 63), got '${bad}'`;
  }
  return Object.freeze([...new Set([own, ...excluded])]);
}
