// Clusters shared the way the e2e and node suites share them: one per vitest worker, started
// once by the suite's globalSetup and handed to the workers as plain data. Files of one worker
// run one after another, so a cluster serves one file at a time and a file's clean-up can go by
// difference (cluster-state.ts).

import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';

export interface PerWorker<Access> {
  readonly access: readonly Access[];
  stop(): Promise<void>;
}

/** Starts one cluster per worker of `project`, side by side; says how long it took. */
export async function startOnePerWorker<Cluster extends { stop(): Promise<void> }, Access>(
  project: TestProject,
  what: string,
  start: () => Promise<Cluster>,
  accessOf: (cluster: Cluster) => Access,
): Promise<PerWorker<Access>> {
  const started = Date.now();
  const workers = Number(project.config.maxWorkers) || 1;
  const clusters = await Promise.all(Array.from({ length: workers }, start));
  console.info(
    `${what}: ${workers}, one per worker, ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return {
    access: clusters.map(accessOf),
    stop: async () => {
      await Promise.all(clusters.map((cluster) => cluster.stop()));
    },
  };
}

/** This worker's cluster among those the suite provided under `key`. */
export function thisWorkersCluster<Key extends 'controlPlanes' | 'nodes'>(
  key: Key,
): ReturnType<typeof inject<Key>>[number] {
  const clusters = inject(key);
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  return clusters[(worker - 1) % clusters.length]!;
}

/** The progress lines of the harness, when CONFIGHASH_E2E_VERBOSE asks for them. */
export function verboseLog(): ((line: string) => void) | undefined {
  return process.env.CONFIGHASH_E2E_VERBOSE ? (line: string) => console.error(line) : undefined;
}
