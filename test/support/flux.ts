// One Flux reconcile, for real: tools/flux-apply applies a directory of manifests
// with Flux's apply library (fluxcd/pkg/ssa) the way kustomize-controller does,
// and reports what it did to each object.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runScript } from '../../tools/cluster/scripts.js';

const execFileAsync = promisify(execFile);

/** What ApplyAllStaged did to one object: created, configured, unchanged, ... */
export interface FluxChange {
  readonly subject: string;
  readonly action: string;
}

let binary: Promise<string> | undefined;

/** Builds tools/flux-apply once per process (minutes when the Go caches are cold); its path. */
function fluxApply(): Promise<string> {
  binary ??= runScript('tools/build-flux-apply.sh', 'building tools/flux-apply').then((dir) =>
    join(dir, 'flux-apply'),
  );
  return binary;
}

/** One reconcile of `dir`; the change set, subject by subject (`Kind/namespace/name`). */
export async function fluxReconcile(kubeconfig: string, dir: string): Promise<Map<string, string>> {
  const { stdout } = await execFileAsync(await fluxApply(), [
    `--kubeconfig=${kubeconfig}`,
    `--dir=${dir}`,
  ]).catch((error: Error & { stderr?: string }) => {
    throw new Error(`flux-apply ${dir} failed: ${error.stderr?.trim() ?? error.message}`);
  });
  const changes = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FluxChange);
  return new Map(changes.map((change) => [change.subject, change.action]));
}
