// `npm run cluster`: a local control plane with the webhook from the current
// source registered, until SIGINT/SIGTERM. Prints `export KUBECONFIG=...` when ready.
// `npm run cluster -- --node`: the same control plane with a real node (node.ts),
// the images built from this source imported, and confighash installed from the
// manifests (the default overlay) as a user would.

import { join } from 'node:path';
import { type ControlPlane, startControlPlane } from './control-plane.js';
import { buildNodeImages, manifestImage, type NodeImages } from './images.js';
import { type Kubectl, kubectlFor, strictKubectl } from './kubectl.js';
import { type LocalNode, startLocalNode } from './node.js';
import { REPO_ROOT } from './repo.js';
import { type LocalWebhook, withRegisteredWebhook } from './webhook.js';

const MANIFESTS = join(REPO_ROOT, 'manifests');

export interface LocalCluster {
  readonly controlPlane: ControlPlane;
  readonly webhook: LocalWebhook;
  readonly kubeconfig: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** `confighash follow`'s, with a short debounce so that a person watching sees it act. */
export const LOCAL_FOLLOW_ARGS = ['--lease-namespace=default', '--follow-debounce=2s'];

/**
 * A control plane with the webhook from this source registered against it, and
 * `confighash follow` beside it.
 */
export async function startLocalCluster(log?: (line: string) => void): Promise<LocalCluster> {
  const controlPlane = await startControlPlane({ log });
  const host = {
    controlPlane,
    kubeconfig: controlPlane.kubeconfig,
    dir: controlPlane.dir,
    stop: () => controlPlane.stop(),
  };
  return withRegisteredWebhook(host, kubectlFor(controlPlane.kubeconfig), {
    dir: controlPlane.dir,
    kubeconfig: controlPlane.kubeconfig,
    followArgs: LOCAL_FOLLOW_ARGS,
    log,
  });
}

export interface NodeCluster {
  readonly node: LocalNode;
  readonly images: NodeImages;
  readonly kubeconfig: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** A control plane and a node running the images built from this source. */
export async function startNodeCluster(log?: (line: string) => void): Promise<NodeCluster> {
  return startNodeWithImages(await buildNodeImages(log), log);
}

/** A control plane and a node running images already built (several nodes share one build). */
export async function startNodeWithImages(
  images: NodeImages,
  log?: (line: string) => void,
): Promise<NodeCluster> {
  const node = await startLocalNode({
    log,
    images: [images.testImages.archive, images.confighash.archive],
  });
  try {
    // The manifests run unchanged: their image name points at the one just built.
    await node.ctr(['images', 'tag', '--force', images.confighash.refs[0]!, await manifestImage()]);
  } catch (error) {
    await node.stop();
    throw error;
  }
  return { node, images, kubeconfig: node.kubeconfig, dir: node.dir, stop: () => node.stop() };
}

/** `kubectl apply --server-side -k manifests/overlays/NAME`, then waits for the rollout. */
export async function installOverlay(kubectl: Kubectl, overlay: string): Promise<void> {
  const k = strictKubectl(kubectl);
  await k(['apply', '--server-side', '-k', `${MANIFESTS}/overlays/${overlay}`]);
  await waitForRollouts(kubectl);
}

/** Waits until every Deployment of confighash-system has rolled out (the follow overlay has two). */
export async function waitForRollouts(kubectl: Kubectl): Promise<void> {
  const k = strictKubectl(kubectl);
  const names = (await k(['-n', 'confighash-system', 'get', 'deployments', '-o', 'name']))
    .split('\n')
    .filter(Boolean);
  for (const name of names) {
    await k(['-n', 'confighash-system', 'rollout', 'status', name, '--timeout=240s']);
  }
}

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const withNode = process.argv.includes('--node');
  const started = Date.now();
  const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
  const cluster = withNode ? await startNodeCluster(log) : await startLocalCluster(log);
  log(`cluster ready in ${seconds(started)}`);
  if (withNode) {
    const installing = Date.now();
    log('installing confighash: kubectl apply --server-side -k manifests/overlays/default');
    try {
      await installOverlay(kubectlFor(cluster.kubeconfig), 'default');
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    log(`confighash 2/2 Ready on the node ${seconds(installing)} after the apply`);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping the cluster`);
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  log(`logs: ${cluster.dir}/*.log — press Ctrl-C to stop`);
  process.stdout.write(`export KUBECONFIG=${cluster.kubeconfig}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: Error) => {
    process.stderr.write(`cluster: ${error.message}\n`);
    process.exit(1);
  });
}
