// The PID, network and mount namespaces a node run lives in (docs/design.md §8).
// `unshare` makes them with nsinit (tools/node/nsinit.c) as PID 1; every
// process of the run enters them with `nsenter`. When nsinit exits — on stop(),
// or when this process is gone and its stdin pipe reads end of file — the
// kernel kills everything inside, and the bridge, routes, addresses and mounts
// of the run go with the namespaces. What the kernel does not take away
// (cgroups, the run directory) is removed by stop(), or by the next start
// (removeStaleRuns in node.ts).

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { sleep } from '../lib/poll.js';
import { type ManagedProcess, startProcess } from './processes.js';

const execFileAsync = promisify(execFile);

export interface RunNamespaces {
  /** PID (in this host's PID namespace) of nsinit, PID 1 inside. */
  readonly pid: number;
  /** Runs a command inside to completion; throws with its stderr when it fails. */
  exec(command: string, args: readonly string[]): Promise<string>;
  /** Starts a long-running command inside, logging to `logFile`. */
  start(
    name: string,
    command: string,
    args: readonly string[],
    logFile: string,
    options?: { env?: NodeJS.ProcessEnv; cwd?: string },
  ): ManagedProcess;
  /** Ends nsinit, and with it everything inside; resolves when it is gone. */
  stop(): Promise<void>;
}

export async function enterNewNamespaces(nsinit: string): Promise<RunNamespaces> {
  const unshare = spawn(
    'unshare',
    [
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--net',
      '--mount',
      '--propagation',
      'private',
      nsinit,
    ],
    // stdin stays a pipe nobody writes to: its end of file is nsinit's signal to exit.
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  unshare.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(unshare, 'exit');
  const pid = await childOf(unshare, () => stderr);
  return {
    pid,
    exec: (command, args) => execInside(pid, command, args),
    start(name, command, args, logFile, options) {
      const nsenter = startProcess(name, 'nsenter', enterArgs(pid, command, args), logFile, {
        ...options,
        // nsenter forks the command into the PID namespace and waits for it:
        // a graceful stop goes to the command itself, so that nsenter's exit
        // means the command is done.
        signalPid: () => innerPid(nsenter.child),
      });
      return nsenter;
    },
    async stop() {
      if (unshare.exitCode === null && unshare.signalCode === null) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
        await exited;
      }
    },
  };
}

/** nsenter's arguments to run a command in the namespaces of the run whose nsinit is `pid`. */
function enterArgs(pid: number, command: string, args: readonly string[]): string[] {
  return ['--target', String(pid), '--pid', '--net', '--mount', '--', command, ...args];
}

/**
 * Runs a command to completion inside a run's namespaces, given its nsinit's PID: from the
 * process that started the run, or from any other (a test worker of a shared node).
 */
export async function execInside(
  pid: number,
  command: string,
  args: readonly string[],
): Promise<string> {
  try {
    const { stdout } = await execFileAsync('nsenter', enterArgs(pid, command, args), {
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const failure = error as Error & { stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed: ${failure.stderr?.trim() ?? failure.message}`,
    );
  }
}

/** The PID of the process that `unshare --fork` started (nsinit), once it runs. */
async function childOf(parent: ChildProcess, stderr: () => string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (parent.exitCode !== null) {
      throw new Error(`unshare exited (${parent.exitCode}): ${stderr().trim()}`);
    }
    const child = await firstChild(parent.pid);
    if (child !== undefined) return child;
    await sleep(50);
  }
  throw new Error('unshare started no child within 5 s');
}

async function firstChild(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const first = text.trim().split(/\s+/)[0];
  return first ? Number(first) : undefined;
}

function innerPid(nsenter: ChildProcess): number | undefined {
  const pid = nsenter.pid;
  if (pid === undefined) return undefined;
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}
