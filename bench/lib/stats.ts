// Latency summaries from every sample (microseconds), and the comparisons the
// issue's targets are written in.

export interface LatencySummary {
  readonly count: number;
  readonly meanUs: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly p999Us: number;
  readonly maxUs: number;
}

/** Percentiles plotted in the chart: dense in the tail. */
export const CURVE_PERCENTILES = [
  0, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 99.75, 99.9, 99.95, 99.99, 100,
] as const;

export function sortSamples(samples: readonly number[]): Float64Array {
  return Float64Array.from(samples).sort();
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(sorted: Float64Array): LatencySummary {
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    meanUs: sorted.length > 0 ? total / sorted.length : Number.NaN,
    p50Us: percentile(sorted, 50),
    p90Us: percentile(sorted, 90),
    p99Us: percentile(sorted, 99),
    p999Us: percentile(sorted, 99.9),
    maxUs: percentile(sorted, 100),
  };
}

export function curve(sorted: Float64Array): [number, number][] {
  return CURVE_PERCENTILES.map((p) => [p, percentile(sorted, p)]);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function ms(us: number): string {
  if (!Number.isFinite(us)) return '–';
  return us >= 100_000 ? `${(us / 1000).toFixed(0)}` : (us / 1000).toFixed(us >= 10_000 ? 1 : 2);
}
