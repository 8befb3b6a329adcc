// How a cluster runs confighash's two containers, for the processes of the product the bench
// starts: Node's flags as the image (serve) or the follow Deployment (follow) give them, the
// C library's variables, and the container's memory limit as a memory cgroup, as the kubelet
// makes one. Node 24 sizes its young generation from the memory it sees (BENCHMARKS.md, "on
// the image's Node"): a process without the limit is one no cluster runs.

import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

export interface ContainerRuntime {
  /** Node's own flags, before the script (`--max-old-space-size=128`). */
  readonly nodeFlags: readonly string[];
  /** The C library's variables (`MALLOC_…`); the options' variables are the bench's own. */
  readonly env: Readonly<Record<string, string>>;
  /** The container's `resources.limits.memory`, in bytes. */
  readonly memoryLimitBytes: number;
}

const SCRIPT = '/app/dist/main.js';

interface Container {
  readonly command?: string[];
  readonly env?: { name: string; value?: string }[];
  readonly resources: { limits: { memory: string } };
}

/** The serving Deployment (manifests/base) with the image's entrypoint (Dockerfile). */
export async function serveContainer(): Promise<ContainerRuntime> {
  const container = await firstContainer('manifests/base/deployment.yaml');
  return runtimeOf(container, await imageEntrypoint());
}

/** The follow Deployment (manifests/components/follow; the chart renders the same). */
export async function followContainer(): Promise<ContainerRuntime> {
  const container = await firstContainer('manifests/components/follow/deployment.yaml');
  if (!container.command) throw new Error('the follow Deployment has no command');
  return runtimeOf(container, container.command);
}

function runtimeOf(container: Container, command: readonly string[]): ContainerRuntime {
  const script = command.indexOf(SCRIPT);
  if (script < 1) throw new Error(`no ${SCRIPT} in the command ${JSON.stringify(command)}`);
  const env = (container.env ?? []).filter(
    (variable) => variable.name.startsWith('MALLOC_') && variable.value !== undefined,
  );
  return {
    nodeFlags: command.slice(1, script),
    env: withEnvOverrides(
      Object.fromEntries(env.map((variable) => [variable.name, variable.value!])),
      process.env.CONFIGHASH_BENCH_CONTAINER_ENV,
    ),
    memoryLimitBytes: quantityBytes(container.resources.limits.memory),
  };
}

async function firstContainer(manifest: string): Promise<Container> {
  const deployment = load(await readFile(join(REPO_ROOT, manifest), 'utf8')) as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  const [container] = deployment.spec.template.spec.containers;
  if (!container) throw new Error(`${manifest} has no container`);
  return container;
}

/** The Dockerfile's ENTRYPOINT (exec form); tools/image/build.sh sets the same. */
async function imageEntrypoint(): Promise<string[]> {
  const dockerfile = await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const line = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  if (!line) throw new Error('the Dockerfile has no exec-form ENTRYPOINT');
  return JSON.parse(line) as string[];
}

/**
 * The container's variables with an experiment's over them: `overrides` is
 * CONFIGHASH_BENCH_CONTAINER_ENV, `NAME=VALUE` sets and `NAME=` removes, separated by spaces
 * (`MALLOC_ARENA_MAX= MALLOC_TRIM_THRESHOLD_=65536`). The report records it (meta.experiment).
 */
export function withEnvOverrides(
  env: Readonly<Record<string, string>>,
  overrides: string | undefined,
): Record<string, string> {
  const result = { ...env };
  for (const assignment of overrides?.split(' ').filter(Boolean) ?? []) {
    const at = assignment.indexOf('=');
    if (at < 1)
      throw new Error(`CONFIGHASH_BENCH_CONTAINER_ENV: '${assignment}' is not NAME=VALUE`);
    const [name, value] = [assignment.slice(0, at), assignment.slice(at + 1)];
    if (value === '') delete result[name];
    else result[name] = value;
  }
  return result;
}

const SUFFIXES: Readonly<Record<string, number>> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** A Kubernetes memory quantity ("256Mi") in bytes; the forms the manifests use. */
export function quantityBytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!match)
    throw new Error(`unsupported memory quantity '${quantity}' (want N, NKi, NMi or NGi)`);
  return Number(match[1]) * SUFFIXES[match[2] ?? '']!;
}

/** The memory limit a process is held to, it and its children: a cgroup it joins before it execs. */
export interface MemoryLimit {
  /** Where a process writes its pid to join; none when the bench could not make the cgroup. */
  readonly procsFile?: string;
  /** The limit or why there is none, for the reports. */
  readonly description: string;
  remove(): Promise<void>;
}

/**
 * A memory cgroup limited to `bytes`, under this process's own (cgroup v1's memory hierarchy,
 * or v2 where the memory controller is delegated to it). Where there is none to be had (not
 * root, no delegation), no limit, and the reason why: the bench runs and says so.
 */
export async function memoryLimit(name: string, bytes: number): Promise<MemoryLimit> {
  const none = (reason: string) => noMemoryLimit(`none (${reason})`);
  const hierarchy = await ownMemoryHierarchy();
  if ('unavailable' in hierarchy) return none(hierarchy.unavailable);
  const dir = join(hierarchy.dir, `confighash-bench-${process.pid}-${name}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, hierarchy.limitFile), String(bytes));
  } catch (error) {
    await rmdir(dir).catch(() => {});
    return none(`cannot make a memory cgroup in ${hierarchy.dir}: ${String(error)}`);
  }
  return {
    procsFile: join(dir, 'cgroup.procs'),
    description: `${bytes / 2 ** 20} MiB (a ${hierarchy.version} memory cgroup)`,
    // Stopping a process twice (a scenario, then the bench's clean-up) removes it once.
    remove: () => rmdir(dir).catch(ignoreMissing),
  };
}

/** No limit: the process runs as the bench does; `description` says so in the reports. */
export function noMemoryLimit(description: string): MemoryLimit {
  return { description, remove: async () => {} };
}

interface Hierarchy {
  readonly dir: string;
  readonly limitFile: string;
  readonly version: string;
}

async function ownMemoryHierarchy(): Promise<Hierarchy | { readonly unavailable: string }> {
  const lines = (await readFile('/proc/self/cgroup', 'utf8')).trim().split('\n');
  const v1 = lines
    .map((line) => line.split(':'))
    .find(([, controllers]) => controllers?.split(',').includes('memory'));
  if (v1) {
    return {
      dir: join('/sys/fs/cgroup/memory', v1[2] ?? '/'),
      limitFile: 'memory.limit_in_bytes',
      version: 'cgroup v1',
    };
  }
  const v2 = lines.find((line) => line.startsWith('0::'))?.slice(3);
  if (v2 === undefined) return { unavailable: 'this process is in no memory cgroup' };
  const dir = join('/sys/fs/cgroup', v2);
  const delegated = await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '');
  if (!delegated.split(/\s+/).includes('memory')) {
    return { unavailable: `the memory controller is not delegated to ${dir}` };
  }
  return { dir, limitFile: 'memory.max', version: 'cgroup v2' };
}

/**
 * `command args` held to `limit`: a shell joins its cgroup (when there is one), then execs the
 * command in place, so that the pid a caller samples and a fork's IPC channel are the command's.
 */
export function inLimit(
  limit: MemoryLimit | undefined,
  command: string,
  args: readonly string[],
): [string, string[]] {
  return limit?.procsFile === undefined
    ? [command, [...args]]
    : ['sh', ['-c', 'echo $$ >"$0"; exec "$@"', limit.procsFile, command, ...args]];
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
