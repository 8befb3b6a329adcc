// Scenario 8: the webhook's memory (issue 14). Startup peak (the process and
// its credential resolver child together, what the container's limit sees),
// idle RSS once ready, and RSS after 10,000 reviews — for this build and, with
// --baseline, the previous one, in the same run.

import { readFile } from 'node:fs/promises';
import { sleep } from '../../tools/lib/poll.js';
import type { Helper, Webhook } from './children.js';
import { residentMb } from './children.js';
import { noFailuresTarget, type Scenario, type Target } from './report.js';
import { round } from './stats.js';

export interface MemoryBuild {
  readonly id: string;
  readonly label: string;
  start(): Promise<Webhook>;
}

export interface MemoryMeasurement {
  readonly build: string;
  /** The container's memory limit the webhook ran in, or why none. */
  readonly memoryLimit: string;
  readonly startupPeakMb: number;
  readonly idleMb: number;
  readonly afterReviewsMb: number;
  readonly maxUnderLoadMb: number;
  /**
   * Where the RSS after the reviews is, from the webhook's /metrics read right after it: the V8
   * heap as allocated (its young generation apart) and the external memory (Buffers and the
   * like); the rest of RSS is code, Node's and the libraries' native memory, and what the C
   * library keeps.
   */
  readonly afterReviewsHeap: HeapFigures;
  /** The same at idle, read after the idle RSS. */
  readonly idleHeap: HeapFigures;
  readonly reviews: number;
  readonly failures: number;
}

export interface HeapFigures {
  readonly heapTotalMb: number;
  readonly newSpaceMb: number;
  readonly externalMb: number;
  /** RSS in anonymous memory (the heaps, the C library's) and in mapped files (code). */
  readonly anonMb: number;
  readonly fileMb: number;
}

export const IDLE_LIMIT_MB = 80;
export const AFTER_REVIEWS_LIMIT_MB = 110;
/** Ready is not idle: let startup garbage be collected and the resolver child be reaped. */
const SETTLE_MS = 3_000;

export async function measureMemory(
  build: MemoryBuild,
  loadgen: Helper,
  request: { body: string; reviews: number; wrongOutcomes(w: Webhook): Promise<number> },
): Promise<MemoryMeasurement> {
  const webhook = await build.start();
  try {
    await sleep(SETTLE_MS);
    const idleMb = await residentMb(webhook.pid);
    const idleHeap = await heapFigures(webhook);
    let maxUnderLoadMb = idleMb;
    const sampler = setInterval(() => {
      void residentMb(webhook.pid).then((mb) => {
        maxUnderLoadMb = Math.max(maxUnderLoadMb, mb);
      });
    }, 100);
    const result = await loadgen.call<{
      responses: number;
      errors: number;
      timeouts: number;
      non2xx: number;
    }>('run', {
      request: {
        url: `${webhook.url}?timeout=5s`,
        body: request.body,
        connections: 8,
        durationS: 600,
        warmupS: 0,
        amount: request.reviews,
      },
    });
    clearInterval(sampler);
    const afterReviewsMb = await residentMb(webhook.pid);
    const afterReviewsHeap = await heapFigures(webhook);
    return {
      build: build.id,
      memoryLimit: webhook.memoryLimit,
      startupPeakMb: round(webhook.startupPeakMb, 1),
      idleMb: round(idleMb, 1),
      afterReviewsMb: round(afterReviewsMb, 1),
      maxUnderLoadMb: round(Math.max(maxUnderLoadMb, afterReviewsMb), 1),
      afterReviewsHeap,
      idleHeap,
      reviews: result.responses,
      failures:
        result.errors + result.timeouts + result.non2xx + (await request.wrongOutcomes(webhook)),
    };
  } finally {
    await webhook.stop();
  }
}

const heapCell = (heap: HeapFigures | undefined) =>
  heap
    ? `${heap.heapTotalMb.toFixed(1)} (${heap.newSpaceMb.toFixed(1)}) + ${heap.externalMb.toFixed(1)} MB; anonymous ${heap.anonMb.toFixed(1)}, files ${heap.fileMb.toFixed(1)} MB`
    : '—';

async function heapFigures(webhook: Webhook): Promise<HeapFigures> {
  const status = await readFile(`/proc/${webhook.pid}/status`, 'utf8');
  return heapFiguresOf(await webhook.metrics(), status);
}

/** From /metrics' gauges and /proc/PID/status. */
export function heapFiguresOf(
  gauges: Readonly<Record<string, number>>,
  status: string,
): HeapFigures {
  const mb = (name: string) => round((gauges[name] ?? Number.NaN) / 1e6, 1);
  const statusMb = (field: string) =>
    round(Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) / 1024, 1);
  return {
    heapTotalMb: mb('nodejs_heap_size_total_bytes'),
    newSpaceMb: mb('nodejs_heap_space_size_total_bytes{space="new"}'),
    externalMb: mb('nodejs_external_memory_bytes'),
    anonMb: statusMb('RssAnon'),
    fileMb: statusMb('RssFile'),
  };
}

export function memoryScenario(
  builds: readonly MemoryBuild[],
  measurements: readonly MemoryMeasurement[],
): Scenario {
  const label = (id: string) => builds.find((b) => b.id === id)?.label ?? id;
  const rows = measurements.map(
    (m) =>
      `| ${label(m.build)} | ${m.startupPeakMb.toFixed(1)} MB | ${m.idleMb.toFixed(1)} MB | ${heapCell(m.idleHeap)} | ${m.afterReviewsMb.toFixed(1)} MB | ${heapCell(m.afterReviewsHeap)} | ${m.maxUnderLoadMb.toFixed(1)} MB | ${m.reviews.toLocaleString('en-US')} | ${m.failures} |`,
  );
  const table = [
    '| build | startup peak (with resolver child) | idle RSS | of which V8 heap (young generation) + external; RSS anonymous, of files | RSS after the reviews | the same | RSS max during them | reviews | failed |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
  const current = measurements.filter((m) => m.build === 'confighash');
  const worst = (pick: (m: MemoryMeasurement) => number) => Math.max(...current.map(pick));
  const idle = worst((m) => m.idleMb);
  const after = worst((m) => m.afterReviewsMb);
  const failures = current.reduce((n, m) => n + m.failures, 0);
  const targets: Target[] = [
    {
      name: 'idle RSS (compiled, production flags; the highest of the rounds)',
      measured: `${idle.toFixed(1)} MB`,
      limit: `≤ ${IDLE_LIMIT_MB} MB`,
      holds: idle <= IDLE_LIMIT_MB,
    },
    {
      name: 'RSS after 10,000 reviews (the highest of the rounds)',
      measured: `${after.toFixed(1)} MB`,
      limit: `≤ ${AFTER_REVIEWS_LIMIT_MB} MB`,
      holds: after <= AFTER_REVIEWS_LIMIT_MB,
    },
    noFailuresTarget(failures),
  ];
  return {
    id: '8',
    title: 'Memory: startup peak, idle, after 10,000 reviews (API stub, c=8)',
    runs: [],
    ratios: {
      idleMb: idle,
      afterReviewsMb: after,
      startupPeakMb: worst((m) => m.startupPeakMb),
    },
    targets,
    notes: [
      `Idle is ${SETTLE_MS / 1000} s after ready, before any review. The startup peak samples the webhook and its child processes every 10 ms from start to ready: @kubernetes/client-node runs only in the credential resolver child (src/kube/credentials.ts), which exits before the webhook is ready. Rounds alternate the builds.`,
      `Each webhook runs as the serving container runs it: the image's Node flags, and its memory limit: ${[...new Set(measurements.map((m) => m.memoryLimit))].join('; ')}.`,
    ],
    details: { measurements, table },
  };
}
