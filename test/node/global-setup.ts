// The node suite's nodes (each a control plane, containerd, a kubelet, the images built from
// this source), started once for all its files (vitest globalSetup): one per worker
// (vitest.config.ts, maxWorkers: one, for the load rows' sake), each node serving one file at
// a time (test/support/per-worker.ts). A file installs confighash as it needs and
// removes what it made when it ends (test/support/node.ts). The teardown file starts nodes of
// its own: what it proves is about runs that end.

import type { TestProject } from 'vitest/node';
import { buildNodeImages } from '../../tools/cluster/images.js';
import { startNodeWithImages } from '../../tools/cluster/main.js';
import type { NodeAccess } from '../../tools/cluster/node.js';
import { startOnePerWorker, verboseLog } from '../support/per-worker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One node per worker: VITEST_POOL_ID n (1-based) uses the n-th. */
    nodes: NodeAccess[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = verboseLog();
  // One build of the images for every node: two builds at once would write the same archive.
  const images = await buildNodeImages(log);
  const nodes = await startOnePerWorker(
    project,
    'node: nodes',
    () => startNodeWithImages(images, log),
    (cluster) => cluster.node.access,
  );
  project.provide('nodes', [...nodes.access]);
  return nodes.stop;
}
