// Child processes that cannot outlive us. Each one runs in its own process
// group with a small guard beside it that ends the group when our process is
// gone — even after SIGKILL, when no exit handler of ours can run.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { poll } from '../lib/poll.js';

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

const running = new Set<ManagedProcess>();

const GUARD = `
parent=$1; child=$2
while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 0.5; done
if kill -0 "$child" 2>/dev/null; then
  kill -TERM -- "-$child" 2>/dev/null; sleep 3; kill -KILL -- "-$child" 2>/dev/null
fi`;

export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  logFile: string,
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** Where a graceful SIGTERM goes, when not to the whole group (see namespaces.ts). */
    signalPid?: () => number | undefined;
  } = {},
): ManagedProcess {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const guard = spawn('bash', ['-c', GUARD, 'guard', String(process.pid), String(child.pid)], {
    detached: true,
    stdio: 'ignore',
  });
  guard.unref();
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const managed: ManagedProcess = {
    name,
    child,
    logFile,
    exited,
    async stop(graceMs = 10_000) {
      running.delete(managed);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const target = options.signalPid?.();
      if (target === undefined) signalGroup(child, 'SIGTERM');
      else signalPid(target, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(managed);
  void exited.then(() => running.delete(managed));
  return managed;
}

/**
 * Polls `isReady` for as long as the process runs: a loaded machine is slow, not
 * broken, so there is no clock; a process that exits while starting fails at once,
 * naming its log. A check that throws counts as not ready yet.
 */
export async function waitUntilReady(
  process: Pick<ManagedProcess, 'name' | 'exited' | 'logFile'>,
  isReady: () => Promise<boolean>,
  pollMs = 200,
): Promise<void> {
  let exitCode: number | null | undefined;
  void process.exited.then((code) => {
    exitCode = code;
  });
  await poll(
    async () => {
      if (exitCode !== undefined) {
        // The log may be gone with the run's clean-up before anyone reads it: its end goes along.
        throw new Error(
          `${process.name} exited (code ${exitCode}) while starting; see ${process.logFile}, which ends:\n${await logTail(process.logFile)}`,
        );
      }
      return (await isReady().catch(() => false)) ? true : undefined;
    },
    { restMs: pollMs },
  );
}

const LOG_TAIL_LINES = 20;

async function logTail(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(
    (error: Error) => `(unreadable: ${error.message})`,
  );
  return text.trimEnd().split('\n').slice(-LOG_TAIL_LINES).join('\n');
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined) signalPid(-child.pid, signal);
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Synchronous last resort on exit: nothing async can run in an 'exit' handler. */
process.on('exit', () => {
  for (const managed of running) signalGroup(managed.child, 'SIGKILL');
});
