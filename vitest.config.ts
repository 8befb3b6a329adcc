import { homedir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Three suites, each run on its own (package.json): `fast` (unit and integration, files in
// parallel), `e2e` (a control plane per worker, started once) and `node` (one real node,
// likewise). Files that share a cluster run one after another on it: each finds the cluster
// as the one before it left it, and puts it back (test/support/cluster-state.ts).
// Every suite starts confighash from src/ compiled once for the run, not through tsx on each
// start (test/support/compiled-source.ts).
const COMPILED_SOURCE = 'test/support/compiled-source.ts';

export default defineConfig({
  // Vitest keeps each file's last duration (and whether it failed) here, outside the repository
  // like the builds (tools/build-*.sh), so that a run from a clean clone starts the longest files
  // first and two workers finish together. Without it vitest starts the largest files first: the
  // e2e files took 1,072 s, 536 s a worker, and the suite 572 s (3 December 2026).
  cacheDir: join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'confighash', 'vitest'),
  test: {
    testTimeout: 30_000,
    hookTimeout: 600_000,
    pool: 'forks',
    coverage: { provider: 'v8', include: ['src/**'] },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          globalSetup: [COMPILED_SOURCE],
          // Two at a time (the default on two cores is one): the integration files wait on
          // child processes and timers (a body trickled for 10 s) as much as they compute —
          // measured 65 s against 88 s.
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: [COMPILED_SOURCE, 'test/e2e/global-setup.ts'],
          // Three files at a time, each on a control plane of its own: the files wait (for
          // controllers, debounces, renewals) as much as they compute. With two, the cores were
          // 30 % idle through the phase and it took 501 s; with three, 7 % idle and 457 s
          // (4 December 2026, one run each, warm).
          maxWorkers: 3,
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          globalSetup: [COMPILED_SOURCE, 'test/node/global-setup.ts'],
          // One file at a time, on one node: the load rows (writes through a real node
          // while a replica goes) need both cores — with a second node beside them, a
          // replica's deletion once cost a correct build 4 writes their hash (the apiserver
          // fell open), which a load row must never see.
          maxWorkers: 1,
          testTimeout: 300_000,
        },
      },
    ],
  },
});
