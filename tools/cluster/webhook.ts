// Runs the confighash webhook from the current source beside a control plane
// and registers it the way docs/design.md §8 says: the manifests' own
// MutatingWebhookConfiguration with `clientConfig.url` on 127.0.0.1 and the
// dev CA as caBundle.

import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { confighashNodeArgs } from './confighash-command.js';
import { httpRequest } from './http.js';
import type { Kubectl } from './kubectl.js';
import { freePort } from './ports.js';
import { type ManagedProcess, startProcess, waitUntilReady } from './processes.js';
import { REPO_ROOT } from './repo.js';

const WEBHOOK_MANIFEST = join(REPO_ROOT, 'manifests/base/mutatingwebhookconfiguration.yaml');

export interface LocalWebhook {
  readonly url: string;
  readonly port: number;
  readonly certsDir: string;
  process: ManagedProcess;
  /** Stops the process (registration stays: failurePolicy Ignore must carry writes). */
  stop(): Promise<void>;
  /** Starts it again on the same port and certificates. */
  restart(): Promise<void>;
}

export interface WebhookOptions {
  readonly dir: string;
  readonly kubeconfig: string;
  readonly extraArgs?: readonly string[];
  readonly log?: (line: string) => void;
  /** Another webhook's certificates and hash key, to run a second replica beside it. */
  readonly shareCertsWith?: LocalWebhook;
  /** Where the hash key comes from, instead of `--hash-key-file` in the certificates' directory. */
  readonly hashKeyArgs?: readonly string[];
  /** Names the log file (`<name>.log`); default `confighash`. */
  readonly name?: string;
  /** The port, when something must name it before the webhook starts; default: a free one. */
  readonly port?: number;
  /** --client-ca-file and --probe-port: readiness is then asked on the probes' port. */
  readonly clientAuth?: { readonly caFile: string; readonly probePort: number };
}

/** Starts the webhook process (from source: confighash-command.ts) and waits until it is ready. */
export async function startLocalWebhook(options: WebhookOptions): Promise<LocalWebhook> {
  const certsDir = options.shareCertsWith?.certsDir ?? join(options.dir, 'webhook-certs');
  if (!options.shareCertsWith) {
    await mkdir(certsDir, { recursive: true });
    await runToCompletion(['dev-certs', '--dir', certsDir], options.dir);
  }
  const port = options.port ?? (await freePort());
  const clientAuthArgs = options.clientAuth
    ? [
        `--client-ca-file=${options.clientAuth.caFile}`,
        `--probe-port=${options.clientAuth.probePort}`,
      ]
    : [];
  const readyPort = options.clientAuth?.probePort ?? port;
  const url = `https://127.0.0.1:${port}/mutate`;
  const start = async () => {
    const process = startProcess(
      'confighash',
      globalThis.process.execPath,
      confighashNodeArgs([
        'serve',
        '--host=127.0.0.1',
        `--port=${port}`,
        `--tls-cert-file=${join(certsDir, 'tls.crt')}`,
        `--tls-key-file=${join(certsDir, 'tls.key')}`,
        ...(options.hashKeyArgs ?? [`--hash-key-file=${join(certsDir, 'hash.key')}`]),
        ...clientAuthArgs,
        ...(options.extraArgs ?? []),
      ]),
      join(options.dir, `${options.name ?? 'confighash'}.log`),
      {
        cwd: REPO_ROOT,
        env: {
          ...globalThis.process.env,
          KUBECONFIG: options.kubeconfig,
          CONFIGHASH_LOG_LEVEL: 'debug',
        },
      },
    );
    const ca = await readFile(join(certsDir, 'ca.crt'), 'utf8');
    await waitUntilReady(process, () => readyzOk(readyPort, ca));
    return process;
  };
  const webhook: LocalWebhook = {
    url,
    port,
    certsDir,
    process: await start(),
    stop: () => webhook.process.stop(),
    async restart() {
      webhook.process = await start();
    },
  };
  options.log?.(`confighash webhook listening on ${url}`);
  return webhook;
}

export interface LocalFollower {
  /** Its plain-HTTP port: /healthz, /readyz, /metrics. */
  readonly port: number;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * `confighash follow` from this source, with the hash key of `webhook` (as the follow
 * Deployment shares the webhook's), until its /readyz answers.
 */
export async function startLocalFollower(
  options: Omit<WebhookOptions, 'shareCertsWith'> & { readonly webhook: LocalWebhook },
): Promise<LocalFollower> {
  const port = await freePort();
  const process = startProcess(
    'confighash follow',
    globalThis.process.execPath,
    confighashNodeArgs([
      'follow',
      '--host=127.0.0.1',
      `--port=${port}`,
      `--hash-key-file=${join(options.webhook.certsDir, 'hash.key')}`,
      ...(options.extraArgs ?? []),
    ]),
    join(options.dir, `${options.name ?? 'confighash-follow'}.log`),
    {
      cwd: REPO_ROOT,
      env: {
        ...globalThis.process.env,
        KUBECONFIG: options.kubeconfig,
        CONFIGHASH_LOG_LEVEL: 'debug',
      },
    },
  );
  await waitUntilReady(process, () =>
    httpRequest(`http://127.0.0.1:${port}/readyz`, { timeoutMs: 1000 }).then(
      (response) => response.status === 200,
      () => false,
    ),
  );
  options.log?.(`confighash follow ready on port ${port}`);
  return { port, process, stop: () => process.stop() };
}

/**
 * The webhook from this source beside `host` (a control plane, or a test file's share of one),
 * registered against it, and with `followArgs` a `confighash follow` beside it with the same
 * hash key: `stop()` stops them, then the host. `started`: the webhook, started already (it is
 * then registered, and stopped with the rest). When starting or registering fails, what
 * started and the host are stopped before the error is thrown.
 */
export async function withRegisteredWebhook<Host extends { stop(): Promise<void> }>(
  host: Host,
  kubectl: Kubectl,
  options: WebhookOptions & {
    readonly followArgs?: readonly string[];
    readonly started?: LocalWebhook;
  },
): Promise<Host & { readonly webhook: LocalWebhook }> {
  let webhook: LocalWebhook | undefined = options.started;
  let follower: LocalFollower | undefined;
  const stopStarted = async () => {
    await follower?.stop();
    await webhook?.stop();
  };
  try {
    webhook ??= await startLocalWebhook(options);
    await registerLocalWebhook(kubectl, webhook);
    if (options.followArgs) {
      follower = await startLocalFollower({
        dir: options.dir,
        kubeconfig: options.kubeconfig,
        webhook,
        extraArgs: options.followArgs,
        ...(options.log ? { log: options.log } : {}),
      });
    }
  } catch (error) {
    await stopStarted();
    await host.stop();
    throw error;
  }
  return {
    ...host,
    webhook,
    async stop() {
      await stopStarted();
      await host.stop();
    },
  };
}

/** Applies the manifests' MutatingWebhookConfiguration, pointed at a local URL. */
export async function registerLocalWebhook(kubectl: Kubectl, webhook: LocalWebhook): Promise<void> {
  const manifest = load(await readFile(WEBHOOK_MANIFEST, 'utf8')) as {
    webhooks: { clientConfig: unknown }[];
  };
  const caBundle = (await readFile(join(webhook.certsDir, 'ca.crt'))).toString('base64');
  for (const entry of manifest.webhooks) entry.clientConfig = { url: webhook.url, caBundle };
  const result = await kubectl(['apply', '--server-side', '-f', '-'], dump(manifest));
  if (result.code !== 0) throw new Error(`registering the webhook failed: ${result.stderr}`);
}

function readyzOk(port: number, ca: string): Promise<boolean> {
  return httpRequest(`https://127.0.0.1:${port}/readyz`, { ca, timeoutMs: 1000 }).then(
    (response) => response.status === 200,
    () => false,
  );
}

async function runToCompletion(args: readonly string[], dir: string): Promise<void> {
  const managed = startProcess(
    'confighash dev-certs',
    process.execPath,
    confighashNodeArgs(args),
    join(dir, 'dev-certs.log'),
    { cwd: REPO_ROOT },
  );
  const code = await managed.exited;
  if (code !== 0) throw new Error(`confighash ${args.join(' ')} failed; see ${managed.logFile}`);
}
