// What the `scale` scenario reports: per size, the figures of confighash's
// follower and of Reloader on the same objects, the tables BENCHMARKS.md shows,
// and docs/design.md §11's targets at the largest size.

import type { ContainerRuntime } from './container.js';
import type { Scenario, Target } from './report.js';
import { type Counts, drainSeconds, formatCounts, totalOf, verbTotal } from './scale-metrics.js';
import { percentile, sortSamples } from './stats.js';

export interface StartFigures {
  readonly seconds: number;
  readonly requests: Counts;
  /** Touches or reloads while starting: a start must roll nothing. */
  readonly acted: number;
}

export interface ChangeFigures {
  readonly requests: Counts;
  readonly seconds: number;
}

export interface FanOutFigures {
  readonly workloads: number;
  readonly drainS: number;
  readonly requests: Counts;
  /** Workloads whose generation moved. */
  readonly rolled: number;
}

export interface ConfighashFigures {
  /** The memory limit the follower ran in, or why none. */
  readonly memoryLimit: string;
  readonly steadyMb: number;
  readonly restartMb: number;
  readonly maxMb: number;
  readonly watches: Counts;
  readonly firstStart: StartFigures;
  readonly restart: StartFigures;
  readonly resync: { readonly requests: Counts; readonly complete: boolean };
  readonly oneChange: ChangeFigures;
  readonly latenciesMs: readonly number[];
  readonly fanout: FanOutFigures;
}

export interface ReloaderFigures {
  readonly steadyMb: number;
  readonly maxMb: number;
  readonly watches: Counts;
  readonly start: StartFigures;
  readonly idle: Counts;
  readonly oneChange: ChangeFigures;
  readonly latenciesMs: readonly number[];
  readonly fanout: FanOutFigures;
}

export interface ScaleRow {
  readonly namespaces: number;
  readonly workloads: number;
  readonly sources: number;
  readonly createS: number;
  readonly confighash: ConfighashFigures;
  readonly reloader?: ReloaderFigures;
  /** The serving replica that admitted every create so far. */
  readonly serveMb: number;
  readonly wallS: number;
}

export interface ScaleResult {
  readonly rows: readonly ScaleRow[];
  readonly plan: {
    readonly fanout: number;
    readonly latencyChanges: number;
    readonly follower: {
      readonly resyncS: number;
      readonly runtime: ContainerRuntime;
      readonly evaluateRate?: number;
    };
    readonly idleS: number;
  };
  /** A serving replica started at the largest size. */
  readonly fresh: { readonly rssMb: number; readonly watches: Counts };
  readonly reloaderBuilt: boolean;
  readonly defaults: { readonly rate: number; readonly burst: number; readonly debounceS: number };
  readonly wallS: number;
}

/**
 * Left out of the request columns (the JSON keeps them): lease renewals, the election's
 * heartbeat; the apiserver's own endpoints reconciler; and WATCH, counted when a watch
 * ends, so these are other components' watches timing out (watches held are their own column).
 */
const shown = (key: string) =>
  !key.endsWith(' leases') && !key.endsWith(' endpoints') && !key.startsWith('WATCH ');
const requests = (counts: Counts) => formatCounts(counts, shown);
const shownOnly = (counts: Counts): Counts =>
  Object.fromEntries(Object.entries(counts).filter(([key]) => shown(key)));
const mb = (value: number | undefined) => (value === undefined ? '–' : `${value.toFixed(1)} MB`);
const size = (r: ScaleRow) =>
  `${r.namespaces.toLocaleString('en-US')} / ${r.workloads.toLocaleString('en-US')} / ${r.sources.toLocaleString('en-US')}`;

/** [p50, p99] in seconds, nearest rank. */
export function latencyPercentiles(samplesMs: readonly number[]): [number, number] {
  const sorted = sortSamples(samplesMs);
  return [percentile(sorted, 50) / 1000, percentile(sorted, 99) / 1000];
}

const seconds = (value: number) => `${value.toFixed(1)} s`;
const latency = (samplesMs: readonly number[]) => {
  const [p50, p99] = latencyPercentiles(samplesMs);
  return `${seconds(p50)} / ${seconds(p99)}`;
};

export function memoryTable(rows: readonly ScaleRow[]): string {
  return [
    '| follow namespaces / Deployments / ConfigMaps+Secrets | confighash follower RSS: steady / after a restart / max | Reloader RSS: steady / max | serving replica RSS | follower watches | Reloader watches |',
    '|---|--:|--:|--:|--:|--:|',
    ...rows.map(
      (r) =>
        `| ${size(r)} | ${mb(r.confighash.steadyMb)} / ${mb(r.confighash.restartMb)} / ${mb(r.confighash.maxMb)} | ${r.reloader ? `${mb(r.reloader.steadyMb)} / ${mb(r.reloader.maxMb)}` : '–'} | ${mb(r.serveMb)} | ${totalOf(r.confighash.watches)} | ${r.reloader ? totalOf(r.reloader.watches) : '–'} |`,
    ),
  ].join('\n');
}

export function requestTable(rows: readonly ScaleRow[]): string {
  const lines = [
    '| size | tool | start (taking the lead): time, requests, rollouts | resync with nothing changed (Reloader: idle) | one change of a source read by 1 workload | change → rollout p50 / p99 | fan-out: drain, requests |',
    '|---|---|---|---|---|--:|---|',
  ];
  for (const r of rows) {
    const c = r.confighash;
    lines.push(
      `| ${size(r)} | confighash | ${seconds(c.restart.seconds)}; ${requests(c.restart.requests)}; ${c.restart.acted} touched | ${requests(c.resync.requests)}${c.resync.complete ? '' : ' (cut off)'} | ${requests(c.oneChange.requests)} | ${latency(c.latenciesMs)} | ${c.fanout.workloads} in ${seconds(c.fanout.drainS)}; ${requests(c.fanout.requests)} |`,
    );
    const o = r.reloader;
    if (o) {
      lines.push(
        `| | Reloader | ${seconds(o.start.seconds)}; ${requests(o.start.requests)}; ${o.start.acted} reloaded | ${requests(o.idle)} | ${requests(o.oneChange.requests)} | ${latency(o.latenciesMs)} | ${o.fanout.workloads} in ${seconds(o.fanout.drainS)}; ${requests(o.fanout.requests)} |`,
      );
    }
  }
  return lines.join('\n');
}

export function scaleTargets(result: ScaleResult): Target[] {
  const last = result.rows[result.rows.length - 1];
  if (!last) return [];
  const c = last.confighash;
  const watches = totalOf(c.watches);
  const resyncGets = verbTotal(shownOnly(c.resync.requests), 'GET');
  const changeLists = verbTotal(shownOnly(c.oneChange.requests), 'LIST');
  const rollouts = (s: StartFigures) => s.acted + (s.requests['POST replicasets'] ?? 0);
  const restartRollouts = rollouts(c.restart);
  const [, p99] = latencyPercentiles(c.latenciesMs);
  const p99Limit = result.defaults.debounceS + 2;
  const at = `at ${last.namespaces.toLocaleString('en-US')} namespaces`;
  const targets: Target[] = [
    {
      name: `follower watch connections ${at}`,
      measured: String(watches),
      limit: '≤ 8',
      holds: watches <= 8,
    },
    {
      name: `follower RSS, steady ${at}`,
      measured: mb(c.steadyMb),
      limit: '≤ 150 MB',
      holds: c.steadyMb <= 150,
    },
    {
      name: `GETs of a resync with nothing changed ${at}`,
      measured: String(resyncGets),
      limit: '0',
      holds: resyncGets === 0 && c.resync.complete,
    },
    {
      name: `LISTs for a one-workload change ${at}`,
      measured: String(changeLists),
      limit: '0',
      holds: changeLists === 0,
    },
    {
      name: `rollouts when a restarted follower takes the lead ${at} (touches + new ReplicaSets)`,
      measured: String(restartRollouts),
      limit: '0',
      holds: restartRollouts === 0,
    },
    {
      name: `change → rollout, p99 of ${c.latenciesMs.length} changes ${at}`,
      measured: seconds(p99),
      limit: `≤ debounce + 2 s = ${p99Limit} s`,
      holds: p99 <= p99Limit,
    },
    {
      name: `a serving replica's RSS ${at}, started there`,
      measured: mb(result.fresh.rssMb),
      limit: '≤ 80 MB',
      holds: result.fresh.rssMb <= 80,
    },
  ];
  if (last.reloader) {
    targets.push({
      name: `follower RSS below Reloader's on the same objects ${at} (steady)`,
      measured: `${mb(c.steadyMb)} vs ${mb(last.reloader.steadyMb)}`,
      limit: '<',
      holds: c.steadyMb < last.reloader.steadyMb,
    });
  }
  return targets;
}

/** The fan-out measured, the rate it implies, and the drain of 5,000 workloads at the defaults. */
export function fanoutNote(result: ScaleResult): string {
  const last = result.rows[result.rows.length - 1];
  if (!last) return '';
  const { workloads, drainS } = last.confighash.fanout;
  const { rate, burst, debounceS } = result.defaults;
  const implied = (workloads - burst) / Math.max(0.001, drainS - debounceS);
  return `Fan-out: one ConfigMap read by ${workloads} Deployments of one namespace, changed once; its drain is the time from the change to the follower's last touch. At the defaults (debounce ${debounceS} s, ${rate} touches/s after a burst of ${burst}) that is ${debounceS} s + (N − ${burst}) ÷ ${rate}: ${seconds(drainSeconds(workloads, result.defaults))} expected for ${workloads}, ${seconds(drainS)} measured (${implied.toFixed(1)} touches/s after the burst), so 5,000 workloads drain in ≈ ${Math.round(drainSeconds(5000, result.defaults) / 60)} min.`;
}

export function scaleScenarioOf(result: ScaleResult): Scenario {
  const { plan } = result;
  const table = [memoryTable(result.rows), '', requestTable(result.rows)].join('\n');
  return {
    id: 'scale',
    title: 'Follow mode at cluster scale, Reloader beside it (real kube-apiserver, objects only)',
    runs: [],
    ratios: {},
    targets: scaleTargets(result),
    notes: [
      `Each size adds follow namespaces of 10 Deployments (replicas 0, every one annotated reloader.stakater.com/auto) and ${result.rows[0] ? result.rows[0].sources / result.rows[0].namespaces : 0} ConfigMaps and Secrets of 1 KiB, each Deployment reading 3 of them (a ConfigMap volume, a Secret envFrom, a ConfigMap key); plus one fan-out namespace of ${plan.fanout} Deployments reading one ConfigMap. The confighash webhook is registered throughout, so every write of a workload is hashed.`,
      `At each size the follower runs first (compiled \`confighash follow\` run as the follow Deployment runs it: Node.js ${process.version}, node ${plan.follower.runtime.nodeFlags.join(' ')}${Object.entries(
        plan.follower.runtime.env,
      )
        .map(([name, value]) => `, ${name}=${value}`)
        .join(
          '',
        )}, memory limit ${result.rows[0]?.confighash.memoryLimit ?? 'none'}; defaults but --follow-resync=${plan.follower.resyncS}s${plan.follower.evaluateRate === undefined ? '' : ` and --follow-evaluate-rate=${plan.follower.evaluateRate}`}), then Reloader v1.4.21 (--reload-strategy=annotations), never both at once: requests are deltas of the apiserver's apiserver_request_total around each step, so they include the webhook's lookups, the bench's own PUT of the source and the controllers' writes of a rollout; lease renewals, the apiserver's own endpoints reconciler and ended watches are left out of the table (not of the JSON). Watches are the rise of apiserver_longrunning_requests{verb="WATCH"} while the tool runs.`,
      '"Steady" is the RSS once the tool and the apiserver have both been quiet for 5 s after its start (its initial evaluation or informer sync done); "after a restart" is the same for a second follower process, whose start is the one in the request table (taking the lead over workloads it never saw). Change → rollout is the time from the PUT of a source to the new generation of the one workload reading it.',
      fanoutNote(result),
      `A serving replica (\`confighash serve\`) started at the largest size: ${mb(result.fresh.rssMb)} 5 s after ready, watches held: ${formatCounts(result.fresh.watches)}.`,
      ...(result.reloaderBuilt
        ? []
        : ['Reloader was not built (RELOADER_SRC unset): its columns are empty.']),
      `Whole scenario: ${Math.round(result.wallS / 60)} min (${result.rows.map((r) => `${r.namespaces} namespaces ${Math.round(r.wallS / 60)} min`).join(', ')}).`,
    ],
    details: { ...result, table },
  };
}
