// The node suite's one node (control plane, containerd, kubelet, the images built from this
// source), started once for all its files (vitest globalSetup). Each file installs confighash
// as it needs and removes what it made when it ends (test/support/node.ts). The teardown file
// starts nodes of its own: what it proves is about runs that end.

import type { TestProject } from 'vitest/node';
import { startNodeCluster } from '../../tools/cluster/main.js';
import type { NodeAccess } from '../../tools/cluster/node.js';

declare module 'vitest' {
  export interface ProvidedContext {
    node: NodeAccess;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = process.env.CONFIGHASH_E2E_VERBOSE
    ? (line: string) => console.error(line)
    : undefined;
  const started = Date.now();
  const cluster = await startNodeCluster(log);
  console.info(
    `node: one node for the suite, Ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${cluster.dir})`,
  );
  project.provide('node', cluster.node.access);
  return () => cluster.stop();
}
