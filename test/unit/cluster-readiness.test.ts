// `npm run cluster` (tools/cluster/processes.ts) waits for each process it starts —
// control plane, node, webhook — to be ready for as long as the process lives: a
// loaded machine is slow, not broken.

import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { waitUntilReady } from '../../tools/cluster/processes.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function process() {
  let exit: (code: number) => void = () => {};
  const exited = new Promise<number | null>((resolve) => {
    exit = resolve;
  });
  return { name: 'confighash', exited, logFile: '/tmp/confighash.log', exit };
}

it('waits past 30 s while the process runs and is not ready yet', async () => {
  const started = Date.now();
  const proc = process();
  let settled = false;
  const waiting = waitUntilReady(proc, async () => Date.now() - started > 90_000).then(() => {
    settled = true;
  });
  await vi.advanceTimersByTimeAsync(60_000);
  expect(settled).toBe(false);
  await vi.advanceTimersByTimeAsync(31_000);
  await waiting;
  expect(settled).toBe(true);
});

it('ends with the log file named when the process exits while starting', async () => {
  const proc = process();
  const waiting = waitUntilReady(proc, async () => false);
  const outcome = expect(waiting).rejects.toThrow(/exited \(code 1\).*\/tmp\/confighash\.log/);
  await vi.advanceTimersByTimeAsync(1_000);
  proc.exit(1);
  await vi.advanceTimersByTimeAsync(1_000);
  await outcome;
});
