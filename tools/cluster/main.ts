// `npm run cluster`: a local control plane with the webhook from the current
// source registered, until SIGINT/SIGTERM. Prints `export KUBECONFIG=...` when ready.

import { type ControlPlane, startControlPlane } from './control-plane.js';
import { kubectlFor } from './kubectl.js';
import { type LocalWebhook, registerLocalWebhook, startLocalWebhook } from './webhook.js';

export interface LocalCluster {
  readonly controlPlane: ControlPlane;
  readonly webhook: LocalWebhook;
  readonly kubeconfig: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** Follow mode on, with a short debounce so that a person watching sees it act. */
export const LOCAL_FOLLOW_ARGS = ['--follow', '--lease-namespace=default', '--follow-debounce=2s'];

/** A control plane with the webhook from this source registered against it. */
export async function startLocalCluster(
  log?: (line: string) => void,
  webhookArgs: readonly string[] = LOCAL_FOLLOW_ARGS,
): Promise<LocalCluster> {
  const controlPlane = await startControlPlane({ log });
  try {
    const webhook = await startLocalWebhook({
      dir: controlPlane.dir,
      kubeconfig: controlPlane.kubeconfig,
      extraArgs: webhookArgs,
      log,
    });
    await registerLocalWebhook(kubectlFor(controlPlane.kubeconfig), webhook);
    return {
      controlPlane,
      webhook,
      kubeconfig: controlPlane.kubeconfig,
      dir: controlPlane.dir,
      async stop() {
        await webhook.stop();
        await controlPlane.stop();
      },
    };
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
}

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const cluster = await startLocalCluster(log);
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
