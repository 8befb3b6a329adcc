#!/usr/bin/env node
// The composition root: the only place that reads flags and the environment,
// opens files, builds real adapters, listens and handles signals.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:https';
import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  type FollowConfig,
  type ManifestInput,
  type ParseResult,
  parseDevCertsConfig,
  parseExplainConfig,
  parsePlanConfig,
  parseServeConfig,
  type ServeConfig,
  usage,
} from './config/index.js';
import { createEvaluator } from './evaluate.js';
import { createFollowMetrics, type FollowMode, startFollowMode } from './follow/index.js';
import {
  type ApiConnection,
  type ClusterCredentials,
  checkReachable,
  connectToCluster,
  createApiConfigSource,
  createCaBundleTarget,
  createExplainCluster,
  createFollowApi,
  createLeaseStore,
  createSecretStore,
  KubeconfigError,
  loadCredentials,
} from './kube/index.js';
import { createMutator } from './mutate.js';
import { buildApp } from './server/app.js';
import { waitForConnectionsToClose } from './server/drain.js';
import { createLogger } from './server/logger.js';
import { createAdmissionMetrics } from './server/metrics.js';
import { readTlsMaterial, watchTlsFiles } from './server/tls.js';

export const MIN_HASH_KEY_BYTES = 32;

/** A mistake the user can fix: printed as one line, exit code 2, no stack trace. */
class UsageError extends Error {}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve(unwrap(parseServeConfig(rest, process.env)));
      return 0;
    case 'dev-certs':
      await devCerts(rest);
      return 0;
    case 'plan':
      return plan(rest).catch(asUsageError);
    case 'explain':
      return explain(rest).catch(asUsageError);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${usage()}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(
        `unknown command '${command}' (commands: serve, dev-certs, plan, explain; see --help)`,
      );
  }
}

function unwrap<T>(result: ParseResult<T>): T {
  if (result.ok) return result.config;
  if ('help' in result) {
    process.stdout.write(`${result.help}\n`);
    process.exit(0);
  }
  throw new UsageError(result.error);
}

/**
 * plan and explain exit 1 for "something rolls": every failure of theirs is a
 * one-line mistake with exit 2, never an exit 1 that reads as an answer.
 */
function asUsageError(error: unknown): never {
  if (error instanceof UsageError) throw error;
  const cause = error as Error & { code?: string };
  throw new UsageError(String(cause.message ?? cause).split('\n', 1)[0] ?? String(cause.code));
}

const CLI_TIMEOUT_MS = 60_000;

/** `confighash plan`: exit 0 when nothing rolls, 1 when something rolls or cannot be told. */
async function plan(argv: readonly string[]): Promise<number> {
  const config = unwrap(parsePlanConfig(argv));
  const { parseManifests, planChanges, planExitCode, renderPlan, renderPlanJson } = await import(
    './plan/index.js'
  );
  const text = await readManifests(config.input);
  const credentials = config.offline ? undefined : await loadClusterCredentials();
  const namespace = config.namespace ?? credentials?.current().namespace ?? 'default';
  const parsed = parseManifests(text, namespace, config.kinds);
  if (!parsed.ok) throw new UsageError(parsed.error);
  const connection = credentials && connectToCluster(credentials);
  try {
    if (connection) await checkReachable(connection);
    const cluster = connection && createExplainCluster(connection);
    const result = await planChanges(
      parsed.manifests,
      cluster,
      { clientSide: config.clientSide, kinds: config.kinds },
      AbortSignal.timeout(CLI_TIMEOUT_MS),
    );
    if (config.output === 'json') {
      process.stdout.write(renderPlanJson(result));
      for (const problem of result.problems) process.stderr.write(`confighash: ${problem}\n`);
    } else {
      process.stdout.write(renderPlan(result, { color: useColor() }));
    }
    return planExitCode(result);
  } finally {
    connection?.close();
  }
}

/** `confighash explain KIND/NAME`: exit 0 with the answer, 2 when there is none. */
async function explain(argv: readonly string[]): Promise<number> {
  const config = unwrap(parseExplainConfig(argv));
  const { explainWorkload, renderExplanation, renderExplanationJson } = await import(
    './plan/index.js'
  );
  const credentials = await loadClusterCredentials();
  const namespace = config.namespace ?? credentials.current().namespace ?? 'default';
  const connection = connectToCluster(credentials);
  try {
    await checkReachable(connection);
    const result = await explainWorkload(
      createExplainCluster(connection),
      config.kind,
      namespace,
      config.name,
      AbortSignal.timeout(CLI_TIMEOUT_MS),
    );
    if (!result.ok) throw new UsageError(result.error);
    process.stdout.write(
      config.output === 'json'
        ? renderExplanationJson(result.explanation)
        : renderExplanation(result.explanation, { color: useColor() }),
    );
    return 0;
  } finally {
    connection.close();
  }
}

function useColor(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR;
}

async function readManifests(input: ManifestInput): Promise<string> {
  if (input.from === 'kustomize') return kustomize(input.dir);
  const texts = await Promise.all(
    input.paths.map((path) =>
      (path === '-' ? readStdin() : readFile(path, 'utf8')).catch(
        (error: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot read -f ${path}: ${error.code ?? error.message}`);
        },
      ),
    ),
  );
  return texts.join('\n---\n');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'kubectl',
      ['kustomize', dir],
      { maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const reason = (stderr.trim().split('\n').pop() || error.message).trim();
        reject(new UsageError(`kubectl kustomize ${dir} failed: ${reason}`));
      },
    );
  });
}

async function serve(config: ServeConfig): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, process.stdout.isTTY === true);
  // Loaded when first needed, so that mistakes in files are reported before cluster ones.
  let loading: Promise<ClusterCredentials> | undefined;
  const kube = () => {
    loading ??= loadClusterCredentials((error) =>
      logger.warn(
        { reason: error.message },
        'cluster credentials not refreshed; kept the previous',
      ),
    );
    return loading;
  };
  let connected: ApiConnection | undefined;
  const cluster = async () => {
    const credentials = await kube();
    connected ??= connectToCluster(credentials);
    return connected;
  };
  // --self-managed-certs / --hash-key-secret: the files read below come from Secrets, renewed in place.
  let selfManaged: { stop(): void } | undefined;
  if (config.selfManaged) {
    const api = await cluster();
    // selfsigned and the renewal loop load only here: most installs bring their own certificates.
    const { startSelfManaged } = await import('./certs/self-managed.js');
    selfManaged = await startSelfManaged(config.selfManaged, {
      secrets: createSecretStore(api, config.selfManaged.namespace),
      webhooks: createCaBundleTarget(api),
      log: logger,
    }).catch((error: Error) => {
      throw new UsageError(`self-managed certificates: ${error.message}`);
    });
  }
  const hashKey = await readHashKey(config.hashKeyFile);
  const tlsFiles = { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile };
  const tls = await readTlsMaterial(tlsFiles).catch((error: Error) => {
    throw new UsageError(error.message);
  });
  const connection = await cluster();
  const metrics = createAdmissionMetrics();
  const follow =
    config.follow &&
    (await startFollow(
      { ...config.follow, kinds: config.kinds },
      await kube(),
      hashKey,
      metrics.registry,
      logger,
    ));
  let ready = false;
  const app = buildApp({
    mutator: createMutator({
      configSource: createApiConfigSource(connection),
      hashKey,
      kinds: config.kinds,
    }),
    metrics,
    logger,
    readiness: { isReady: () => ready },
    tls,
  });
  await app.listen({ port: config.port, host: config.host });
  const stopTlsWatch = watchTlsFiles(
    app.server as unknown as Server,
    tlsFiles,
    tls,
    config.tlsReloadIntervalMs,
    {
      onReload: () => logger.info({ certFile: config.tlsCertFile }, 'serving certificate reloaded'),
      onError: (error) =>
        logger.warn({ reason: error.message }, 'serving certificate not reloaded'),
    },
  );
  ready = true;
  logger.info(
    { port: config.port, host: config.host, apiServer: connection.server.origin },
    'ready',
  );

  // The drain takes up to the shutdown timeout; closing after it gets a moment more.
  const closeDelayMs = config.shutdownTimeoutMs + 5_000;
  closeWithGrace({ delay: closeDelayMs }, async ({ signal, err }) => {
    ready = false;
    if (err) logger.error({ err }, 'shutting down after an unexpected error');
    else
      logger.info({ signal }, 'shutting down: answering until the clients close their connections');
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

/** The cluster and credentials client-node finds (KUBECONFIG, ~/.kube/config, in-cluster). */
function loadClusterCredentials(
  onRefreshError?: (error: Error) => void,
): Promise<ClusterCredentials> {
  return loadCredentials({ ...(onRefreshError ? { onRefreshError } : {}) }).catch((error) => {
    throw error instanceof KubeconfigError ? new UsageError(error.message) : error;
  });
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

async function devCerts(argv: readonly string[]): Promise<void> {
  const config = unwrap(parseDevCertsConfig(argv, process.env));
  const { generateCertificateAuthority, generateServingCertificate } = await import(
    './certs/generate.js'
  );
  const authority = await generateCertificateAuthority('confighash development CA', 365);
  const serving = await generateServingCertificate(authority, config.hosts, 365);
  await mkdir(config.dir, { recursive: true });
  const hashKeyPath = join(config.dir, 'hash.key');
  const files: [string, string | Buffer, number][] = [
    [join(config.dir, 'ca.crt'), authority.cert, 0o644],
    [join(config.dir, 'ca.key'), authority.key, 0o600],
    [join(config.dir, 'tls.crt'), serving.cert, 0o644],
    [join(config.dir, 'tls.key'), serving.key, 0o600],
  ];
  for (const [path, content, mode] of files) {
    await writeFile(path, content, { mode });
    await chmod(path, mode);
  }
  // An existing hash key is kept: replacing it would roll every workload once.
  const keyWritten = await writeFile(hashKeyPath, randomBytes(32), {
    mode: 0o600,
    flag: 'wx',
  }).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') return false;
      throw error;
    },
  );
  process.stdout.write(
    `wrote ${config.dir}/{ca.crt,ca.key,tls.crt,tls.key} for ${config.hosts.join(', ')}\n` +
      `${keyWritten ? 'wrote' : 'kept existing'} ${hashKeyPath}\n`,
  );
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`confighash: ${error.message}\n`);
      process.exit(2);
    }
    // System errors (EADDRINUSE, EACCES, ...) are the user's to fix: one line.
    const systemError = error instanceof Error && 'code' in error;
    const text = systemError ? error.message : ((error as Error).stack ?? String(error));
    process.stderr.write(`confighash: ${text}\n`);
    process.exit(1);
  },
);
