// Starting and talking to the processes under test. Bench helpers (stub,
// floors, load generator, hashing) are forked with an IPC channel; the webhook
// is the real `confighash serve`, compiled, started like a user would start it.

import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { httpRequest } from '../../tools/cluster/http.js';
import { type ManagedProcess, startProcess } from '../../tools/cluster/processes.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { poll, sleep } from '../../tools/lib/poll.js';
import { BUILD_DIR } from './build.js';
import { type ContainerRuntime, inLimit, type MemoryLimit, memoryLimit } from './container.js';

export interface Helper {
  readonly pid: number;
  call<T>(type: string, payload?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export interface HelperOptions {
  readonly execArgv?: readonly string[];
  /** Run on these CPUs only (a `taskset` list, such as "1"); see `tasksetAvailable`. */
  readonly cpus?: string;
  /** Run in this memory limit (container.ts), removed when the helper stops. */
  readonly memoryLimit?: MemoryLimit;
  /** Variables besides this process's own (the C library's, as a container sets them). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Forks bench/procs/NAME (compiled), its output appended to `logFile`. */
export function forkHelper(name: string, logFile: string, options: HelperOptions = {}): Helper {
  const log = openSync(logFile, 'a');
  const [execPath, execArgv] = inLimit(
    options.memoryLimit,
    ...onCpus(options.cpus, process.execPath, options.execArgv ?? []),
  );
  const child: ChildProcess = fork(join(BUILD_DIR, 'bench/procs', `${name}.js`), [], {
    execPath,
    execArgv,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log, 'ipc'],
  });
  let next = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  child.on('message', (raw) => {
    const message = raw as { id: number; ok: boolean; result?: unknown; error?: string };
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) waiter?.resolve(message.result);
    else waiter?.reject(new Error(`${name}: ${message.error}`));
  });
  const exited = once(child, 'exit');
  void exited.then(([code]) => {
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`${name} exited (${code}); see ${logFile}`));
    }
    pending.clear();
  });
  return {
    pid: child.pid ?? -1,
    call<T>(type: string, payload: Record<string, unknown> = {}) {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, type, ...payload });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      await options.memoryLimit?.remove();
    },
  };
}

/**
 * `command args` with its output appended to `logFile` by a shell that then execs it: straight
 * to the file, not piped through the bench, whose CPU would count on the same two cores during
 * every measurement.
 */
export function appendingTo(
  logFile: string,
  command: string,
  args: readonly string[],
): [string, string[]] {
  return [
    'bash',
    ['-c', 'log=$1; shift; exec "$@" >>"$log" 2>&1', 'bench', logFile, command, ...args],
  ];
}

/** Whether `taskset` is here to pin processes to CPUs (util-linux; Linux only). */
export function tasksetAvailable(): boolean {
  return spawnSync('sh', ['-c', 'command -v taskset'], { stdio: 'ignore' }).status === 0;
}

/**
 * `command args` run on `cpus` only, from its first instruction: every thread and child it
 * starts inherits the mask. taskset execs the command in place, so the pid a caller reads
 * CPU time from, and a fork's IPC channel, are the command's own.
 */
function onCpus(
  cpus: string | undefined,
  command: string,
  args: readonly string[],
): [string, string[]] {
  return cpus === undefined
    ? [command, [...args]]
    : ['taskset', ['--cpu-list', cpus, command, ...args]];
}

export interface Webhook {
  readonly url: string;
  readonly pid: number;
  readonly process: ManagedProcess;
  /** Highest RSS from start to ready, its child processes (the credential resolver) included. */
  readonly startupPeakMb: number;
  /** The container's memory limit it runs in, or why none (for the reports). */
  readonly memoryLimit: string;
  /** Connections opened by the webhook's agents so far, by host:port. */
  connections(): Promise<Record<string, number>>;
  /** confighash_* counters and the nodejs_heap_* and external memory gauges from /metrics, by name and labels. */
  metrics(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export interface WebhookOptions {
  readonly dir: string;
  readonly name: string;
  readonly kubeconfig: string;
  readonly port: number;
  readonly certs: { readonly cert: string; readonly key: string; readonly ca: string };
  readonly hashKeyFile: string;
  /** The serving container's flags and memory limit (container.ts). */
  readonly runtime: ContainerRuntime;
  /** Write a V8 CPU profile here when the process exits. */
  readonly profileDir?: string;
  /** The compiled entry point to run (a previous build, for same-run comparisons); default this tree's. */
  readonly mainJs?: string;
  /** Run on these CPUs only (a `taskset` list, such as "0"). */
  readonly cpus?: string;
}

/**
 * `confighash serve` from the compiled source, as its container runs it (the image's Node
 * flags, in the container's memory limit), at log level info.
 */
export async function startWebhook(options: WebhookOptions): Promise<Webhook> {
  const connectionsFile = join(options.dir, `${options.name}.connections.json`);
  const limit = await memoryLimit(options.name, options.runtime.memoryLimitBytes);
  const process_ = spawnServe(options, limit, connectionsFile);
  const startup = sampleTreePeak(process_.child.pid ?? -1);
  const get = (path: string) =>
    httpRequest(`https://127.0.0.1:${options.port}${path}`, {
      ca: options.certs.ca,
      timeoutMs: 5_000,
    });
  await waitReady(options.name, process_, get);
  const startupPeakMb = startup.stop();
  return {
    url: `https://127.0.0.1:${options.port}/mutate`,
    pid: process_.child.pid ?? -1,
    process: process_,
    startupPeakMb,
    memoryLimit: limit.description,
    async connections() {
      // The preload writes the file every 100 ms; let the last connections land.
      await sleep(250);
      return JSON.parse(await readFile(connectionsFile, 'utf8').catch(() => '{}'));
    },
    async metrics() {
      return parseCounters((await get('/metrics')).body);
    },
    async stop() {
      await process_.stop(20_000);
      await limit.remove();
    },
  };
}

function spawnServe(
  options: WebhookOptions,
  limit: MemoryLimit,
  connectionsFile: string,
): ManagedProcess {
  const logFile = join(options.dir, `${options.name}.log`);
  const [command, args] = onCpus(options.cpus, process.execPath, [
    ...nodeFlags(options),
    ...serveArgs(options),
  ]);
  const [shell, shellArgs] = inLimit(limit, ...appendingTo(logFile, command, args));
  return startProcess(options.name, shell, shellArgs, `${logFile}.start`, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...options.runtime.env,
      KUBECONFIG: options.kubeconfig,
      CONFIGHASH_LOG_LEVEL: 'info',
      CONFIGHASH_BENCH_CONNECTIONS_FILE: connectionsFile,
    },
  });
}

/**
 * The image's flags, the profiler when asked for, any experiment's flags (after the image's,
 * so that they win), and the preload that counts connections.
 */
function nodeFlags(options: WebhookOptions): string[] {
  return [
    ...options.runtime.nodeFlags,
    ...(options.profileDir
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${options.profileDir}`,
          `--cpu-prof-name=${options.name}.cpuprofile`,
        ]
      : []),
    // Extra Node flags for the webhook only (e.g. --trace-gc, heap sizes), for experiments.
    ...(process.env.CONFIGHASH_BENCH_WEBHOOK_FLAGS?.split(' ').filter(Boolean) ?? []),
    '--import',
    join(BUILD_DIR, 'bench/procs/count-connections.js'),
  ];
}

function serveArgs(options: WebhookOptions): string[] {
  return [
    options.mainJs ?? join(BUILD_DIR, 'src/main.js'),
    'serve',
    '--host=127.0.0.1',
    `--port=${options.port}`,
    `--tls-cert-file=${join(options.dir, 'tls.crt')}`,
    `--tls-key-file=${join(options.dir, 'tls.key')}`,
    `--hash-key-file=${options.hashKeyFile}`,
  ];
}

/** Polls /readyz every 100 ms, for 30 s at most; fails at once if the process exits. */
async function waitReady(
  name: string,
  process_: ManagedProcess,
  get: (path: string) => Promise<{ readonly status: number }>,
): Promise<void> {
  await poll(
    async () => {
      if (process_.child.exitCode !== null) {
        throw new Error(`${name} exited while starting; see ${process_.logFile}`);
      }
      const ready = await get('/readyz').then(
        (response) => response.status === 200,
        () => false,
      );
      return ready ? true : undefined;
    },
    {
      restMs: 100,
      timeoutMs: 30_000,
      timedOut: () => {
        throw new Error(`${name} not ready after 30 s`);
      },
    },
  );
}

/** confighash's own metrics, and the V8 heap's and external memory's gauges (scenario 8). */
const MEASURED = ['confighash_', 'nodejs_heap_', 'nodejs_external_memory_'];

function parseCounters(text: string): Record<string, number> {
  const counters: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!MEASURED.some((prefix) => line.startsWith(prefix)) || line.includes('_bucket')) continue;
    const at = line.lastIndexOf(' ');
    counters[line.slice(0, at)] = Number(line.slice(at + 1));
  }
  return counters;
}

const TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process has used so far, in µs (from /proc; Linux only). */
export async function cpuUs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / TICKS_PER_SECOND) * 1e6;
}

/** The CPUs a process may run on, as the kernel lists them ("0", "0-1"; from /proc; Linux only). */
export async function allowedCpus(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return /^Cpus_allowed_list:\s+(\S+)$/m.exec(status)?.[1] ?? 'unknown';
}

/** Resident set size of a process, in MB (from /proc; Linux only). */
export async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) / 1024;
}

/**
 * The highest RSS of a process and its descendants together (what a container's
 * memory limit sees), sampled every 10 ms until stopped.
 */
export function sampleTreePeak(pid: number): { stop(): number } {
  let peakKb = 0;
  const timer = setInterval(() => {
    const total = treeOf(pid).reduce((sum, each) => sum + residentKbSync(each), 0);
    peakKb = Math.max(peakKb, total);
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return peakKb / 1024;
    },
  };
}

function treeOf(pid: number): number[] {
  const children = readFileOr(`/proc/${pid}/task/${pid}/children`)
    .split(' ')
    .filter(Boolean)
    .map(Number);
  return [pid, ...children.flatMap(treeOf)];
}

function residentKbSync(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileOr(`/proc/${pid}/status`))?.[1] ?? 0);
}

function readFileOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
