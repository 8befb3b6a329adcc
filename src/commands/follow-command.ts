// `confighash follow` (docs/design.md §6 "One follower, in its own pods"): the
// follower as a process of its own — the hash key, the election and the follower
// on a connection of their own, and a plain-HTTP listener for the probes and
// Prometheus.

import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { FollowCommandConfig, FollowConfig } from '../cli/index.js';
import { createEvaluator, createSourceDigester } from '../evaluate/index.js';
import { createFollowMetrics, type FollowMode, startFollowMode } from '../follow/index.js';
import { hashKeyId } from '../hash/index.js';
import {
  type ClusterCredentials,
  connectToCluster,
  createApiConfigSource,
  createFollowApi,
  createLeaseStore,
} from '../kube/index.js';
import { registerBuildInfo, systemClock } from '../runtime/index.js';
import { createLogger, SERVICE } from '../runtime/logger.js';
import { buildProbeApp } from '../server/probes.js';
import type { WorkloadKind } from '../workload/index.js';
import { type HashKeys, lazyCluster, readHashKeys, startCertificates } from './cluster.js';
import { packageVersion } from './package-version.js';

/** On SIGTERM the lease is released within a retry period (2 s); this leaves room for the rest. */
const SHUTDOWN_DELAY_MS = 10_000;

export async function follow(config: FollowCommandConfig): Promise<void> {
  const logger = createLogger(
    config.logLevel,
    undefined,
    process.stdout.isTTY === true,
    SERVICE.follow,
  );
  const cluster = lazyCluster(logger);
  // Only the hash keys: startCertificates writes them to their files and checks nothing more.
  const selfManaged =
    config.selfManaged && (await startCertificates(config.selfManaged, cluster, logger));
  selfManaged?.stop();
  const keys = await readHashKeys(config, selfManaged);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registerBuildInfo(registry, packageVersion());
  const readiness = { ready: false, isReady: () => readiness.ready };
  const app = buildProbeApp(readiness, registry);
  await app.listen({ port: config.port, host: config.host });
  const credentials = await cluster.credentials();
  const mode = startFollow(
    { ...config.follow, kinds: config.kinds, excludedNamespaces: config.excludedNamespaces },
    credentials,
    keys,
    registry,
    logger,
  );
  readiness.ready = true;
  logger.info(
    { port: config.port, host: config.host, identity: config.follow.identity },
    'following',
  );
  closeWithGrace({ delay: SHUTDOWN_DELAY_MS }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an unexpected error');
    else logger.info({ signal }, 'shutting down: releasing the lease');
    readiness.ready = false;
    await mode.stop();
    await app.close();
    if (config.selfManaged) (await cluster.connection()).close();
  });
}

/** The election and the follower, on a connection of their own (watches are long-lived streams). */
function startFollow(
  config: FollowConfig & {
    readonly kinds: readonly WorkloadKind[];
    readonly excludedNamespaces: readonly string[];
  },
  credentials: ClusterCredentials,
  keys: HashKeys,
  registry: Registry,
  logger: Logger,
): FollowMode {
  const connection = connectToCluster(credentials, { maxSockets: Number.POSITIVE_INFINITY });
  const configSource = createApiConfigSource(connection);
  const clock = systemClock;
  const mode = startFollowMode({
    api: createFollowApi(connection, { clock }),
    evaluate: createEvaluator({ configSource, ...keys }),
    digestSource: createSourceDigester({ configSource, hashKey: keys.hashKey }),
    hashKeyId: hashKeyId(keys.hashKey),
    metrics: createFollowMetrics(registry),
    logger: logger.child({ component: 'follow' }),
    options: config.options,
    kinds: config.kinds,
    excludedNamespaces: config.excludedNamespaces,
    leaseStore: createLeaseStore(connection, config.leaseNamespace, config.leaseName, { clock }),
    identity: config.identity,
    clock,
  });
  return {
    async stop() {
      await mode.stop();
      connection.close();
    },
  };
}
