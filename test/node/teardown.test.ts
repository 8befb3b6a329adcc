// A node run leaves nothing in the host, however it ends, and two runs never meet.
// `npm run cluster -- --node` is SIGKILLed (no handler of its own runs) while a
// second run is up: every process of the first goes with its namespaces, the
// host's network links, routes and mounts are as before, the second run keeps
// working, and the next start removes what the kernel could not (the first
// run's directory and cgroups).

import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { outputOf } from '../../tools/cluster/child-output.js';
import { kubectlFor, strictKubectl } from '../../tools/cluster/kubectl.js';
import { removeStaleRuns, startLocalNode } from '../../tools/cluster/node.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { waitUntil } from '../support/e2e.js';
import { processesMentioning } from '../support/process.js';

const execText = async (command: string, args: readonly string[]) =>
  (await outputOf(spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] }))).stdout;

/** What a run could leave in the host's network: links, addresses, routes, rules. */
const hostNetwork = async () =>
  [
    await execText('ip', ['-o', 'link', 'show']),
    await execText('ip', ['-o', 'addr', 'show']),
    await execText('ip', ['route', 'show', 'table', 'all']),
  ]
    .join('\n')
    // Counters and link timers change on their own.
    .replace(/valid_lft \S+ preferred_lft \S+/g, '');

const mountsMentioning = async (text: string) =>
  (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .filter((line) => line.includes(text));

const cgroupsOf = async (runId: string) => {
  const found: string[] = [];
  for (const hierarchy of await readdir('/sys/fs/cgroup')) {
    const path = join('/sys/fs/cgroup', hierarchy, `confighash-${runId}`);
    if (await stat(path).catch(() => undefined)) found.push(path);
  }
  return found;
};

it('SIGKILL of `npm run cluster -- --node` beside a second run: nothing left, nothing shared', async () => {
  const networkBefore = await hostNetwork();
  const killed = spawn(process.execPath, ['--import', 'tsx', 'tools/cluster/main.ts', '--node'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  killed.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const second = await startLocalNode();
  try {
    await waitUntil(
      async () => stdout.includes('export KUBECONFIG='),
      'the first run to be ready',
      300_000,
    );
    const dir = /export KUBECONFIG=(.*)\/kubeconfig/.exec(stdout)![1]!;
    expect(dir).not.toBe(second.dir);
    const runId = dir.slice(dir.lastIndexOf('confighash-node-') + 'confighash-node-'.length);
    // Its kubelet made pods (the confighash replicas) under its own cgroup root.
    expect((await cgroupsOf(runId)).length).toBeGreaterThan(0);
    expect((await processesMentioning(dir)).length).toBeGreaterThanOrEqual(6);
    expect((await mountsMentioning(dir)).length).toBe(0); // its mounts are in its own namespace

    killed.kill('SIGKILL');
    await waitUntil(
      async () => (await processesMentioning(dir)).length === 0,
      'every process of the killed run to be gone',
      60_000,
    );
    expect(await mountsMentioning(dir)).toEqual([]);

    // The second run did not notice.
    const k = strictKubectl(kubectlFor(second.kubeconfig));
    expect(await k(['get', 'nodes', '-o', 'name'])).toContain('node/confighash-node');

    // What the kernel cannot take (a directory, empty cgroups) goes at the next start.
    expect(await stat(dir).catch(() => undefined)).toBeDefined();
    await removeStaleRuns();
    expect(await stat(dir).catch(() => undefined)).toBeUndefined();
    expect(await cgroupsOf(runId)).toEqual([]);
    // ... and nothing of the live run.
    expect(await stat(second.dir).catch(() => undefined)).toBeDefined();
    expect(await k(['get', 'nodes', '-o', 'name'])).toContain('node/confighash-node');
  } finally {
    killed.kill('SIGKILL');
    await second.stop();
  }
  expect(await hostNetwork()).toBe(networkBefore);
});
