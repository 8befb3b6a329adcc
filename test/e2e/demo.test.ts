// The README's quick start: `npm run demo` on the local control plane. The demo
// checks each claim it narrates (tools/demo.ts) and exits non-zero on the first
// that does not hold, so running it here keeps the quick start true.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { REPO_ROOT as REPO } from '../../tools/cluster/repo.js';

it('npm run demo tells its story and every check in it holds', async () => {
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'demo'], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: '1' },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 300_000,
  });
  const checks = stdout.split('\n').filter((line) => line.trimStart().startsWith('✓'));
  expect(checks.length).toBeGreaterThanOrEqual(6);
  expect(stdout).toContain('secret/web-secret changed; rolling');
  expect(stdout).toMatch(/▶ Done: config changed → template changed → rollout/);
}, 320_000);
