// What the real controllers run beside a cluster (cert-manager, Argo Rollouts)
// share: their CRDs installed and Established before anything starts, and each
// controller a process of this host, ready once its own log says its workers run.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Kubectl, strictKubectl } from './kubectl.js';
import { type ManagedProcess, startProcess, waitUntilReady } from './processes.js';

export interface ControllerOptions {
  readonly kubeconfig: string;
  readonly kubectl: Kubectl;
  /** Where the processes' logs go. */
  readonly dir: string;
  readonly log?: (line: string) => void;
}

/** Applies CRD files server-side and waits until the apiserver serves every one. */
export async function installCrds(kubectl: Kubectl, files: readonly string[]): Promise<void> {
  const k = strictKubectl(kubectl);
  const args = files.flatMap((file) => ['-f', file]);
  await k(['apply', '--server-side', ...args]);
  await k(['wait', '--for=condition=Established', '--timeout=60s', ...args]);
}

/**
 * Starts `binary` as `name`, logging to `<dir>/<name>.log`, and resolves once that
 * log contains `started`; a controller that exits first is stopped and fails.
 */
export async function startController(
  name: string,
  binary: string,
  args: readonly string[],
  dir: string,
  started: string,
): Promise<ManagedProcess> {
  const process = startProcess(name, binary, args, join(dir, `${name}.log`));
  try {
    await waitUntilReady(process, async () =>
      (await readFile(process.logFile, 'utf8')).includes(started),
    );
    return process;
  } catch (error) {
    await process.stop();
    throw error;
  }
}
