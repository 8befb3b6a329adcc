// The e2e suite's one control plane, started once for all its files (vitest globalSetup).
// Each file runs its own webhook against it, in namespaces of its own, and removes what it
// made when it ends (test/support/e2e.ts). Files that need an apiserver started differently
// start their own and say why.

import type { TestProject } from 'vitest/node';
import { startControlPlane } from '../../tools/cluster/control-plane.js';
import type { ClusterAccess } from '../support/e2e.js';

declare module 'vitest' {
  export interface ProvidedContext {
    controlPlane: ClusterAccess;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = process.env.CONFIGHASH_E2E_VERBOSE
    ? (line: string) => console.error(line)
    : undefined;
  const started = Date.now();
  const controlPlane = await startControlPlane({ log });
  console.info(
    `e2e: one control plane for the suite, ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${controlPlane.dir})`,
  );
  const { dir, kubeconfig, componentKubeconfig, server, caCert } = controlPlane;
  project.provide('controlPlane', { dir, kubeconfig, componentKubeconfig, server, caCert });
  return () => controlPlane.stop();
}
