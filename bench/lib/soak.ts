// Scenario 7: the soak — a steady rate for a while, RSS sampled every second.

import type { LoadResult } from '../procs/loadgen.js';
import { residentMb, type Webhook } from './children.js';
import {
  ADMISSION_TIMEOUT,
  type Context,
  log,
  NAMESPACE,
  type Plan,
  STANDARD_SOURCES,
} from './context.js';
import { type LoadRun, noFailuresTarget, type Scenario, type Target } from './report.js';
import { startConfighash, wrongOutcomes } from './servers.js';
import { curve, median, ms, round, sortSamples, summarize } from './stats.js';
import { admissionReviewBody, benchSources } from './workload.js';

const CONNECTIONS = 8;

/** What one soak measured, before any of it is summarized. */
interface SoakMeasurement {
  readonly warmupS: number;
  readonly warm: LoadResult;
  readonly result: LoadResult;
  readonly idleMb: number;
  readonly startMb: number;
  readonly endMb: number;
  /** [seconds into the timed run, RSS MB], one a second. */
  readonly series: [number, number][];
  readonly connections: number;
  readonly wrongCount: number;
}

interface RssSummary {
  readonly maxMb: number;
  /** End ÷ start − 1. */
  readonly growth: number;
  readonly firstThird: number;
  readonly lastThird: number;
  /** Median of the last third ÷ median of the first third − 1. */
  readonly trend: number;
}

export async function soakScenario(
  context: Context,
  kubeconfig: string,
  stubConnections: () => Promise<number>,
): Promise<Scenario> {
  const webhook = await startConfighash(context, 'confighash-soak', kubeconfig);
  const soak = await measureSoak(context, webhook, stubConnections);
  await webhook.stop();
  const { warm, result } = soak;
  const failures =
    result.errors + result.timeouts + result.non2xx + soak.wrongCount + warm.non2xx + warm.errors;
  const rss = summarizeRss(soak);
  const run = soakRun(result, failures, soak.connections);
  log(
    `  soak: ${result.responses} reviews, ${failures} failed, RSS idle ${soak.idleMb.toFixed(1)} MB, start ${soak.startMb.toFixed(1)} MB, end ${soak.endMb.toFixed(1)} MB, max ${rss.maxMb.toFixed(1)} MB`,
  );
  return soakReport(context.plan, soak, rss, run, failures);
}

/** Warm-up at the soak's rate, then the timed run with RSS sampled every second. */
async function measureSoak(
  context: Context,
  webhook: Webhook,
  stubConnections: () => Promise<number>,
): Promise<SoakMeasurement> {
  const { plan } = context;
  const body = admissionReviewBody(NAMESPACE, benchSources(STANDARD_SOURCES));
  const wrong = wrongOutcomes(webhook, 'patched');
  const idleMb = await residentMb(webhook.pid);
  const load = (durationS: number) =>
    context.loadgen.call<LoadResult>('run', {
      request: {
        url: `${webhook.url}?timeout=${ADMISSION_TIMEOUT}`,
        body,
        connections: CONNECTIONS,
        durationS,
        warmupS: 0,
        rate: plan.soakRate,
      },
    });
  const warmupS = Math.min(10, Math.max(2, plan.soakS / 6));
  const warm = await load(warmupS);
  const startMb = await residentMb(webhook.pid);
  const connectionsBefore = await stubConnections();
  const wrongBefore = await wrong();
  const sampler = sampleRss(webhook.pid, startMb);
  const result = await load(plan.soakS);
  const series = sampler.stop();
  const endMb = await residentMb(webhook.pid);
  const connections = (await stubConnections()) - connectionsBefore;
  const wrongCount = (await wrong()) - wrongBefore;
  return { warmupS, warm, result, idleMb, startMb, endMb, series, connections, wrongCount };
}

/** RSS of `pid` once a second, from `startMb` at 0 s; `stop` ends it and returns the series. */
function sampleRss(pid: number, startMb: number): { stop(): [number, number][] } {
  const series: [number, number][] = [[0, startMb]];
  const started = Date.now();
  const sampler = setInterval(() => {
    void residentMb(pid).then((mb) => series.push([(Date.now() - started) / 1000, mb]));
  }, 1000);
  return {
    stop() {
      clearInterval(sampler);
      return series;
    },
  };
}

/** Sorts the series in place (it is reported sorted). */
function summarizeRss({ series, startMb, endMb }: SoakMeasurement): RssSummary {
  const maxMb = Math.max(...series.map(([, mb]) => mb), endMb);
  const growth = endMb / startMb - 1;
  // RSS is a sawtooth between major GCs: single samples at the start and the end can land
  // on a peak or a trough. The trend compares the medians of the first and last thirds.
  series.sort((a, b) => a[0] - b[0]);
  const third = Math.max(1, Math.floor(series.length / 3));
  const firstThird = median(series.slice(0, third).map(([, mb]) => mb));
  const lastThird = median(series.slice(-third).map(([, mb]) => mb));
  return { maxMb, growth, firstThird, lastThird, trend: lastThird / firstThird - 1 };
}

function soakRun(result: LoadResult, failures: number, connections: number): LoadRun {
  const sorted = sortSamples(result.samplesUs);
  return {
    target: 'confighash',
    concurrency: CONNECTIONS,
    responses: result.responses,
    rps: result.responses / result.elapsedS,
    failures,
    latency: summarize(sorted),
    curve: curve(sorted),
    apiConnections: connections,
    apiConnectionsPer1k: (connections / Math.max(1, result.responses)) * 1000,
  };
}

function soakReport(
  plan: Plan,
  soak: SoakMeasurement,
  rss: RssSummary,
  run: LoadRun,
  failures: number,
): Scenario {
  return {
    id: '7',
    title: `Soak: ${plan.soakS} s at ${plan.soakRate} reviews/s (c=8, API stub, a new resourceVersion on every read)`,
    runs: [],
    ratios: {
      rssGrowth: round(rss.growth, 4),
      rssTrend: round(rss.trend, 4),
      rssEndMb: round(soak.endMb, 1),
      rssMaxMb: round(rss.maxMb, 1),
    },
    targets: soakTargets(soak, rss, failures),
    notes: [
      `RSS start is taken after ${soak.warmupS} s of warm-up at the same rate; the series (one sample a second) is in the JSON. Under load RSS is a sawtooth (old-generation garbage accumulates until a major GC), so single samples can land on a peak or a trough: the growth target compares the medians of the first and last thirds, and a leak would show as rising troughs.`,
      'RSS idle is the webhook started and ready, before any review (scenario 8 measures it with a settle time).',
    ],
    details: {
      run,
      rssSeries: soak.series,
      idleMb: soak.idleMb,
      table: soakTable(plan, soak, rss, run, failures),
    },
  };
}

function soakTargets(soak: SoakMeasurement, rss: RssSummary, failures: number): Target[] {
  return [
    {
      name: 'RSS, highest sample (the end in brackets)',
      measured: `${rss.maxMb.toFixed(1)} MB (${soak.endMb.toFixed(1)})`,
      limit: '≤ 100 MB',
      holds: rss.maxMb <= 100,
    },
    {
      name: 'RSS growth: median of the last third ÷ first third (start → end samples in the table)',
      measured: `${(rss.trend * 100).toFixed(1)} % (${(rss.growth * 100).toFixed(1)} %)`,
      limit: '≤ 10 %',
      holds: rss.trend <= 0.1,
    },
    noFailuresTarget(failures),
  ];
}

function soakTable(
  plan: Plan,
  soak: SoakMeasurement,
  rss: RssSummary,
  run: LoadRun,
  failures: number,
): string {
  const mb = (value: number) => `${value.toFixed(1)} MB`;
  return [
    '| reviews | rate | p50 ms | p99 ms | failed | RSS idle | RSS start | RSS end | RSS max | start → end | median, first → last third |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    `| ${run.responses.toLocaleString('en-US')} in ${plan.soakS} s | ${run.rps.toFixed(0)}/s | ${ms(run.latency.p50Us)} | ${ms(run.latency.p99Us)} | ${failures} | ${mb(soak.idleMb)} | ${mb(soak.startMb)} | ${mb(soak.endMb)} | ${mb(rss.maxMb)} | ${(rss.growth * 100).toFixed(1)} % | ${rss.firstThird.toFixed(0)} → ${rss.lastThird.toFixed(0)} MB (${(rss.trend * 100).toFixed(1)} %) |`,
  ].join('\n');
}
