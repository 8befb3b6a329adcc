// The arithmetic behind the ratio run (bench/lib/ratio.ts): blocks, pairs, medians, spreads
// and verdicts over given figures, no clock and no process.

import { describe, expect, it } from 'vitest';
import { type Accumulator, emptyAccumulator } from '../../bench/lib/load.js';
import {
  type Block,
  blockOf,
  type FloorServer,
  pairIn,
  pairOf,
  type RatioSummary,
  ratioRecord,
  ratioTable,
  ratioTargets,
  roundOrder,
  spreadOf,
  summarizePairs,
} from '../../bench/lib/ratio.js';

function measured(overrides: Partial<Accumulator>): Accumulator {
  return { ...emptyAccumulator(), elapsedS: 1, ...overrides };
}

/** A block with the figures a pair reads; the rest fixed. */
function block(
  server: Block['server'],
  cpuPerReviewUs: number,
  reviewsPerS: number,
  p50Us: number,
) {
  return {
    server,
    reviews: reviewsPerS * 4,
    seconds: 4,
    cpuPerReviewUs,
    reviewsPerS,
    p50Us,
    p99Us: p50Us * 3,
    failures: 0,
    serverCores: 0.9,
    loadSideCores: 0.5,
  } satisfies Block;
}

function summary(
  concurrency: number,
  cpu: number,
  throughput: number,
  p50AddedMs: number,
  floor: FloorServer = 'floor-c',
) {
  const exactly = (median: number) => ({ median, min: median - 0.1, max: median + 0.1 });
  return {
    floor,
    concurrency,
    pairs: 6,
    figures: {
      cpu: exactly(cpu),
      throughput: exactly(throughput),
      p50AddedMs: exactly(p50AddedMs),
    },
  } satisfies RatioSummary;
}

describe('blockOf', () => {
  it.each([
    {
      name: 'CPU per review is the CPU delta ÷ the reviews; throughput the reviews ÷ the seconds',
      input: {
        responses: 4000,
        elapsedS: 4,
        serverCpuUs: 1_200_000,
        apiCpuUs: 500_000,
        loadgenCpuUs: 1_500_000,
        samples: [900, 100, 500, 300, 700],
      },
      expected: {
        reviews: 4000,
        cpuPerReviewUs: 300,
        reviewsPerS: 1000,
        p50Us: 500,
        p99Us: 900,
        serverCores: 0.3,
        loadSideCores: 0.5,
      },
    },
    {
      name: 'a block cut short counts its own seconds, not the planned ones',
      input: { responses: 3000, elapsedS: 2.5, serverCpuUs: 2_250_000, samples: [2000, 1000] },
      expected: { reviewsPerS: 1200, cpuPerReviewUs: 750, p50Us: 1000, serverCores: 0.9 },
    },
  ])('$name', ({ input, expected }) => {
    expect(blockOf('confighash', measured(input))).toMatchObject(expected);
  });
});

describe('pairOf', () => {
  it('divides confighash by floor (b) for CPU and throughput, and subtracts the p50s in ms', () => {
    const pair = pairOf(
      'floor-b',
      block('confighash', 500, 500, 1200),
      block('floor-b', 300, 1000, 900),
    );
    expect(pair).toMatchObject({ first: 'floor-b', cpu: 1.667, throughput: 0.5, p50AddedMs: 0.3 });
  });

  it('gives a negative p50 added when confighash answered faster', () => {
    const pair = pairOf(
      'confighash',
      block('confighash', 100, 1000, 800),
      block('floor-b', 100, 1000, 1050),
    );
    expect(pair).toMatchObject({ cpu: 1, throughput: 1, p50AddedMs: -0.25 });
  });
});

describe('roundOrder', () => {
  it('runs confighash next to floor (c), each first by turns, floor (b) at the far end: A C B, B C A', () => {
    expect([0, 1, 2, 3].map(roundOrder)).toEqual([
      ['confighash', 'floor-c', 'floor-b'],
      ['floor-b', 'floor-c', 'confighash'],
      ['confighash', 'floor-c', 'floor-b'],
      ['floor-b', 'floor-c', 'confighash'],
    ]);
  });
});

describe('pairIn', () => {
  const round = (index: number) =>
    roundOrder(index).map((server) =>
      server === 'confighash' ? block(server, 500, 500, 1200) : block(server, 400, 800, 1000),
    );

  it.each([
    {
      name: 'A C B: confighash first against both floors',
      index: 0,
      c: 'confighash',
      b: 'confighash',
    },
    { name: 'B C A: each floor first', index: 1, c: 'floor-c', b: 'floor-b' },
  ])('$name', ({ index, c, b }) => {
    const blocks = round(index);
    expect(pairIn(blocks, 'floor-c')).toMatchObject({ first: c, cpu: 1.25, throughput: 0.625 });
    expect(pairIn(blocks, 'floor-c').floor.server).toBe('floor-c');
    expect(pairIn(blocks, 'floor-b')).toMatchObject({ first: b, p50AddedMs: 0.2 });
    expect(pairIn(blocks, 'floor-b').floor.server).toBe('floor-b');
  });

  it('refuses a round without the floor asked for', () => {
    expect(() =>
      pairIn([block('confighash', 1, 1, 1), block('floor-b', 1, 1, 1)], 'floor-c'),
    ).toThrow(/no confighash and floor-c blocks/);
  });
});

describe('spreadOf', () => {
  it.each([
    { name: 'odd count: the middle value', values: [1.5, 1.1, 1.3, 2.0, 1.2], median: 1.3 },
    { name: 'even count: the mean of the two middle values', values: [4, 1, 3, 2], median: 2.5 },
    { name: 'one value', values: [0.7], median: 0.7 },
  ])('$name', ({ values, median }) => {
    expect(spreadOf(values)).toEqual({
      median,
      min: Math.min(...values),
      max: Math.max(...values),
    });
  });

  it('refuses no values', () => {
    expect(() => spreadOf([])).toThrow(/no values/);
  });
});

describe('summarizePairs', () => {
  it('takes each figure over the pairs on its own: an outlier pair moves the spread, not the median', () => {
    const floor = block('floor-c', 200, 1000, 1000);
    const pairs = [
      pairOf('confighash', block('confighash', 260, 800, 1300), floor),
      pairOf('floor-c', block('confighash', 240, 900, 1200), floor),
      pairOf('confighash', block('confighash', 800, 100, 9000), floor),
      pairOf('floor-c', block('confighash', 280, 850, 1400), floor),
      pairOf('confighash', block('confighash', 250, 820, 1250), floor),
    ];
    expect(summarizePairs('floor-c', 32, pairs)).toEqual({
      floor: 'floor-c',
      concurrency: 32,
      pairs: 5,
      figures: {
        cpu: { median: 1.3, min: 1.2, max: 4 },
        throughput: { median: 0.82, min: 0.1, max: 0.9 },
        p50AddedMs: { median: 0.3, min: 0.2, max: 8 },
      },
    });
  });
});

describe('ratioTargets', () => {
  it.each([
    {
      name: 'every median exactly at its limit holds, at c=1 and at c=32',
      summaries: [summary(1, 1.3, 0.8, 0.5), summary(32, 1.3, 0.8, 0.5)],
      holds: [true, true, true, true, true, true],
    },
    {
      name: 'just past each limit misses',
      summaries: [summary(1, 1.31, 0.79, 0.51), summary(32, 1.31, 0.79, 0.51)],
      holds: [false, false, false, false, false, false],
    },
    {
      name: 'each figure on its own: c=1 CPU and c=32 p50 missed, the rest held',
      summaries: [summary(1, 1.5, 0.9, 0.2), summary(32, 1.1, 0.9, 5)],
      holds: [false, true, true, true, true, false],
    },
    {
      name: 'floor (b) is reported, not judged: its misses change no verdict',
      summaries: [
        summary(1, 1, 1, 0),
        summary(32, 1, 1, 0),
        summary(1, 9, 0.1, 9, 'floor-b'),
        summary(32, 9, 0.1, 9, 'floor-b'),
      ],
      holds: [true, true, true, true, true, true],
    },
  ])('$name', ({ summaries, holds }) => {
    expect(ratioTargets(summaries).map((t) => t.holds)).toEqual(holds);
  });

  it('says the floor, the median, the spread and the number of pairs it judged', () => {
    const [, , p50, cpu, throughput] = ratioTargets([
      summary(1, 1.5, 0.7, 0.42),
      summary(32, 1.42, 0.75, 2),
      summary(32, 0.5, 2, -1, 'floor-b'),
    ]);
    expect(cpu).toMatchObject({
      name: 'CPU per review, confighash ÷ floor (c), median over the pairs at c=32',
      measured: '1.420 × (1.32–1.52), 6 pairs',
      limit: '≤ 1.30 ×',
      holds: false,
    });
    expect(throughput).toMatchObject({
      measured: '0.750 × (0.65–0.85), 6 pairs',
      limit: '≥ 0.80 ×',
    });
    expect(p50).toMatchObject({
      name: 'p50 added, confighash − floor (c), median over the pairs at c=1',
      measured: '+0.420 ms (0.32–0.52), 6 pairs',
      limit: '≤ +0.50 ms',
      holds: true,
    });
  });

  it('shows a median just short of its limit as short of it, not rounded onto it', () => {
    const targets = ratioTargets([summary(1, 1, 1, 0), summary(32, 1, 0.799, 0)]);
    expect(targets[4]).toMatchObject({ measured: '0.799 × (0.70–0.90), 6 pairs', holds: false });
  });

  it.each([
    {
      name: 'a concurrency that was not measured',
      summaries: [summary(32, 1, 1, 0)],
      error: /against floor-c at c=1/,
    },
    {
      name: 'floor (b) alone: the targets are against floor (c)',
      summaries: [summary(1, 1, 1, 0, 'floor-b'), summary(32, 1, 1, 0, 'floor-b')],
      error: /no pairs against floor-c at c=1/,
    },
  ])('refuses to judge $name', ({ summaries, error }) => {
    expect(() => ratioTargets(summaries)).toThrow(error);
  });
});

describe('summarizePairs refuses a mixed floor', () => {
  it('a floor (b) pair among floor (c)’s', () => {
    const pair = pairOf('confighash', block('confighash', 1, 1, 1), block('floor-b', 1, 1, 1));
    expect(() => summarizePairs('floor-c', 1, [pair])).toThrow(/not against floor-c/);
  });
});

describe('ratioTable and ratioRecord', () => {
  const summaries = [
    summary(1, 1.6, 0.7, 0.3),
    summary(32, 1.4, 0.85, 4),
    summary(32, 1.9, 0.6, 5, 'floor-b'),
  ];

  it('names the floor of each row and marks PASS or miss only against floor (c)', () => {
    const [, , c1, c32, b32] = ratioTable(summaries).split('\n');
    expect(c1).toBe(
      '| floor (c) | 1 | 6 | 1.600 × (1.50–1.70) **miss** (≤ 1.30 ×) | 0.700 × (0.60–0.80) **miss** (≥ 0.80 ×) | +0.300 ms (0.20–0.40) PASS (≤ +0.50 ms) |',
    );
    expect(c32).toBe(
      '| floor (c) | 32 | 6 | 1.400 × (1.30–1.50) **miss** (≤ 1.30 ×) | 0.850 × (0.75–0.95) PASS (≥ 0.80 ×) | +4.000 ms (3.90–4.10) **miss** (≤ +0.50 ms) |',
    );
    expect(b32).toBe(
      '| floor (b) | 32 | 6 | 1.900 × (1.80–2.00) | 0.600 × (0.50–0.70) | +5.000 ms (4.90–5.10) |',
    );
  });

  it('flattens every figure of every floor and concurrency, keyed by the floor', () => {
    const record = ratioRecord(summaries);
    expect(Object.keys(record)).toHaveLength(3 * 3 * 3);
    expect(record['floor-c.c32.cpu.median']).toBe(1.4);
    expect(record['floor-c.c1.p50AddedMs.max']).toBeCloseTo(0.4);
    expect(record['floor-b.c32.cpu.median']).toBe(1.9);
  });
});
