// The e2e suite's control planes, started once for all its files (vitest globalSetup): one
// per worker (vitest.config.ts, maxWorkers), so that two files run side by side while each
// control plane still serves one file at a time. A file runs its own webhook against its
// worker's control plane, in namespaces of its own, and removes what it made when it ends
// (test/support/e2e.ts). Files that need an apiserver started differently start their own
// and say why.

import type { TestProject } from 'vitest/node';
import { startControlPlane } from '../../tools/cluster/control-plane.js';
import type { ClusterAccess } from '../support/e2e.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One control plane per worker: VITEST_POOL_ID n (1-based) uses the n-th. */
    controlPlanes: ClusterAccess[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = process.env.CONFIGHASH_E2E_VERBOSE
    ? (line: string) => console.error(line)
    : undefined;
  const started = Date.now();
  const workers = Number(project.config.maxWorkers) || 1;
  const controlPlanes = await Promise.all(
    Array.from({ length: workers }, () => startControlPlane({ log })),
  );
  console.info(
    `e2e: ${workers} control plane(s), one per worker, ready in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  project.provide(
    'controlPlanes',
    controlPlanes.map(({ dir, kubeconfig, componentKubeconfig, server, caCert }) => ({
      dir,
      kubeconfig,
      componentKubeconfig,
      server,
      caCert,
    })),
  );
  return async () => {
    await Promise.all(controlPlanes.map((controlPlane) => controlPlane.stop()));
  };
}
