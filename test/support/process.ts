// Runs the confighash CLI from source, as a user would run the built one.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { confighashNodeArgs } from '../../tools/cluster/confighash-command.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

export interface RunningProcess {
  readonly child: ChildProcess;
  readonly output: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** `input`, when given, is the process's stdin (`plan -f -`). */
export function runConfighash(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
): RunningProcess {
  const child = spawn(process.execPath, confighashNodeArgs(args), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin?.end(input);
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const running = { child, output, exited };
  started.add(running);
  void exited.then(() => started.delete(running));
  return running;
}

const started = new Set<RunningProcess>();

/**
 * Kills every process runConfighash started that is still running. For an
 * `afterEach`: a test that fails or times out never reaches its own cleanup,
 * and a `serve` it started would outlive the run.
 */
export async function stopStartedProcesses(): Promise<void> {
  const left = [...started];
  for (const { child } of left) child.kill('SIGKILL');
  await Promise.all(left.map(({ exited }) => exited));
}

export { freePort } from '../../tools/cluster/ports.js';

/** PIDs of live processes whose command line mentions `text` (a run's directory, say). */
export async function processesMentioning(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(Number(entry));
  }
  return found;
}
