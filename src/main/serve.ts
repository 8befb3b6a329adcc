// `confighash serve`: wires the webhook (and, deprecated, follow mode) from a
// ServeConfig — cluster access, certificates, the hash key, the app — then
// listens, and drains on a signal.

import type { Server } from 'node:https';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ServeConfig } from '../config/index.js';
import { createApiConfigSource } from '../kube/index.js';
import { createMutator } from '../mutate.js';
import { buildApp } from '../server/app.js';
import { waitForConnectionsToClose } from '../server/drain.js';
import { createLogger } from '../server/logger.js';
import { createAdmissionMetrics } from '../server/metrics.js';
import { readTlsMaterial, type TlsFiles, type TlsMaterial, watchTlsFiles } from '../server/tls.js';
import { lazyCluster, readHashKey, startCertificates } from './cluster.js';
import { UsageError } from './errors.js';
import { startFollow } from './follow.js';

export async function serve(config: ServeConfig): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, process.stdout.isTTY === true);
  const cluster = lazyCluster(logger);
  const selfManaged =
    config.selfManaged && (await startCertificates(config.selfManaged, cluster, logger));
  const hashKey = await readHashKey(config.hashKeyFile);
  const tlsFiles = { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile };
  const tls = await readTlsMaterial(tlsFiles).catch((error: Error) => {
    throw new UsageError(error.message);
  });
  const connection = await cluster.connection();
  const metrics = createAdmissionMetrics();
  if (config.follow) {
    logger.warn(
      {},
      'serve --follow (CONFIGHASH_FOLLOW) is deprecated: run `confighash follow` in a Deployment of its own, so that the serving pods need no list, watch or patch (docs/install.md "Follow mode"); following here meanwhile',
    );
  }
  const follow =
    config.follow &&
    startFollow(
      { ...config.follow, kinds: config.kinds },
      await cluster.credentials(),
      hashKey,
      metrics.registry,
      logger,
    );
  const readiness = { ready: false, isReady: () => readiness.ready };
  const app = buildApp({
    mutator: createMutator({
      configSource: createApiConfigSource(connection),
      hashKey,
      kinds: config.kinds,
    }),
    metrics,
    logger,
    readiness,
    tls,
  });
  await app.listen({ port: config.port, host: config.host });
  const stopTlsWatch = watchServingCertificate(
    app,
    tlsFiles,
    tls,
    config.tlsReloadIntervalMs,
    logger,
  );
  readiness.ready = true;
  logger.info(
    { port: config.port, host: config.host, apiServer: connection.server.origin },
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
    connection.close();
  });
}

/** The serving certificate and key, reloaded in place when their files change. */
function watchServingCertificate(
  app: FastifyInstance,
  files: TlsFiles,
  tls: TlsMaterial,
  intervalMs: number,
  logger: Logger,
): () => void {
  return watchTlsFiles(app.server as unknown as Server, files, tls, intervalMs, {
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
