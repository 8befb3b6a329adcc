// Real cert-manager beside a cluster: its CRDs, its controller and its
// cainjector, built from Go modules (tools/build-cert-manager.sh) and run as
// processes of this host against the cluster's kubeconfig — one replica each,
// no leader election. cert-manager's own admission webhook is not run: it only
// validates and defaults cert-manager's objects, and nothing here depends on that.

import { join } from 'node:path';
import { type ControllerOptions, installCrds, startController } from './controllers.js';
import type { ManagedProcess } from './processes.js';
import { REPO_ROOT } from './repo.js';
import { runScript } from './scripts.js';

const BUILD_SCRIPT = join(REPO_ROOT, 'tools/build-cert-manager.sh');

/** The lines each process logs once its controllers run (tools/cert-manager). */
const STARTED = {
  controller: 'controllers started',
  cainjector: 'Starting workers',
} as const;

export interface CertManager {
  readonly processes: readonly ManagedProcess[];
  stop(): Promise<void>;
}

/** Builds cert-manager once (minutes, cold) or finds it; returns the binaries' directory. */
export function ensureCertManagerBinaries(log: (line: string) => void = () => {}): Promise<string> {
  return runScript(BUILD_SCRIPT, 'building cert-manager', { log });
}

/** Installs cert-manager's CRDs and starts its controller and cainjector. */
export async function startCertManager(options: ControllerOptions): Promise<CertManager> {
  const log = options.log ?? (() => {});
  const bin = await ensureCertManagerBinaries(log);
  await installCrds(options.kubectl, [join(bin, 'crds.yaml')]);
  const processes: ManagedProcess[] = [];
  const stop = async () => {
    for (const process of [...processes].reverse()) await process.stop();
  };
  try {
    for (const component of ['controller', 'cainjector'] as const) {
      const name = `cert-manager-${component}`;
      log(`starting ${name}`);
      processes.push(
        await startController(
          name,
          join(bin, name),
          [`--kubeconfig=${options.kubeconfig}`, '--v=2'],
          options.dir,
          STARTED[component],
        ),
      );
    }
    return { processes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
