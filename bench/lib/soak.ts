// Scenario 7: the soak — a steady rate for a while, RSS sampled every second.

import type { LoadResult } from '../procs/loadgen.js';
import { residentMb } from './children.js';
import { ADMISSION_TIMEOUT, type Context, log, NAMESPACE, STANDARD_SOURCES } from './context.js';
import { type LoadRun, noFailuresTarget, type Scenario } from './report.js';
import { startConfighash, wrongOutcomes } from './servers.js';
import { curve, median, ms, round, sortSamples, summarize } from './stats.js';
import { admissionReviewBody, benchSources } from './workload.js';

export async function soakScenario(
  context: Context,
  kubeconfig: string,
  stubConnections: () => Promise<number>,
): Promise<Scenario> {
  const { plan } = context;
  const webhook = await startConfighash(context, 'confighash-soak', kubeconfig);
  const body = admissionReviewBody(NAMESPACE, benchSources(STANDARD_SOURCES));
  const wrong = wrongOutcomes(webhook, 'patched');
  const idleMb = await residentMb(webhook.pid);
  const request = (durationS: number) => ({
    request: {
      url: `${webhook.url}?timeout=${ADMISSION_TIMEOUT}`,
      body,
      connections: 8,
      durationS,
      warmupS: 0,
      rate: plan.soakRate,
    },
  });
  const warmupS = Math.min(10, Math.max(2, plan.soakS / 6));
  const warm = await context.loadgen.call<LoadResult>('run', request(warmupS));
  const startMb = await residentMb(webhook.pid);
  const connectionsBefore = await stubConnections();
  const wrongBefore = await wrong();
  const series: [number, number][] = [[0, startMb]];
  const started = Date.now();
  const sampler = setInterval(() => {
    void residentMb(webhook.pid).then((mb) => series.push([(Date.now() - started) / 1000, mb]));
  }, 1000);
  const result = await context.loadgen.call<LoadResult>('run', request(plan.soakS));
  clearInterval(sampler);
  const endMb = await residentMb(webhook.pid);
  const connections = (await stubConnections()) - connectionsBefore;
  const wrongCount = (await wrong()) - wrongBefore;
  await webhook.stop();
  const failures =
    result.errors + result.timeouts + result.non2xx + wrongCount + warm.non2xx + warm.errors;
  const maxMb = Math.max(...series.map(([, mb]) => mb), endMb);
  const growth = endMb / startMb - 1;
  // RSS is a sawtooth between major GCs: single samples at the start and the end can land
  // on a peak or a trough. The trend compares the medians of the first and last thirds.
  series.sort((a, b) => a[0] - b[0]);
  const third = Math.max(1, Math.floor(series.length / 3));
  const firstThird = median(series.slice(0, third).map(([, mb]) => mb));
  const lastThird = median(series.slice(-third).map(([, mb]) => mb));
  const trend = lastThird / firstThird - 1;
  const sorted = sortSamples(result.samplesUs);
  const run: LoadRun = {
    target: 'confighash',
    concurrency: 8,
    responses: result.responses,
    rps: result.responses / result.elapsedS,
    failures,
    latency: summarize(sorted),
    curve: curve(sorted),
    apiConnections: connections,
    apiConnectionsPer1k: (connections / Math.max(1, result.responses)) * 1000,
  };
  log(
    `  soak: ${result.responses} reviews, ${failures} failed, RSS idle ${idleMb.toFixed(1)} MB, start ${startMb.toFixed(1)} MB, end ${endMb.toFixed(1)} MB, max ${maxMb.toFixed(1)} MB`,
  );
  const table = [
    '| reviews | rate | p50 ms | p99 ms | failed | RSS idle | RSS start | RSS end | RSS max | start → end | median, first → last third |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    `| ${result.responses.toLocaleString('en-US')} in ${plan.soakS} s | ${run.rps.toFixed(0)}/s | ${ms(run.latency.p50Us)} | ${ms(run.latency.p99Us)} | ${failures} | ${idleMb.toFixed(1)} MB | ${startMb.toFixed(1)} MB | ${endMb.toFixed(1)} MB | ${maxMb.toFixed(1)} MB | ${(growth * 100).toFixed(1)} % | ${firstThird.toFixed(0)} → ${lastThird.toFixed(0)} MB (${(trend * 100).toFixed(1)} %) |`,
  ].join('\n');
  return {
    id: '7',
    title: `Soak: ${plan.soakS} s at ${plan.soakRate} reviews/s (c=8, API stub, a new resourceVersion on every read)`,
    runs: [],
    ratios: {
      rssGrowth: round(growth, 4),
      rssTrend: round(trend, 4),
      rssEndMb: round(endMb, 1),
      rssMaxMb: round(maxMb, 1),
    },
    targets: [
      {
        name: 'RSS, highest sample (the end in brackets)',
        measured: `${maxMb.toFixed(1)} MB (${endMb.toFixed(1)})`,
        limit: '≤ 100 MB',
        holds: maxMb <= 100,
      },
      {
        name: 'RSS growth: median of the last third ÷ first third (start → end samples in the table)',
        measured: `${(trend * 100).toFixed(1)} % (${(growth * 100).toFixed(1)} %)`,
        limit: '≤ 10 %',
        holds: trend <= 0.1,
      },
      noFailuresTarget(failures),
    ],
    notes: [
      `RSS start is taken after ${warmupS} s of warm-up at the same rate; the series (one sample a second) is in the JSON. Under load RSS is a sawtooth (old-generation garbage accumulates until a major GC), so single samples can land on a peak or a trough: the growth target compares the medians of the first and last thirds, and a leak would show as rising troughs.`,
      'RSS idle is the webhook started and ready, before any review (scenario 8 measures it with a settle time).',
    ],
    details: { run, rssSeries: series, idleMb, table },
  };
}
