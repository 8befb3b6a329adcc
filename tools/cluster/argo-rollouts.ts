// Real Argo Rollouts beside a cluster: its five CRDs and its controller, built
// from Go modules (tools/build-argo-rollouts.sh) and run as a process of this
// host against the cluster's kubeconfig — one replica, no leader election, its
// metrics and healthz servers on free ports. Argo Rollouts' dashboard and
// notifications are not run: nothing here depends on them.

import { join } from 'node:path';
import { type ControllerOptions, installCrds, startController } from './controllers.js';
import { freePort } from './ports.js';
import type { ManagedProcess } from './processes.js';
import { REPO_ROOT } from './repo.js';
import { runScript } from './scripts.js';

const BUILD_SCRIPT = join(REPO_ROOT, 'tools/build-argo-rollouts.sh');
const CRDS_SCRIPT = join(REPO_ROOT, 'tools/crds.sh');
const NAME = 'argo-rollouts-controller';

/** The CRDs whose informers the controller waits on before it starts (files of tools/crds.sh). */
const CRD_FILES = [
  'rollouts.yaml',
  'analysisruns.yaml',
  'analysistemplates.yaml',
  'clusteranalysistemplates.yaml',
  'experiments.yaml',
] as const;

/** What upstream's Manager logs once its caches are synced and its workers run. */
const STARTED = 'Started controller';

export interface ArgoRollouts {
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

/** Builds the controller once (minutes, cold) or finds it; returns the binary's directory. */
export function ensureArgoRolloutsBinary(log: (line: string) => void = () => {}): Promise<string> {
  return runScript(BUILD_SCRIPT, 'building Argo Rollouts', { log });
}

/** Installs Argo Rollouts' CRDs and starts its controller. */
export async function startArgoRollouts(options: ControllerOptions): Promise<ArgoRollouts> {
  const log = options.log ?? (() => {});
  const bin = await ensureArgoRolloutsBinary(log);
  const crds = await runScript(CRDS_SCRIPT, 'copying the CRDs', { log });
  await installCrds(
    options.kubectl,
    CRD_FILES.map((file) => join(crds, file)),
  );
  log(`starting ${NAME}`);
  const process = await startController(
    NAME,
    join(bin, NAME),
    [
      `--kubeconfig=${options.kubeconfig}`,
      `--metrics-port=${await freePort()}`,
      `--healthz-port=${await freePort()}`,
    ],
    options.dir,
    STARTED,
  );
  return { process, stop: () => process.stop() };
}
