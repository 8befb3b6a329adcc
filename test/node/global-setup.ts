// The node suite's nodes (each a control plane, containerd, a kubelet, the images built from
// this source), started once for all its files (vitest globalSetup): one per worker
// (vitest.config.ts, maxWorkers), so that two files run side by side while each node still
// serves one file at a time. A file installs confighash as it needs and removes what it made
// when it ends (test/support/node.ts). The teardown file starts nodes of its own: what it
// proves is about runs that end.

import type { TestProject } from 'vitest/node';
import { buildNodeImages } from '../../tools/cluster/images.js';
import { startNodeWithImages } from '../../tools/cluster/main.js';
import type { NodeAccess } from '../../tools/cluster/node.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One node per worker: VITEST_POOL_ID n (1-based) uses the n-th. */
    nodes: NodeAccess[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = process.env.CONFIGHASH_E2E_VERBOSE
    ? (line: string) => console.error(line)
    : undefined;
  const started = Date.now();
  const workers = Number(project.config.maxWorkers) || 1;
  // One build of the images for every node: two builds at once would write the same archive.
  const images = await buildNodeImages(log);
  const clusters = await Promise.all(
    Array.from({ length: workers }, () => startNodeWithImages(images, log)),
  );
  console.info(
    `node: ${workers} node(s), one per worker, Ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  project.provide(
    'nodes',
    clusters.map((cluster) => cluster.node.access),
  );
  return async () => {
    await Promise.all(clusters.map((cluster) => cluster.stop()));
  };
}
