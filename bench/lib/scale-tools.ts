// The two tools the `scale` scenario measures on the same objects, as processes
// with one shape: confighash's follower (`confighash follow`, compiled, as in
// production) and Reloader (built by bench/build-peers.sh). Each says how many
// workloads it has acted on so far, from its own /metrics, so that waiting for a
// touch costs the apiserver nothing; and each is sampled for its highest RSS.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { httpRequest } from '../../tools/cluster/http.js';
import { freePort } from '../../tools/cluster/ports.js';
import { type ManagedProcess, startProcess } from '../../tools/cluster/processes.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { BUILD_DIR } from './build.js';
import { appendingTo, residentMb } from './children.js';
import {
  type ContainerRuntime,
  inLimit,
  type MemoryLimit,
  memoryLimit,
  noMemoryLimit,
} from './container.js';
import { startPeerProcess } from './peers.js';
import { samplesOf } from './scale-metrics.js';

export type ToolName = 'confighash' | 'reloader';

export interface ToolProcess {
  readonly tool: ToolName;
  readonly pid: number;
  readonly logFile: string;
  /** True once it does its job: confighash holds the Lease; Reloader serves /metrics. */
  ready(): Promise<boolean>;
  /** Workloads touched (confighash) or reloaded (Reloader) so far. */
  acted(): Promise<number>;
  /** The highest RSS sampled (every 500 ms) since it started. */
  maxMb(): number;
  /** The memory limit it runs in, or why none (container.ts). */
  readonly memoryLimit: string;
  exited(): boolean;
  stop(): Promise<void>;
}

export interface ToolSite {
  readonly work: string;
  readonly kubeconfig: string;
  readonly hashKeyFile: string;
}

/** Bench settings of the follower: the defaults, but a resync short enough to measure. */
export interface FollowerSettings {
  readonly resyncS: number;
  /** How the follow Deployment runs it: Node's flags, the allocator's variables, the memory limit. */
  readonly runtime: ContainerRuntime;
  /** `--follow-evaluate-rate`, when this build has the flag. */
  readonly evaluateRate?: number;
}

const MAIN_JS = join(BUILD_DIR, 'src/main.js');

/** Whether this build's `confighash follow` takes `flag` (the follower is being rewritten). */
export async function followerHasFlag(flag: string): Promise<boolean> {
  const { stdout } = await promisify(execFile)(process.execPath, [MAIN_JS, 'follow', '--help'], {
    cwd: REPO_ROOT,
  });
  return stdout.includes(`--${flag} `);
}

export async function startFollower(
  site: ToolSite,
  name: string,
  settings: FollowerSettings,
): Promise<ToolProcess> {
  const port = await freePort();
  const logFile = join(site.work, `${name}.log`);
  const limit = await memoryLimit(name, settings.runtime.memoryLimitBytes);
  const [shell, args] = inLimit(
    limit,
    ...appendingTo(logFile, process.execPath, [
      ...settings.runtime.nodeFlags,
      MAIN_JS,
      'follow',
      '--host=127.0.0.1',
      `--port=${port}`,
      `--hash-key-file=${site.hashKeyFile}`,
      '--lease-namespace=default',
      `--identity=${name}`,
      `--follow-resync=${settings.resyncS}s`,
      ...(settings.evaluateRate === undefined
        ? []
        : [`--follow-evaluate-rate=${settings.evaluateRate}`]),
    ]),
  );
  const managed = startProcess(name, shell, args, `${logFile}.start`, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...settings.runtime.env,
      KUBECONFIG: site.kubeconfig,
      CONFIGHASH_LOG_LEVEL: 'info',
    },
  });
  const metric = (name: string) => metricSum(`http://127.0.0.1:${port}/metrics`, name);
  return toolProcess('confighash', managed, limit, {
    ready: async () => (await metric('confighash_follow_leader').catch(() => 0)) === 1,
    acted: () => metric('confighash_follow_touches_total'),
  });
}

/** Reloader serves its metrics on :9090, always (it cannot be told another port). */
const RELOADER_METRICS = 'http://127.0.0.1:9090/metrics';

export function startReloader(site: ToolSite, name: string, binary: string): ToolProcess {
  const managed = startPeerProcess(site, name, binary, [
    '--reload-strategy=annotations',
    '--log-level=warning',
  ]);
  return toolProcess('reloader', managed, NO_LIMIT, {
    ready: () =>
      metricSum(RELOADER_METRICS, 'reloader_reload_executed_total').then(
        () => true,
        () => false,
      ),
    acted: async () =>
      (await metricSamples(RELOADER_METRICS, 'reloader_reload_executed_total'))
        .filter((s) => s.labels.success === 'true')
        .reduce((n, s) => n + s.value, 0),
  });
}

/** Reloader runs as bench/build-peers.sh built it: Go sizes its heap from no cgroup. */
const NO_LIMIT = noMemoryLimit('none');

function toolProcess(
  tool: ToolName,
  managed: ManagedProcess,
  limit: MemoryLimit,
  probes: Pick<ToolProcess, 'ready' | 'acted'>,
): ToolProcess {
  const pid = managed.child.pid ?? -1;
  let max = 0;
  const sampler = setInterval(() => {
    void residentMb(pid).then(
      (mb) => {
        max = Math.max(max, mb);
      },
      () => {},
    );
  }, 500);
  return {
    tool,
    pid,
    logFile: managed.logFile,
    ...probes,
    maxMb: () => max,
    memoryLimit: limit.description,
    exited: () => managed.child.exitCode !== null || managed.child.signalCode !== null,
    async stop() {
      clearInterval(sampler);
      await managed.stop(20_000);
      await limit.remove();
    },
  };
}

async function metricsText(url: string): Promise<string> {
  const response = await httpRequest(url, { timeoutMs: 5_000 });
  if (response.status !== 200) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return response.body;
}

const metricSamples = async (url: string, name: string) => samplesOf(await metricsText(url), name);

/** An unlabelled metric's value (`name value`), or the sum of its labelled samples. */
async function metricSum(url: string, name: string): Promise<number> {
  const text = await metricsText(url);
  const plain = text.split('\n').find((line) => line.startsWith(`${name} `));
  if (plain) return Number(plain.slice(name.length + 1));
  return samplesOf(text, name).reduce((n, s) => n + s.value, 0);
}
