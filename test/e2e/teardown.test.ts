// The control plane leaves no process behind, even when the process that
// started it is killed outright (SIGKILL: no exit handler of its own runs).

import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { REPO_ROOT as REPO } from '../../tools/cluster/repo.js';
import { waitUntil } from '../support/e2e.js';
import { processesMentioning } from '../support/process.js';

it('SIGKILL of `npm run cluster` takes etcd, kube-apiserver, kube-controller-manager and the webhook with it', async () => {
  const cluster = spawn(process.execPath, ['--import', 'tsx', 'tools/cluster/main.ts'], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  cluster.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await waitUntil(
    async () => stdout.includes('export KUBECONFIG='),
    'the cluster to be ready',
    120_000,
  );
  const dir = /export KUBECONFIG=(.*)\/kubeconfig/.exec(stdout)![1]!;
  const children = await processesMentioning(dir);
  // etcd, kube-apiserver, kube-controller-manager and the webhook all name the run's directory.
  expect(children.length).toBeGreaterThanOrEqual(4);

  cluster.kill('SIGKILL');
  await waitUntil(
    async () => (await processesMentioning(dir)).length === 0,
    'every child to be gone',
    20_000,
  );
  // Nobody was left to remove the run's directory.
  await rm(dir, { recursive: true, force: true });
});
