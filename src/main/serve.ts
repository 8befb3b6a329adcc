// `confighash serve`: wires the webhook (and follow mode) from a ServeConfig —
// cluster access, certificates, the hash key, the app — then listens, and
// drains on a signal.

import { readFile } from 'node:fs/promises';
import type { Server } from 'node:https';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { SelfManagedOptions } from '../certs/self-managed.js';
import type { FollowConfig, ServeConfig } from '../config/index.js';
import { createEvaluator } from '../evaluate.js';
import { createFollowMetrics, type FollowMode, startFollowMode } from '../follow/index.js';
import {
  type ApiConnection,
  type ClusterCredentials,
  connectToCluster,
  createApiConfigSource,
  createCaBundleTarget,
  createFollowApi,
  createLeaseStore,
  createNamespaceApi,
  createSecretStore,
} from '../kube/index.js';
import { createMutator } from '../mutate.js';
import { type NamespaceWatch, startNamespaceCheck } from '../namespaces.js';
import { buildApp, buildProbeApp } from '../server/app.js';
import { waitForConnectionsToClose } from '../server/drain.js';
import { createLogger } from '../server/logger.js';
import { createAdmissionMetrics } from '../server/metrics.js';
import { readTlsMaterial, type TlsFiles, type TlsMaterial, watchTlsFiles } from '../server/tls.js';
import { loadClusterCredentials, UsageError } from './errors.js';

export const MIN_HASH_KEY_BYTES = 32;

export async function serve(config: ServeConfig): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, process.stdout.isTTY === true);
  const cluster = lazyCluster(logger);
  const selfManaged =
    config.selfManaged && (await startCertificates(config.selfManaged, cluster, logger));
  const hashKey = await readHashKey(config.hashKeyFile);
  const tlsFiles = {
    certFile: config.tlsCertFile,
    keyFile: config.tlsKeyFile,
    ...(config.clientAuth ? { clientCaFile: config.clientAuth.caFile } : {}),
  };
  const tls = await readTlsMaterial(tlsFiles).catch((error: Error) => {
    throw new UsageError(error.message);
  });
  const connection = await cluster.connection();
  const metrics = createAdmissionMetrics();
  const follow =
    config.follow &&
    (await startFollow(
      { ...config.follow, kinds: config.kinds },
      await cluster.credentials(),
      hashKey,
      metrics.registry,
      logger,
    ));
  const namespaces = watchNamespaces(config, await cluster.credentials(), connection, logger);
  const readiness = { ready: false, isReady: () => readiness.ready };
  const app = buildApp({
    mutator: createMutator({
      configSource: createApiConfigSource(connection),
      hashKey,
      kinds: config.kinds,
      namespaces,
    }),
    metrics,
    logger,
    readiness,
    tls,
  });
  await app.listen({ port: config.port, host: config.host });
  // With --client-ca-file, the kubelet and Prometheus (no client certificate) use a port of their own.
  const probes = config.clientAuth && buildProbeApp({ metrics, readiness, tls });
  if (probes) await probes.listen({ port: config.clientAuth?.probePort, host: config.host });
  const stopTlsWatch = watchServingCertificate(
    [app, ...(probes ? [probes] : [])],
    tlsFiles,
    tls,
    config.tlsReloadIntervalMs,
    logger,
  );
  readiness.ready = true;
  logger.info(
    {
      port: config.port,
      host: config.host,
      apiServer: connection.server.origin,
      ...(config.clientAuth
        ? { clientCaFile: config.clientAuth.caFile, probePort: config.clientAuth.probePort }
        : {}),
    },
    'ready',
  );
  drainOnSignal(config, logger, async () => {
    readiness.ready = false;
    stopTlsWatch();
    selfManaged?.stop();
    const [drained] = await Promise.all([
      waitForConnectionsToClose(app.server, config.shutdownTimeoutMs),
      follow?.stop(),
    ]);
    logger.info(drained, drained.remaining === 0 ? 'connections drained' : 'drain timed out');
    await app.close();
    await namespaces.stop();
    await probes?.close();
    connection.close();
  });
}

/**
 * The namespace check (DESIGN.md §4): its watch on a connection of its own (a
 * stream holds its socket), its live GETs on the lookups' connection.
 */
function watchNamespaces(
  config: ServeConfig,
  credentials: ClusterCredentials,
  lookups: ApiConnection,
  logger: Logger,
): NamespaceWatch & { stop(): Promise<void> } {
  const watchConnection = connectToCluster(credentials, { maxSockets: 2 });
  const check = startNamespaceCheck({
    api: createNamespaceApi(watchConnection, lookups),
    excluded: config.excludedNamespaces,
    onWatchError: (error) =>
      logger.warn({ reason: error.message }, 'namespace watch failed; retrying'),
  });
  return {
    check: (namespace, signal) => check.check(namespace, signal),
    get synced() {
      return check.synced;
    },
    async stop() {
      await check.stop();
      watchConnection.close();
    },
  };
}

/** The serving certificate and key (and the client CA), reloaded in place when their files change. */
function watchServingCertificate(
  apps: readonly FastifyInstance[],
  files: TlsFiles,
  tls: TlsMaterial,
  intervalMs: number,
  logger: Logger,
): () => void {
  const servers = apps.map((app) => app.server as unknown as Server);
  return watchTlsFiles(servers, files, tls, intervalMs, {
    onReload: () => logger.info({ certFile: files.certFile }, 'serving certificate reloaded'),
    onError: (error) => logger.warn({ reason: error.message }, 'serving certificate not reloaded'),
  });
}

/** On SIGTERM/SIGINT (or a crash), `stop`: the drain takes up to the shutdown timeout, closing a moment more. */
function drainOnSignal(config: ServeConfig, logger: Logger, stop: () => Promise<void>): void {
  closeWithGrace({ delay: config.shutdownTimeoutMs + 5_000 }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an unexpected error');
    else
      logger.info({ signal }, 'shutting down: answering until the clients close their connections');
    await stop();
  });
}

interface LazyCluster {
  credentials(): Promise<ClusterCredentials>;
  /** The webhook's own connection (follow mode opens another). */
  connection(): Promise<ApiConnection>;
}

/** Cluster access loaded when first needed, so that mistakes in files are reported before cluster ones. */
function lazyCluster(logger: Logger): LazyCluster {
  let loading: Promise<ClusterCredentials> | undefined;
  let connected: ApiConnection | undefined;
  const credentials = () => {
    loading ??= loadClusterCredentials((error) =>
      logger.warn(
        { reason: error.message },
        'cluster credentials not refreshed; kept the previous',
      ),
    );
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
async function startCertificates(
  options: SelfManagedOptions,
  cluster: LazyCluster,
  logger: Logger,
): Promise<{ stop(): void }> {
  const api = await cluster.connection();
  // selfsigned and the renewal loop load only here: most installs bring their own certificates.
  const { startSelfManaged } = await import('../certs/self-managed.js');
  return startSelfManaged(options, {
    secrets: createSecretStore(api, options.namespace),
    webhooks: createCaBundleTarget(api),
    log: logger,
  }).catch((error: Error) => {
    throw new UsageError(`self-managed certificates: ${error.message}`);
  });
}

/** Follow mode: leader election on its own connection (watches are long-lived streams). */
async function startFollow(
  config: FollowConfig & Pick<ServeConfig, 'kinds'>,
  credentials: ClusterCredentials,
  hashKey: Buffer,
  registry: Registry,
  logger: Logger,
): Promise<FollowMode> {
  const connection = connectToCluster(credentials, { maxSockets: Number.POSITIVE_INFINITY });
  const mode = startFollowMode({
    api: createFollowApi(connection),
    evaluate: createEvaluator({ configSource: createApiConfigSource(connection), hashKey }),
    metrics: createFollowMetrics(registry),
    logger: logger.child({ component: 'follow' }),
    options: config.options,
    kinds: config.kinds,
    leaseStore: createLeaseStore(connection, config.leaseNamespace, config.leaseName),
    identity: config.identity,
  });
  return {
    async stop() {
      await mode.stop();
      connection.close();
    },
  };
}

async function readHashKey(path: string): Promise<Buffer> {
  const key = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read --hash-key-file ${path}: ${error.code ?? error.message}`);
  });
  if (key.length < MIN_HASH_KEY_BYTES) {
    throw new UsageError(
      `--hash-key-file ${path} has ${key.length} bytes; at least ${MIN_HASH_KEY_BYTES} are required`,
    );
  }
  return key;
}
