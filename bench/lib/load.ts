// Load runs: the load generator against each target in interleaved rounds, and
// the server CPU per review read from /proc.

import type { LoadResult } from '../procs/loadgen.js';
import { cpuUs } from './children.js';
import { ADMISSION_TIMEOUT, type Context, log } from './context.js';
import { formatParameter, type LoadRun } from './report.js';
import { curve, ms, round, sortSamples, summarize } from './stats.js';

export interface LoadTarget {
  readonly id: string;
  readonly url: string;
  readonly body: string;
  /** Connections opened to the API so far (a counter). */
  readonly apiConnections?: () => Promise<number>;
  /** Reviews answered with the wrong outcome so far (a counter). */
  readonly wrongOutcomes?: () => Promise<number>;
  /** The server process (its CPU time per review is reported) and the API stub's, if any. */
  readonly serverPid: number;
  readonly apiPid?: number;
}

export interface Accumulator {
  samples: number[];
  responses: number;
  elapsedS: number;
  failures: number;
  connections: number;
  counted: boolean;
  serverCpuUs: number;
  apiCpuUs: number;
  loadgenCpuUs: number;
}

export async function measureTargets(
  context: Context,
  targets: readonly LoadTarget[],
  concurrencies: readonly number[],
  options: { rounds?: number; parameter?: LoadRun['parameter'] } = {},
): Promise<LoadRun[]> {
  const rounds = options.rounds ?? context.plan.rounds;
  const runs: LoadRun[] = [];
  for (const concurrency of concurrencies) {
    const totals = new Map(targets.map((t) => [t.id, emptyAccumulator()]));
    for (let round = 0; round < rounds; round++) {
      // Rotate the order, so that no target always runs first (or after the same one).
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) {
        await measureRound(context, target, concurrency, totals.get(target.id)!);
      }
    }
    for (const target of targets) {
      const run = loadRunOf(target, concurrency, totals.get(target.id)!, options.parameter);
      runs.push(run);
      logRun(run, options.parameter);
    }
  }
  return runs;
}

export function emptyAccumulator(): Accumulator {
  return {
    samples: [],
    responses: 0,
    elapsedS: 0,
    failures: 0,
    connections: 0,
    counted: false,
    serverCpuUs: 0,
    apiCpuUs: 0,
    loadgenCpuUs: 0,
  };
}

export interface RoundTiming {
  /** 0: no warm-up. */
  readonly warmupS: number;
  readonly measureS: number;
  /** Measure until this many reviews are answered (`measureS` is then not used). */
  readonly reviews?: number;
}

/** One target's turn in a round: a warm-up, then the measured window, added to `total`. */
export async function measureRound(
  context: Context,
  target: LoadTarget,
  concurrency: number,
  total: Accumulator,
  timing: RoundTiming = context.plan,
): Promise<void> {
  const { loadgen } = context;
  const load = (durationS: number, amount?: number) =>
    loadgen.call<LoadResult>('run', {
      request: {
        url: `${target.url}?timeout=${ADMISSION_TIMEOUT}`,
        body: target.body,
        connections: concurrency,
        durationS,
        warmupS: 0,
        ...(amount ? { amount } : {}),
      },
    });
  const warm = timing.warmupS > 0 ? await load(timing.warmupS) : undefined;
  // Connections are counted over the measured window only: the warm-up opened the pool.
  const connectionsBefore = await target.apiConnections?.();
  const wrongBefore = (await target.wrongOutcomes?.()) ?? 0;
  const cpuBefore = await cpuOf(target, loadgen.pid);
  const result = await load(timing.measureS, timing.reviews);
  const cpuAfter = await cpuOf(target, loadgen.pid);
  total.serverCpuUs += cpuAfter.server - cpuBefore.server;
  total.apiCpuUs += cpuAfter.api - cpuBefore.api;
  total.loadgenCpuUs += cpuAfter.loadgen - cpuBefore.loadgen;
  const connectionsAfter = await target.apiConnections?.();
  const wrongAfter = (await target.wrongOutcomes?.()) ?? 0;
  for (const sample of result.samplesUs) total.samples.push(sample);
  total.responses += result.responses;
  total.elapsedS += result.elapsedS;
  total.failures +=
    result.errors +
    result.timeouts +
    result.non2xx +
    wrongAfter -
    wrongBefore +
    (warm?.non2xx ?? 0);
  if (connectionsBefore !== undefined && connectionsAfter !== undefined) {
    total.connections += connectionsAfter - connectionsBefore;
    total.counted = true;
  }
}

function loadRunOf(
  target: LoadTarget,
  concurrency: number,
  total: Accumulator,
  parameter: LoadRun['parameter'] | undefined,
): LoadRun {
  const sorted = sortSamples(total.samples);
  return {
    target: target.id,
    concurrency,
    ...(parameter ? { parameter } : {}),
    responses: total.responses,
    rps: total.responses / total.elapsedS,
    failures: total.failures,
    latency: summarize(sorted),
    curve: curve(sorted),
    cpuUsPerReview: {
      server: Math.round(total.serverCpuUs / total.responses),
      ...(target.apiPid ? { api: Math.round(total.apiCpuUs / total.responses) } : {}),
      loadgen: Math.round(total.loadgenCpuUs / total.responses),
    },
    ...(total.counted
      ? {
          apiConnections: total.connections,
          apiConnectionsPer1k: (total.connections / Math.max(1, total.responses)) * 1000,
        }
      : {}),
  };
}

function logRun(run: LoadRun, parameter: LoadRun['parameter'] | undefined): void {
  log(
    `  ${run.target.padEnd(16)} c=${String(run.concurrency).padStart(2)}${parameter ? ` ${formatParameter(parameter)}` : ''}: ${run.rps.toFixed(0)} reviews/s, p50 ${ms(run.latency.p50Us)} ms, p99 ${ms(run.latency.p99Us)} ms, CPU/review ${run.cpuUsPerReview?.server} µs${run.apiConnections === undefined ? '' : `, ${run.apiConnections} API connections`}${run.failures > 0 ? `, ${run.failures} FAILED` : ''}`,
  );
}

export async function cpuOf(target: LoadTarget, loadgenPid: number) {
  return {
    server: await cpuUs(target.serverPid),
    api: target.apiPid ? await cpuUs(target.apiPid) : 0,
    loadgen: await cpuUs(loadgenPid),
  };
}

export function find(
  runs: readonly LoadRun[],
  target: string,
  concurrency: number,
  value?: number,
) {
  return runs.find(
    (r) =>
      r.target === target &&
      r.concurrency === concurrency &&
      (value === undefined || r.parameter?.value === value),
  );
}

/** The subject's runs against floor (b)'s at each concurrency, and what they add up to. */
export function compareWithFloor(runs: readonly LoadRun[], subjectId: string, floorId: string) {
  const subject = runs.filter((r) => r.target === subjectId);
  const ratios: Record<string, number> = {};
  for (const run of subject) {
    const floor = find(runs, floorId, run.concurrency)!;
    ratios[`throughput.c${run.concurrency}`] = round(run.rps / floor.rps, 3);
    ratios[`p50DeltaMs.c${run.concurrency}`] = round(
      (run.latency.p50Us - floor.latency.p50Us) / 1000,
      3,
    );
  }
  const connections = subject.reduce((n, r) => n + (r.apiConnections ?? 0), 0);
  const reviews = subject.reduce((n, r) => n + r.responses, 0);
  ratios.apiConnectionsPer1k = round((connections / reviews) * 1000, 2);
  const failures = subject.reduce((n, r) => n + r.failures, 0);
  return { subject, ratios, connections, reviews, failures };
}
