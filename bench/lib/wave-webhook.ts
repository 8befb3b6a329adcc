// wave's webhook (wave-k8s/wave 4.5.0, `--enable-webhooks`) beside confighash's,
// for scenario 4 with `--peers` (issue 14). What its source fixes, and so this
// file follows: controller-runtime's webhook server reads tls.crt and tls.key
// from $TMPDIR/k8s-webhook-server/serving-certs (here a certificate the bench CA
// signed), listens on :9443, and the manager's metrics on :8080 — both on every
// interface, with no flag to move them; the bench only calls them on 127.0.0.1.
// wave answers from its informer cache, so it watches its own namespace only
// (`--namespaces`): the other arms' writes are not its events.

import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { httpRequest } from '../../tools/cluster/http.js';
import { waitUntilReady } from '../../tools/cluster/processes.js';
import { startPeerProcess } from './peers.js';
import { checkReview, postReview } from './review.js';

/** The Deployment annotation wave acts on (its value must be "true"). */
export const WAVE_ENABLED = 'wave.pusher.com/update-on-config-change';
/** The pod-template annotation wave's webhook writes. */
export const WAVE_HASH = 'wave.pusher.com/config-hash';

const WEBHOOK_PORT = 9443;
const METRICS_PORT = 8080;
/** controller-runtime's path for a defaulting webhook of apps/v1 Deployments. */
const DEPLOYMENT_PATH = '/mutate-apps-v1-deployment';

export interface WaveWebhook {
  readonly url: string;
  readonly pid: number;
  /** wave's own histogram of its Deployment webhook: seconds and calls so far. */
  reviewTime(): Promise<{ seconds: number; count: number }>;
  stop(): Promise<void>;
}

export interface WaveWebhookOptions {
  readonly binary: string;
  /** Its log and its TMPDIR (where its serving certificate goes). */
  readonly dir: string;
  readonly kubeconfig: string;
  /** The one namespace it watches; the readiness review is for a Deployment in it. */
  readonly namespace: string;
  readonly certs: { readonly ca: string; readonly cert: string; readonly key: string };
  /** An AdmissionReview of an annotated Deployment whose sources exist in `namespace`. */
  readonly readinessReview: string;
}

export async function startWaveWebhook(options: WaveWebhookOptions): Promise<WaveWebhook> {
  await Promise.all([WEBHOOK_PORT, METRICS_PORT].map(assertPortFree));
  const certDir = join(options.dir, 'k8s-webhook-server', 'serving-certs');
  await mkdir(certDir, { recursive: true });
  await writeFile(join(certDir, 'tls.crt'), options.certs.cert);
  await writeFile(join(certDir, 'tls.key'), options.certs.key, { mode: 0o600 });
  const process_ = startPeerProcess(
    { work: options.dir, kubeconfig: options.kubeconfig },
    'wave-webhook',
    options.binary,
    ['--enable-webhooks', `--namespaces=${options.namespace}`],
  );
  const url = `https://127.0.0.1:${WEBHOOK_PORT}${DEPLOYMENT_PATH}`;
  try {
    // Answered at all: its server is up and its cache has synced (a cached read waits for it).
    await waitUntilReady(process_, async () => {
      await postReview(url, options.readinessReview, options.certs.ca);
      return true;
    });
    await checkReview(url, options.readinessReview, options.certs.ca, WAVE_HASH);
  } catch (error) {
    await process_.stop();
    throw error;
  }
  return {
    url,
    pid: process_.child.pid ?? -1,
    reviewTime: async () => webhookLatency(await metricsText(), DEPLOYMENT_PATH),
    stop: () => process_.stop(),
  };
}

/** wave's ports are fixed: a port already taken would send its reviews to someone else. */
function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `port ${port} is taken (${error.code}): wave's webhook (9443) and metrics (8080) ports are fixed in its main.go`,
        ),
      ),
    );
    server.listen(port, () => server.close(() => resolve()));
  });
}

async function metricsText(): Promise<string> {
  const url = `http://127.0.0.1:${METRICS_PORT}/metrics`;
  return (await httpRequest(url, { timeoutMs: 5_000 })).body;
}

/** controller-runtime's `controller_runtime_webhook_latency_seconds` of one webhook path. */
export function webhookLatency(metrics: string, path: string): { seconds: number; count: number } {
  const value = (series: string) => {
    const line = metrics
      .split('\n')
      .find(
        (l) =>
          l.startsWith(`controller_runtime_webhook_latency_seconds_${series}{`) &&
          l.includes(`webhook="${path}"`),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return { seconds: value('sum'), count: value('count') };
}
