import { defineConfig } from 'vitest/config';

// Three suites, each run on its own (package.json): `fast` (unit and integration, files in
// parallel), `e2e` (one control plane for the suite) and `node` (one real node for the suite).
// The shared clusters are why e2e and node files run one at a time: each file finds the
// cluster as the one before it left it, and puts it back (test/support/cluster-state.ts).
export default defineConfig({
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
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          globalSetup: ['test/node/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
        },
      },
    ],
  },
});
