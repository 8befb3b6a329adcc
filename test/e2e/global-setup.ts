// The e2e suite's control planes, started once for all its files (vitest globalSetup): one
// per worker (vitest.config.ts, maxWorkers), so that two files run side by side while each
// control plane serves one file at a time (test/support/per-worker.ts). A file runs its own
// webhook against its worker's control plane, in namespaces of its own, and removes what it
// made when it ends (test/support/e2e.ts). Files that need an apiserver started differently
// start their own and say why.

import type { TestProject } from 'vitest/node';
import { startControlPlane } from '../../tools/cluster/control-plane.js';
import type { ClusterAccess } from '../support/e2e.js';
import { startOnePerWorker, verboseLog } from '../support/per-worker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One control plane per worker: VITEST_POOL_ID n (1-based) uses the n-th. */
    controlPlanes: ClusterAccess[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = verboseLog();
  const controlPlanes = await startOnePerWorker(
    project,
    'e2e: control planes',
    () => startControlPlane({ log }),
    ({ dir, kubeconfig, componentKubeconfig, server, caCert }) => ({
      dir,
      kubeconfig,
      componentKubeconfig,
      server,
      caCert,
    }),
  );
  project.provide('controlPlanes', [...controlPlanes.access]);
  return controlPlanes.stop;
}
