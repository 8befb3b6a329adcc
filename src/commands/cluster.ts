// What `confighash serve` and `confighash follow` both start with: cluster access
// loaded when first needed, the hash key Secret written to its files
// (--hash-key-secret), and the hash keys read and checked.

import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { SelfManagedOptions } from '../cli/index.js';
import {
  type ApiConnection,
  type ClusterCredentials,
  connectToCluster,
  createCaBundleTarget,
  createSecretStore,
} from '../kube/index.js';
import { systemClock } from '../runtime/index.js';
import { loadClusterCredentials, UsageError } from './errors.js';
import type { SelfManaged } from './self-managed.js';

export const MIN_HASH_KEY_BYTES = 32;

interface LazyCluster {
  credentials(): Promise<ClusterCredentials>;
  /** The webhook's own connection (follow mode opens another). */
  connection(): Promise<ApiConnection>;
}

/** Cluster access loaded when first needed, so that mistakes in files are reported before cluster ones. */
export function lazyCluster(logger: Logger): LazyCluster {
  let loading: Promise<ClusterCredentials> | undefined;
  let connected: ApiConnection | undefined;
  const credentials = () => {
    loading ??= loadClusterCredentials({
      onRefreshError: (error) =>
        logger.warn(
          { reason: error.message },
          'cluster credentials not refreshed; kept the previous',
        ),
    });
    return loading;
  };
  return {
    credentials,
    async connection() {
      connected ??= connectToCluster(await credentials());
      return connected;
    },
  };
}

/** --self-managed-certs / --hash-key-secret: the files serve reads come from Secrets, renewed in place. */
export async function startCertificates(
  options: SelfManagedOptions,
  cluster: LazyCluster,
  logger: Logger,
  checkFailed?: () => void,
): Promise<SelfManaged> {
  const api = await cluster.connection();
  // selfsigned and the renewal loop load only here: most installs bring their own certificates.
  const { startSelfManaged } = await import('./self-managed.js');
  return startSelfManaged(options, {
    secrets: createSecretStore(api, options.namespace),
    webhooks: createCaBundleTarget(api),
    log: logger,
    timers: systemClock,
    ...(checkFailed ? { checkFailed } : {}),
  }).catch((error: Error) => {
    throw new UsageError(`self-managed certificates: ${error.message}`);
  });
}

/** The keys an evaluator hashes with: `hashKey` for every write, the previous ones still current. */
export interface HashKeys {
  readonly hashKey: Buffer;
  readonly previousHashKeys: readonly Buffer[];
}

/**
 * --hash-key-file and every --previous-hash-key-file, each at least MIN_HASH_KEY_BYTES;
 * with --hash-key-secret, the files self-managed mode wrote from the Secret.
 */
export async function readHashKeys(
  files: { readonly hashKeyFile: string; readonly previousHashKeyFiles: readonly string[] },
  selfManaged: SelfManaged | undefined,
): Promise<HashKeys> {
  const previousFiles = [
    ...files.previousHashKeyFiles,
    ...(selfManaged ? selfManaged.previousHashKeyFiles : []),
  ];
  const [hashKey, ...previousHashKeys] = await Promise.all([
    readHashKey('--hash-key-file', files.hashKeyFile),
    ...previousFiles.map((path) => readHashKey('--previous-hash-key-file', path)),
  ]);
  return { hashKey: hashKey!, previousHashKeys };
}

async function readHashKey(flag: string, path: string): Promise<Buffer> {
  const key = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${flag} ${path}: ${error.code ?? error.message}`);
  });
  if (key.length < MIN_HASH_KEY_BYTES) {
    throw new UsageError(
      `${flag} ${path} has ${key.length} bytes; at least ${MIN_HASH_KEY_BYTES} are required`,
    );
  }
  return key;
}
