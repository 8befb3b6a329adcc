// `confighash follow` (docs/design.md §6 "One follower, in its own pods"): follow mode
// as a command of its own, run by a Deployment of its own with its own
// ServiceAccount. It shares serve's hash key options (the same key, from a file or
// the same Secret), its --kind and --log-level, and listens on plain HTTP for the
// probes and Prometheus only.

import type { LogLevel } from '../runtime/logger.js';
import type { WorkloadKind } from '../workload/index.js';
import { FOLLOW_OPTIONS, type FollowConfig, parseFollowConfig } from './follow-mode-options.js';
import { SERVE_KIND_OPTION } from './kind-options.js';
import { type Environment, fail, type OptionSpec, type ParseResult } from './options.js';
import type { SelfManagedOptions } from './self-managed-options.js';
import { HASH_KEY_SECRET_OPTIONS } from './self-managed-options.js';
import {
  EXCLUDED_NAMESPACE_OPTION,
  isLogLevel,
  parseListening,
  parseLogLevel,
  parseWorkloadScope,
  SERVE_OPTIONS,
} from './serve-options.js';

export interface FollowCommandConfig {
  /** Plain HTTP: /healthz, /readyz, /metrics. */
  readonly port: number;
  readonly host: string;
  readonly hashKeyFile: string;
  /** --previous-hash-key-file: keys hashes were written with before; theirs stay current. */
  readonly previousHashKeyFiles: readonly string[];
  /** --hash-key-secret: the hash key file is written from that Secret first. */
  readonly selfManaged: SelfManagedOptions | undefined;
  readonly logLevel: LogLevel;
  readonly follow: FollowConfig;
  readonly kinds: readonly WorkloadKind[];
  /** Never followed, whatever their label: kube-system, --namespace and every --excluded-namespace. */
  readonly excludedNamespaces: readonly string[];
}

/**
 * 8080: the port controller-runtime serves metrics on, and so what PodMonitors and
 * NetworkPolicies written for operators tend to expect; above 1024 (the image runs as
 * uid 65532), and not serve's 8443, so both run side by side on one host.
 */
const FOLLOW_LISTEN_PORT = 8080;

const shared = (flag: string): OptionSpec => SERVE_OPTIONS.find((spec) => spec.flag === flag)!;

export const FOLLOW_COMMAND_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'port',
    env: 'CONFIGHASH_FOLLOW_LISTEN_PORT',
    value: 'N',
    defaultValue: String(FOLLOW_LISTEN_PORT),
    help: 'plain HTTP port of /healthz, /readyz and /metrics (no TLS: nothing secret is served there)',
  },
  shared('host'),
  shared('hash-key-file'),
  shared('previous-hash-key-file'),
  ...HASH_KEY_SECRET_OPTIONS,
  SERVE_KIND_OPTION,
  EXCLUDED_NAMESPACE_OPTION,
  shared('log-level'),
  ...FOLLOW_OPTIONS,
];

export function parseFollowCommandConfig(
  argv: readonly string[],
  env: Environment,
): ParseResult<FollowCommandConfig> {
  const listening = parseListening('follow', FOLLOW_COMMAND_OPTIONS, argv, env);
  if (!listening.ok) return listening;
  const { values, selfManaged, get, port } = listening.config;
  const hashKeyFile = get('hash-key-file');
  if (!hashKeyFile) {
    return fail(
      '--hash-key-file or --hash-key-secret is required: the key the webhook hashes with',
    );
  }
  const logLevel = parseLogLevel(get('log-level'));
  if (!isLogLevel(logLevel)) return fail(logLevel);
  const follow = parseFollowConfig(get);
  if (typeof follow === 'string') return fail(follow);
  const scope = parseWorkloadScope(get('namespace')!, values.all);
  if (typeof scope === 'string') return fail(scope);
  const { kinds, excludedNamespaces } = scope;
  return {
    ok: true,
    config: Object.freeze({
      port,
      host: get('host')!,
      hashKeyFile,
      previousHashKeyFiles: Object.freeze(values.all('previous-hash-key-file')),
      selfManaged: selfManaged.options,
      logLevel,
      follow,
      kinds,
      excludedNamespaces,
    }),
  };
}
