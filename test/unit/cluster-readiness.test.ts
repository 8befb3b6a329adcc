// `npm run cluster` (tools/cluster/processes.ts) waits for each process it starts —
// control plane, node, webhook — to be ready for as long as the process lives: a
// loaded machine is slow, not broken.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { waitUntilReady } from '../../tools/cluster/processes.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function process(logFile = '/tmp/confighash.log') {
  let exit: (code: number) => void = () => {};
  const exited = new Promise<number | null>((resolve) => {
    exit = resolve;
  });
  return { name: 'confighash', exited, logFile, exit };
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

it("ends with the log file named and its last lines, which a run's clean-up may delete", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'confighash-readiness-'));
  const logFile = join(dir, 'confighash.log');
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
  await writeFile(
    logFile,
    `${[...lines, 'listen EADDRINUSE: address already in use'].join('\n')}\n`,
  );
  try {
    const proc = process(logFile);
    const waiting = waitUntilReady(proc, async () => false);
    const outcome = expect(waiting).rejects.toThrow(
      /exited \(code 1\).*confighash\.log, which ends:\nline 12\n(.|\n)*line 30\nlisten EADDRINUSE/,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    proc.exit(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await outcome;
    await expect(waiting).rejects.not.toThrow(/line 11\n/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
