// The arithmetic of the ratio run (scenario `ratio`, BENCHMARKS.md): confighash, floor (c) and
// floor (b) loaded in alternating blocks of one run; per block pair, confighash ÷ the floor for
// CPU per review and throughput and the p50 confighash adds; over the pairs of one floor and one
// concurrency, the median and the spread (min–max); and the verdicts on the targets, which are
// against floor (c) (floor (b) is reported beside it, for the record). Figures in, figures out.

import type { Accumulator } from './load.js';
import type { Target } from './report.js';
import { median, percentile, round, sortSamples } from './stats.js';

/** (b): the GETs through a keep-alive HTTP/1.1 agent; (c): over one bare HTTP/2 session. */
export type FloorServer = 'floor-b' | 'floor-c';
export type RatioServer = 'confighash' | FloorServer;
export const FLOORS: readonly FloorServer[] = ['floor-c', 'floor-b'];
const FLOOR_NAMES: Readonly<Record<FloorServer, string>> = {
  'floor-b': 'floor (b)',
  'floor-c': 'floor (c)',
};

/** One block: one load round of fixed length against one server, what it answered and cost. */
export interface Block {
  readonly server: RatioServer;
  readonly reviews: number;
  /** From the first request to the last answer. */
  readonly seconds: number;
  /** The server process's CPU time (user + system) over the block ÷ the reviews it answered. */
  readonly cpuPerReviewUs: number;
  readonly reviewsPerS: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly failures: number;
  /** Cores the server used over the block: near 1, its own core set the pace. */
  readonly serverCores: number;
  /** Cores the load generator and the API stub used: near 1, their core set the pace. */
  readonly loadSideCores: number;
}

export function blockOf(server: RatioServer, measured: Accumulator): Block {
  const sorted = sortSamples(measured.samples);
  const windowUs = measured.elapsedS * 1e6;
  return {
    server,
    reviews: measured.responses,
    seconds: round(measured.elapsedS, 3),
    cpuPerReviewUs: round(measured.serverCpuUs / measured.responses, 1),
    reviewsPerS: round(measured.responses / measured.elapsedS, 1),
    p50Us: percentile(sorted, 50),
    p99Us: percentile(sorted, 99),
    failures: measured.failures,
    serverCores: round(measured.serverCpuUs / windowUs, 2),
    loadSideCores: round((measured.apiCpuUs + measured.loadgenCpuUs) / windowUs, 2),
  };
}

/** A confighash block and a floor's block of the same round, and what confighash costs over it. */
export interface BlockPair {
  readonly first: RatioServer;
  readonly confighash: Block;
  /** Its `server` says which floor. */
  readonly floor: Block;
  /** confighash's CPU per review ÷ the floor's. */
  readonly cpu: number;
  /** confighash's reviews/s ÷ the floor's. */
  readonly throughput: number;
  /** confighash's p50 − the floor's, in ms. */
  readonly p50AddedMs: number;
}

export function pairOf(first: RatioServer, confighash: Block, floor: Block): BlockPair {
  return {
    first,
    confighash,
    floor,
    cpu: round(confighash.cpuPerReviewUs / floor.cpuPerReviewUs, 3),
    throughput: round(confighash.reviewsPerS / floor.reviewsPerS, 3),
    p50AddedMs: round((confighash.p50Us - floor.p50Us) / 1000, 3),
  };
}

/**
 * The order of round `index`'s three blocks: confighash, floor (c), floor (b), then the
 * reverse, and so on (A C B, B C A, A C B, …). confighash and floor (c), the pair the targets
 * judge, are always next to each other and take turns going first, so that a load that grows or
 * fades over the run weighs on both alike; floor (b) is one block further off, by turns before
 * and after.
 */
export function roundOrder(index: number): readonly [RatioServer, RatioServer, RatioServer] {
  return index % 2 === 0
    ? ['confighash', 'floor-c', 'floor-b']
    : ['floor-b', 'floor-c', 'confighash'];
}

/** The pair of round `blocks` (in the order they ran) for `floor`: which of the two went first. */
export function pairIn(blocks: readonly Block[], floor: FloorServer): BlockPair {
  const confighash = blocks.find((b) => b.server === 'confighash');
  const floorBlock = blocks.find((b) => b.server === floor);
  if (!confighash || !floorBlock) throw new Error(`no confighash and ${floor} blocks in the round`);
  const first = blocks.indexOf(confighash) < blocks.indexOf(floorBlock) ? 'confighash' : floor;
  return pairOf(first, confighash, floorBlock);
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('no values to take a median of');
  return {
    median: round(median(values), 3),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

export type Figure = 'cpu' | 'throughput' | 'p50AddedMs';

/** The three figures of one floor and one concurrency, each a median and a spread over its pairs. */
export interface RatioSummary {
  readonly floor: FloorServer;
  readonly concurrency: number;
  readonly pairs: number;
  readonly figures: Readonly<Record<Figure, Spread>>;
}

export function summarizePairs(
  floor: FloorServer,
  concurrency: number,
  pairs: readonly BlockPair[],
): RatioSummary {
  if (pairs.some((p) => p.floor.server !== floor)) throw new Error(`a pair not against ${floor}`);
  return {
    floor,
    concurrency,
    pairs: pairs.length,
    figures: {
      cpu: spreadOf(pairs.map((p) => p.cpu)),
      throughput: spreadOf(pairs.map((p) => p.throughput)),
      p50AddedMs: spreadOf(pairs.map((p) => p.p50AddedMs)),
    },
  };
}

/** What each figure is, for tables and target names. */
const FIGURES: Readonly<Record<Figure, { readonly name: string; readonly unit: 'ratio' | 'ms' }>> =
  {
    cpu: { name: 'CPU per review, confighash ÷', unit: 'ratio' },
    throughput: { name: 'throughput, confighash ÷', unit: 'ratio' },
    p50AddedMs: { name: 'p50 added, confighash −', unit: 'ms' },
  };

const figureName = (figure: Figure, floor: FloorServer) =>
  `${FIGURES[figure].name} ${FLOOR_NAMES[floor]}`;

export interface RatioTarget {
  readonly floor: FloorServer;
  readonly figure: Figure;
  readonly concurrency: number;
  readonly bound: 'at most' | 'at least';
  readonly limit: number;
}

/** The targets the ratio run judges, on the median over the pairs: against floor (c), at both. */
export const RATIO_TARGETS: readonly RatioTarget[] = [1, 32].flatMap((concurrency) => [
  { floor: 'floor-c', figure: 'cpu', concurrency, bound: 'at most', limit: 1.3 } as const,
  { floor: 'floor-c', figure: 'throughput', concurrency, bound: 'at least', limit: 0.8 } as const,
  { floor: 'floor-c', figure: 'p50AddedMs', concurrency, bound: 'at most', limit: 0.5 } as const,
]);

const summaryOf = (
  summaries: readonly RatioSummary[],
  floor: FloorServer,
  concurrency: number,
): RatioSummary | undefined =>
  summaries.find((s) => s.floor === floor && s.concurrency === concurrency);

export function holds(target: RatioTarget, value: number): boolean {
  return target.bound === 'at most' ? value <= target.limit : value >= target.limit;
}

export function ratioTargets(
  summaries: readonly RatioSummary[],
  targets: readonly RatioTarget[] = RATIO_TARGETS,
): Target[] {
  return targets.map((target) => {
    const summary = summaryOf(summaries, target.floor, target.concurrency);
    if (!summary) {
      throw new Error(`no pairs against ${target.floor} at c=${target.concurrency} for its target`);
    }
    const spread = summary.figures[target.figure];
    const unit = FIGURES[target.figure].unit;
    return {
      name: `${figureName(target.figure, target.floor)}, median over the pairs at c=${target.concurrency}`,
      measured: `${formatSpread(spread, unit)}, ${summary.pairs} pairs`,
      limit: `${target.bound === 'at most' ? '≤' : '≥'} ${formatValue(target.limit, unit)}`,
      holds: holds(target, spread.median),
    };
  });
}

/**
 * `floor-c.c32.cpu.median` and so on: the report's flat ratios. (Before floor (c), 2026-12-08,
 * the keys had no floor: `c32.cpu.median` was against floor (b).)
 */
export function ratioRecord(summaries: readonly RatioSummary[]): Record<string, number> {
  const record: Record<string, number> = {};
  for (const summary of summaries) {
    for (const figure of Object.keys(FIGURES) as Figure[]) {
      const spread = summary.figures[figure];
      for (const key of ['median', 'min', 'max'] as const) {
        record[`${summary.floor}.c${summary.concurrency}.${figure}.${key}`] = spread[key];
      }
    }
  }
  return record;
}

/**
 * Per floor and concurrency, the median and spread of each figure, and PASS or miss where a
 * target applies.
 */
export function ratioTable(
  summaries: readonly RatioSummary[],
  targets: readonly RatioTarget[] = RATIO_TARGETS,
): string {
  const figures = Object.keys(FIGURES) as Figure[];
  const lines = [
    `| against | c | pairs | ${figures.map((f) => `${FIGURES[f].name} floor`).join(' | ')} |`,
    `|---|--:|--:|${figures.map(() => '--:').join('|')}|`,
  ];
  for (const summary of summaries) {
    const cells = figures.map((figure) => {
      const spread = summary.figures[figure];
      const unit = FIGURES[figure].unit;
      const target = targets.find(
        (t) =>
          t.floor === summary.floor && t.figure === figure && t.concurrency === summary.concurrency,
      );
      const verdict = target
        ? ` ${holds(target, spread.median) ? 'PASS' : '**miss**'} (${target.bound === 'at most' ? '≤' : '≥'} ${formatValue(target.limit, unit)})`
        : '';
      return `${formatSpread(spread, unit)}${verdict}`;
    });
    lines.push(
      `| ${FLOOR_NAMES[summary.floor]} | ${summary.concurrency} | ${summary.pairs} | ${cells.join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function formatValue(value: number, unit: 'ratio' | 'ms', digits = 2): string {
  if (unit === 'ratio') return `${value.toFixed(digits)} ×`;
  return `${value < 0 ? '−' : '+'}${Math.abs(value).toFixed(digits)} ms`;
}

/**
 * The median to the 3 decimals it is judged at (a median of 0.799 shown as 0.80 would read as a
 * pass beside its miss), the spread to 2.
 */
function formatSpread(spread: Spread, unit: 'ratio' | 'ms'): string {
  const bare = (value: number) => `${value < 0 ? '−' : ''}${Math.abs(value).toFixed(2)}`;
  return `${formatValue(spread.median, unit, 3)} (${bare(spread.min)}–${bare(spread.max)})`;
}
