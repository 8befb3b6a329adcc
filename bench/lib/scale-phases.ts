// The measured steps of the `scale` scenario, the same for both tools: wait until
// a tool has settled, one change of a source read by one workload, a handful of
// changes timed to their rollout, a fan-out, and what the apiserver counted for
// each. The apiserver's /metrics is the one observer of requests, so every step
// of a tool runs with no other tool running.

import { poll, sleep } from '../../tools/lib/poll.js';
import { cpuUs, residentMb } from './children.js';
import type { ApiClient } from './cluster.js';
import {
  type Counts,
  deltaOf,
  firstBurst,
  quietFor,
  requestCounts,
  type Scrape,
  watchCounts,
} from './scale-metrics.js';
import {
  changedSource,
  collectionPath,
  FANOUT_NAMESPACE,
  FANOUT_SOURCES,
} from './scale-objects.js';
import type { ToolProcess } from './scale-tools.js';
import type { BenchSource } from './workload.js';

export interface PhaseSite {
  readonly api: ApiClient;
  readonly log: (line: string) => void;
  /** A new number for every change, so that no two changes write the same content. */
  nextRound(): number;
}

/** A workload and one source only it reads. */
export interface Change {
  readonly namespace: string;
  readonly workload: string;
  readonly source: BenchSource;
}

/** Lease renewals are the election's heartbeat, not work: left out of "quiet" and of bursts. */
export const isWork = (key: string) => !key.endsWith(' leases');

const SCRAPE_MS = 2_500;
const QUIET_MS = 5_000;
/** A settled process uses under 3 % of a core. */
const QUIET_CPU = 0.03;
/** After the last touch of a step, the controllers' own writes (ReplicaSets, status) land. */
const AFTERMATH_MS = 3_000;

export async function scrapeApi(api: ApiClient): Promise<string> {
  return (await api.expect([200], 'GET', '/metrics')).body;
}

export const apiRequests = async (api: ApiClient) => requestCounts(await scrapeApi(api));
export const apiWatches = async (api: ApiClient) => watchCounts(await scrapeApi(api));

/**
 * Waits until `tool` is ready, then until it and the apiserver are both quiet for 5 s (its
 * CPU under 3 % of a core, no request but lease renewals): its initial work is done.
 * Resolves with the seconds it took from `since`.
 */
export async function waitSettled(
  site: PhaseSite,
  tool: ToolProcess,
  since: number,
  timeoutMs: number,
): Promise<number> {
  const cpu: [number, number][] = [];
  const scrapes: Scrape[] = [];
  return poll(
    async () => {
      if (tool.exited()) throw new Error(`${tool.tool} exited; see ${tool.logFile}`);
      if (!(await tool.ready())) return undefined;
      const now = Date.now();
      cpu.push([now, await cpuUs(tool.pid)]);
      scrapes.push({ atMs: now, counts: await apiRequests(site.api) });
      const from = scrapes.findLastIndex((s) => now - s.atMs >= QUIET_MS);
      const apiQuiet =
        from >= 0 && firstBurst(scrapes.slice(from), isWork, 1).startMs === undefined;
      return apiQuiet && quietFor(cpu, QUIET_MS, QUIET_CPU)
        ? (now - since - QUIET_MS) / 1000
        : undefined;
    },
    {
      restMs: SCRAPE_MS,
      since,
      timeoutMs,
      timedOut: () => {
        throw new Error(
          `${tool.tool} did not settle in ${timeoutMs / 1000} s; see ${tool.logFile}`,
        );
      },
    },
  );
}

/** What the apiserver served while `step` ran, and what the step returned. */
export async function counted<T>(
  api: ApiClient,
  step: () => Promise<T>,
): Promise<{ readonly requests: Counts; readonly result: T }> {
  const before = await apiRequests(api);
  const result = await step();
  return { requests: deltaOf(before, await apiRequests(api)), result };
}

export const rssMb = async (tool: ToolProcess) => round1(await residentMb(tool.pid));

/** One PUT of `source` in `namespace` with new content. */
export async function changeSource(
  site: PhaseSite,
  namespace: string,
  source: BenchSource,
): Promise<void> {
  const object = changedSource(namespace, source, site.nextRound());
  await site.api.expect(
    [200],
    'PUT',
    `${collectionPath(object)}/${object.metadata.name}`,
    JSON.stringify(object),
  );
}

/** Waits until `tool` has acted `count` more times than `from`; resolves with the seconds. */
async function waitActed(
  tool: ToolProcess,
  from: number,
  count: number,
  started: number,
  timeoutMs: number,
): Promise<number> {
  return poll(
    async () => {
      if ((await tool.acted()) >= from + count) return (Date.now() - started) / 1000;
      if (tool.exited()) throw new Error(`${tool.tool} exited; see ${tool.logFile}`);
      return undefined;
    },
    {
      restMs: 200,
      since: started,
      timeoutMs,
      timedOut: async () => {
        throw new Error(
          `${tool.tool} acted ${(await tool.acted()) - from} of ${count} times in ${timeoutMs / 1000} s`,
        );
      },
    },
  );
}

/** One change of a source one workload reads: the requests it cost, until its rollout's aftermath. */
export async function oneChange(
  site: PhaseSite,
  tool: ToolProcess,
  change: Change,
  timeoutMs: number,
): Promise<{ readonly requests: Counts; readonly seconds: number }> {
  const { requests, result } = await counted(site.api, async () => {
    const from = await tool.acted();
    const started = Date.now();
    await changeSource(site, change.namespace, change.source);
    const seconds = await waitActed(tool, from, 1, started, timeoutMs);
    await sleep(AFTERMATH_MS);
    return seconds;
  });
  return { requests, seconds: result };
}

/**
 * Changes, 500 ms apart, each of a source only its workload reads; for each, the time from
 * the PUT to the workload's new generation (its template rewritten), polled every 200 ms.
 */
export async function changeLatencies(
  site: PhaseSite,
  changes: readonly Change[],
  timeoutMs: number,
): Promise<number[]> {
  return Promise.all(
    changes.map(async (change, i) => {
      await sleep(i * 500);
      const path = `/apis/apps/v1/namespaces/${change.namespace}/deployments/${change.workload}`;
      const generation = async () =>
        (
          JSON.parse((await site.api.expect([200], 'GET', path)).body) as {
            metadata: { generation: number };
          }
        ).metadata.generation;
      const before = await generation();
      const started = Date.now();
      await changeSource(site, change.namespace, change.source);
      return poll(async () => ((await generation()) > before ? Date.now() - started : undefined), {
        restMs: 200,
        since: started,
        timeoutMs,
        timedOut: () => {
          throw new Error(`${path} did not roll within ${timeoutMs / 1000} s of its change`);
        },
      });
    }),
  );
}

export interface FanOut {
  readonly workloads: number;
  readonly drainS: number;
  readonly requests: Counts;
  /** Workloads whose generation moved, counted after the aftermath. */
  readonly rolled: number;
}

/** One change of the ConfigMap every fan-out workload reads, until the last of them is touched. */
export async function fanOut(
  site: PhaseSite,
  tool: ToolProcess,
  workloads: number,
  timeoutMs: number,
): Promise<FanOut> {
  const generations = async () => {
    const { body } = await site.api.expect(
      [200],
      'GET',
      `/apis/apps/v1/namespaces/${FANOUT_NAMESPACE}/deployments`,
    );
    const list = JSON.parse(body) as {
      items: { metadata: { name: string; generation: number } }[];
    };
    return new Map(list.items.map((d) => [d.metadata.name, d.metadata.generation]));
  };
  const before = await generations();
  const { requests, result: drainS } = await counted(site.api, async () => {
    const from = await tool.acted();
    const started = Date.now();
    await changeSource(site, FANOUT_NAMESPACE, FANOUT_SOURCES[0]!);
    const seconds = await waitActed(tool, from, workloads, started, timeoutMs);
    await sleep(AFTERMATH_MS);
    return seconds;
  });
  const after = await generations();
  const rolled = [...after].filter(([name, g]) => g > (before.get(name) ?? g)).length;
  return { workloads, drainS, requests, rolled };
}

/**
 * The first resync after now: the apiserver scraped every 2.5 s for one period and 20 s
 * more (longer while a burst is still going, up to 3 min more), and the first burst of
 * requests in that window, whole. A resync that costs nothing shows no burst at all.
 */
export async function resyncRequests(
  site: PhaseSite,
  resyncS: number,
): Promise<{ readonly requests: Counts; readonly complete: boolean }> {
  const scrapes: Scrape[] = [];
  const started = Date.now();
  const window = (resyncS + 20) * 1000;
  return poll(
    async () => {
      scrapes.push({ atMs: Date.now(), counts: await apiRequests(site.api) });
      const elapsed = Date.now() - started;
      const burst = firstBurst(scrapes, isWork, 3);
      return (elapsed >= window && burst.complete) || elapsed >= window + 180_000
        ? { requests: burst.delta, complete: burst.complete }
        : undefined;
    },
    { restMs: SCRAPE_MS },
  );
}

const round1 = (mb: number) => Math.round(mb * 10) / 10;
