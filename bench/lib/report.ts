// What a bench run produces: one entry per scenario with its runs, the ratios
// against the floor measured in the same run, and the issue's targets; and the
// Markdown tables printed at the end (and pasted into BENCHMARKS.md).

import { type LatencySummary, ms, round } from './stats.js';

export interface LoadRun {
  /** floor-a, floor-b, confighash, floor-b-real, confighash-real. */
  readonly target: string;
  readonly concurrency: number;
  /** The scaled dimension of scenario 5 (sources, bytes per source, unrelated objects). */
  readonly parameter?: { readonly name: string; readonly value: number };
  readonly responses: number;
  readonly rps: number;
  /** Transport errors, timeouts, non-2xx answers, and reviews whose outcome was wrong. */
  readonly failures: number;
  readonly latency: LatencySummary;
  /** [percentile, µs] for the chart. */
  readonly curve: [number, number][];
  /** CPU time (user + system) per review of the server, the API stub and the load generator. */
  readonly cpuUsPerReview?: {
    readonly server: number;
    readonly api?: number;
    readonly loadgen: number;
  };
  /** Connections opened to the API during the measured window (after warm-up). */
  readonly apiConnections?: number;
  readonly apiConnectionsPer1k?: number;
}

export interface Target {
  readonly name: string;
  readonly measured: string;
  readonly limit: string;
  readonly holds: boolean;
}

/** Every scenario's last word: no review failed or was answered wrongly. */
export function noFailuresTarget(failures: number): Target {
  return {
    name: 'failed or wrong reviews',
    measured: String(failures),
    limit: '0',
    holds: failures === 0,
  };
}

/** Keep-alive reuse: API connections opened per 1,000 reviews, counted `how`. */
export function connectionsTarget(how: string, connections: number, reviews: number): Target {
  const per1k = (connections / reviews) * 1000;
  return {
    name: `API connections opened per 1,000 reviews (${how})`,
    measured: `${per1k.toFixed(2)} (${connections} for ${reviews.toLocaleString('en-US')})`,
    limit: '≤ 10',
    holds: per1k <= 10,
  };
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly runs: LoadRun[];
  readonly ratios: Record<string, number>;
  readonly targets: Target[];
  readonly notes: string[];
  readonly details?: Record<string, unknown>;
}

export interface BenchReport {
  readonly meta: Record<string, unknown>;
  readonly scenarios: Scenario[];
}

export const TARGET_LABELS: Readonly<Record<string, string>> = {
  'floor-a': 'floor (a): Fastify HTTPS, parse, allow',
  'floor-b': 'floor (b): (a) + GETs, bare keep-alive client, stub',
  confighash: 'confighash, API stub',
  'confighash-previous': 'confighash, previous build (--baseline), API stub',
  'floor-b-real': 'floor (b), real kube-apiserver',
  'confighash-real': 'confighash, real kube-apiserver',
};

export function renderMarkdown(report: BenchReport): string {
  const lines: string[] = [];
  const load = report.scenarios.filter((s) => s.runs.length > 0 && !s.id.startsWith('5'));
  if (load.length > 0) {
    lines.push(
      '| scenario | server | c | reviews/s | p50 ms | p90 ms | p99 ms | p99.9 ms | failed | server CPU µs / review | API conns / 1k reviews | reviews/s vs floor (b) |',
      '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const scenario of load) {
      for (const run of scenario.runs) {
        const ratio = scenario.ratios[`throughput.c${run.concurrency}`];
        const isSubject = run.target.startsWith('confighash') && !run.target.endsWith('-previous');
        lines.push(
          `| ${scenario.id} | ${TARGET_LABELS[run.target] ?? run.target} | ${run.concurrency} | ${run.rps.toFixed(0)} | ${ms(run.latency.p50Us)} | ${ms(run.latency.p90Us)} | ${ms(run.latency.p99Us)} | ${ms(run.latency.p999Us)} | ${run.failures} | ${run.cpuUsPerReview?.server ?? ''} | ${run.apiConnectionsPer1k === undefined ? '' : run.apiConnectionsPer1k.toFixed(1)} | ${isSubject && ratio !== undefined ? `${ratio.toFixed(2)} ×` : ''} |`,
        );
      }
    }
    lines.push('');
  }
  const notesOf = (scenario: Scenario) => scenario.notes.map((note) => `- ${note}`);
  for (const scenario of load) lines.push(`- ${scenario.id}: ${scenario.notes.join(' ')}`);
  if (load.length > 0) lines.push('');
  for (const scenario of report.scenarios.filter((s) => !load.includes(s))) {
    lines.push(`**${scenario.id}. ${scenario.title}**`, '');
    if (scenario.runs.length > 0) {
      lines.push(
        '| parameter | server | c | reviews/s | p50 ms | p99 ms | failed | server CPU µs / review | API conns / 1k |',
        '|---|---|--:|--:|--:|--:|--:|--:|--:|',
      );
      for (const run of scenario.runs) {
        lines.push(
          `| ${run.parameter ? formatParameter(run.parameter) : ''} | ${TARGET_LABELS[run.target] ?? run.target} | ${run.concurrency} | ${run.rps.toFixed(0)} | ${ms(run.latency.p50Us)} | ${ms(run.latency.p99Us)} | ${run.failures} | ${run.cpuUsPerReview?.server ?? ''} | ${run.apiConnectionsPer1k === undefined ? '' : run.apiConnectionsPer1k.toFixed(1)} |`,
        );
      }
      lines.push('');
    }
    const extra = scenario.details?.table;
    if (typeof extra === 'string') lines.push(extra, '');
    if (scenario.notes.length > 0) lines.push(...notesOf(scenario), '');
  }
  const targets = report.scenarios.flatMap((s) => s.targets.map((t) => ({ scenario: s.id, ...t })));
  if (targets.length > 0) {
    lines.push('**Targets**', '');
    lines.push('| scenario | target | measured | limit | holds |', '|---|---|--:|--:|:-:|');
    for (const target of targets) {
      lines.push(
        `| ${target.scenario} | ${target.name} | ${target.measured} | ${target.limit} | ${target.holds ? 'yes' : '**no**'} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

export function formatParameter(parameter: { name: string; value: number }): string {
  if (parameter.name === 'bytes per source') return `${formatBytes(parameter.value)} per source`;
  return `${parameter.value.toLocaleString('en-US')} ${parameter.name}`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${round(bytes / 1024 / 1024)} MiB`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KiB`;
  return `${bytes} B`;
}
