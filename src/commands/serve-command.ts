// `confighash serve`: wires the webhook from a ServeConfig — cluster access, certificates, the hash key, the app — then
// listens, and drains on a signal.

import type { Server } from 'node:https';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createMutator } from '../admission/mutate.js';
import { type NamespaceWatch, startNamespaceCheck } from '../admission/namespace-check.js';
import { type CertificateMetrics, createCertificateMetrics } from '../certs/certificate-metrics.js';
import type { ServeConfig } from '../cli/index.js';
import {
  type ApiConnection,
  type ClusterCredentials,
  connectToCluster,
  createApiConfigSource,
  createKeeperApi,
  createNamespaceApi,
  createSnapshotStore,
} from '../kube/index.js';
import { registerBuildInfo, systemClock } from '../runtime/index.js';
import { createLogger } from '../runtime/logger.js';
import { type AdmissionMetrics, createAdmissionMetrics } from '../server/admission-metrics.js';
import { buildApp, buildTlsProbeApp } from '../server/app.js';
import { waitForConnectionsToClose } from '../server/drain.js';
import { readServingTls, type ServingTls, type TlsFiles, watchTlsFiles } from '../server/tls.js';
import { startKeeper } from '../snapshot/index.js';
import { lazyCluster, readHashKeys, startCertificates } from './cluster.js';
import { UsageError } from './errors.js';
import { packageVersion } from './package-version.js';

export async function serve(config: ServeConfig): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, process.stdout.isTTY === true);
  const cluster = lazyCluster(logger);
  const metrics = createAdmissionMetrics();
  registerBuildInfo(metrics.registry, packageVersion());
  const certificates = createCertificateMetrics(metrics.registry);
  const selfManaged =
    config.selfManaged &&
    (await startCertificates(config.selfManaged, cluster, logger, certificates.renewalFailed));
  const keys = await readHashKeys(config, selfManaged);
  const { tlsFiles, tls } = await readServingFiles(config);
  certificates.serving(tls.cert);
  const connection = await cluster.connection();
  const namespaces = watchNamespaces(config, await cluster.credentials(), connection, logger);
  const readiness = { ready: false, isReady: () => readiness.ready };
  const app = buildApp({
    mutator: createMutator({
      configSource: createApiConfigSource(connection),
      ...keys,
      kinds: config.kinds,
      namespaces,
      ...(config.snapshots ? { snapshots: createSnapshotStore(connection) } : {}),
    }),
    metrics,
    logger,
    readiness,
    tls,
    reviewTimeoutMs: config.webhookTimeoutMs,
  });
  await app.listen({ port: config.port, host: config.host });
  // With --client-ca-file, the kubelet and Prometheus (no client certificate) use a port of their own.
  const probes = config.clientAuth && buildTlsProbeApp({ metrics, readiness, tls });
  if (probes) await probes.listen({ port: config.clientAuth?.probePort, host: config.host });
  const stopTlsWatch = watchServingCertificate(
    [app, ...(probes ? [probes] : [])],
    tlsFiles,
    tls,
    config.tlsReloadIntervalMs,
    logger,
    certificates,
  );
  const keeper = keepSnapshots(config, connection, metrics, logger);
  readiness.ready = true;
  logReady(config, connection.server, logger);
  drainOnSignal(config, logger, async () => {
    readiness.ready = false;
    stopTlsWatch();
    selfManaged?.stop();
    await keeper?.stop();
    const drained = await waitForConnectionsToClose(
      app.server,
      config.shutdownTimeoutMs,
      undefined,
      systemClock,
    );
    logger.info(drained, drained.remaining === 0 ? 'connections drained' : 'drain timed out');
    await app.close();
    await namespaces.stop();
    await probes?.close();
    connection.close();
  });
}

/** With --snapshots, the keeper (docs/design.md §13, "Ownership and collection"), on the lookups' connection. */
function keepSnapshots(
  config: ServeConfig,
  connection: ApiConnection,
  metrics: AdmissionMetrics,
  logger: Logger,
): { stop(): Promise<void> } | undefined {
  if (!config.snapshots) return undefined;
  return startKeeper({
    api: createKeeperApi(connection, config.kinds, { clock: systemClock }),
    resyncMs: config.snapshots.resyncMs,
    graceMs: config.snapshots.graceMs,
    clock: systemClock,
    random: Math.random,
    logger,
    metrics,
  });
}

/** The serving certificate's files (and the client CA's, with --client-ca-file), read once to start. */
async function readServingFiles(
  config: ServeConfig,
): Promise<{ tlsFiles: TlsFiles; tls: ServingTls }> {
  const tlsFiles = {
    certFile: config.tlsCertFile,
    keyFile: config.tlsKeyFile,
    ...(config.clientAuth ? { clientCaFile: config.clientAuth.caFile } : {}),
  };
  const tls = await readServingTls(tlsFiles).catch((error: Error) => {
    throw new UsageError(error.message);
  });
  return { tlsFiles, tls };
}

function logReady(config: ServeConfig, apiServer: URL, logger: Logger): void {
  logger.info(
    {
      port: config.port,
      host: config.host,
      apiServer: apiServer.origin,
      ...(config.clientAuth
        ? { clientCaFile: config.clientAuth.caFile, probePort: config.clientAuth.probePort }
        : {}),
    },
    'ready',
  );
}

/**
 * The namespace check (docs/design.md §4): its watch on a connection of its own (a
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
    api: createNamespaceApi(watchConnection, lookups, { clock: systemClock }),
    excluded: config.excludedNamespaces,
    clock: systemClock,
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
  tls: ServingTls,
  intervalMs: number,
  logger: Logger,
  certificates: CertificateMetrics,
): () => void {
  const servers = apps.map((app) => app.server as unknown as Server);
  const events = {
    onReload: (material: ServingTls) => {
      certificates.serving(material.cert);
      logger.info({ certFile: files.certFile }, 'serving certificate reloaded');
    },
    onError: (error: Error) =>
      logger.warn({ reason: error.message }, 'serving certificate not reloaded'),
  };
  return watchTlsFiles(servers, files, tls, intervalMs, events, systemClock);
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
