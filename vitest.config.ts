import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // e2e files share one control plane per file and are slow to start; unit and
    // integration files are fast. Both run in the same command.
    testTimeout: 30_000,
    hookTimeout: 600_000,
    pool: 'forks',
    coverage: { provider: 'v8', include: ['src/**'] },
  },
});
