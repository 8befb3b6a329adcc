// Scenario `ratio`: confighash and floor (b) in ONE run, both alive throughout, loaded one at a
// time in alternating blocks, so that every ratio compares two blocks seconds apart on the same
// cores. The servers are pinned to CPU 0 and the load generator and the API stub to CPU 1, so
// that a server's figures do not depend on how the scheduler shares its core with the load.
// The arithmetic (pairs, medians, targets) is bench/lib/ratio.ts.

import { join } from 'node:path';
import { HASH } from '../../src/workload/annotations.js';
import { allowedCpus, forkHelper, tasksetAvailable } from './children.js';
import { type Context, log, NAMESPACE, STANDARD_BYTES, STANDARD_SOURCES } from './context.js';
import { emptyAccumulator, type LoadTarget, measureRound, type RoundTiming } from './load.js';
import {
  type Block,
  type BlockPair,
  blockOf,
  pairOf,
  pairOrder,
  type RatioServer,
  type RatioSummary,
  ratioRecord,
  ratioTable,
  ratioTargets,
  summarizePairs,
} from './ratio.js';
import { noFailuresTarget, type Scenario } from './report.js';
import { checkReview } from './review.js';
import { startConfighash, startFloor } from './servers.js';
import { confighashTarget, floorBTarget, setFloorReads, startStubApi } from './stub-api.js';
import { admissionReviewBody, benchSources } from './workload.js';

export const RATIO_CONCURRENCIES = [1, 32] as const;
/**
 * Each fresh server is loaded this hard until it settles. With 1 s warm-up blocks alone,
 * confighash's CPU per review kept falling over its first 5,000 reviews at c=1 (1,511 → 537 µs)
 * and over its first 3,500 at c=32 (1,570 → 536 µs), floor (b)'s for about 2,400: the first
 * pairs measured a process warming up, not the steady cost.
 */
const SETTLE_CONCURRENCY = 32;
const SERVER_CPUS = '0';
const LOAD_CPUS = '1';

/** Both servers, the stub they read and a load generator of the run's own, pinned or not. */
interface Rig {
  /** The bench's context with this run's load generator in it. */
  readonly context: Context;
  readonly targets: Readonly<Record<RatioServer, LoadTarget>>;
  readonly pinned: boolean;
  /** Each process's CPU list, read back from /proc. */
  readonly cpusAllowed: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** What one concurrency measured: the uncounted warm-up blocks, then the pairs. */
interface ConcurrencyRun {
  readonly concurrency: number;
  readonly warmUp: readonly Block[];
  readonly pairs: readonly BlockPair[];
  readonly summary: RatioSummary;
}

export async function ratioScenario(context: Context): Promise<Scenario> {
  const rig = await startRig(context);
  try {
    const settle = await settleServers(rig);
    const runs: ConcurrencyRun[] = [];
    for (const concurrency of RATIO_CONCURRENCIES) {
      runs.push(await measureConcurrency(rig, concurrency));
    }
    const scenario = ratioScenarioOf(settle, runs, rig);
    for (const line of ratioTable(runs.map((r) => r.summary)).split('\n')) log(`  ${line}`);
    return scenario;
  } finally {
    await rig.stop();
  }
}

async function startRig(context: Context): Promise<Rig> {
  const pinned = tasksetAvailable();
  if (!pinned) log('ratio: taskset not found (util-linux): servers, load and stub run unpinned');
  const [serverCpus, loadCpus] = pinned ? [SERVER_CPUS, LOAD_CPUS] : [undefined, undefined];
  const api = await startStubApi(context, loadCpus);
  await api.seed(STANDARD_SOURCES, STANDARD_BYTES, false);
  const floorB = await startFloor(
    context,
    'ratio-floor-b',
    { url: api.apiUrl, ca: api.ca },
    serverCpus,
  );
  await setFloorReads(floorB, STANDARD_SOURCES);
  const webhook = await startConfighash(
    context,
    'ratio-confighash',
    api.kubeconfig,
    undefined,
    serverCpus,
  );
  const loadgen = forkHelper('loadgen', join(context.work, 'ratio-loadgen.log'), {
    cpus: loadCpus,
  });
  context.helpers.push(loadgen);
  const body = admissionReviewBody(NAMESPACE, benchSources(STANDARD_SOURCES));
  await checkReview(webhook.url, body, context.certs.ca, HASH);
  // As the kernel has them, not as asked: the report shows what the run ran on.
  const cpusAllowed = {
    confighash: await allowedCpus(webhook.pid),
    'floor-b': await allowedCpus(floorB.helper.pid),
    loadgen: await allowedCpus(loadgen.pid),
    'api-stub': await allowedCpus(api.stub.pid),
  };
  log(`ratio: CPUs allowed ${JSON.stringify(cpusAllowed)}`);
  return {
    context: { ...context, loadgen },
    cpusAllowed,
    targets: {
      confighash: confighashTarget(webhook, api, body),
      'floor-b': floorBTarget(floorB, api, body),
    },
    pinned,
    async stop() {
      await webhook.stop();
      await floorB.helper.stop();
      await loadgen.stop();
      await api.stub.stop();
    },
  };
}

/** Each fresh server, loaded until it has answered the plan's settling reviews; not counted. */
async function settleServers(rig: Rig): Promise<Block[]> {
  const reviews = rig.context.plan.ratioSettleReviews;
  log(
    `ratio: settling each server, ${reviews.toLocaleString('en-US')} reviews at c=${SETTLE_CONCURRENCY}`,
  );
  const timing = { warmupS: 0, measureS: 0, reviews };
  return [
    await measureBlock(rig, 'confighash', SETTLE_CONCURRENCY, timing),
    await measureBlock(rig, 'floor-b', SETTLE_CONCURRENCY, timing),
  ];
}

/** A warm-up block per server, then the pairs, each pair's order the reverse of the last's. */
async function measureConcurrency(rig: Rig, concurrency: number): Promise<ConcurrencyRun> {
  const { ratioPairs, ratioBlockS } = rig.context.plan;
  log(
    `ratio: c=${concurrency}, a warm-up block per server, then ${ratioPairs} pairs of ${ratioBlockS} s blocks`,
  );
  const warmUp = [
    await measureBlock(rig, 'confighash', concurrency),
    await measureBlock(rig, 'floor-b', concurrency),
  ];
  const pairs: BlockPair[] = [];
  for (let index = 0; index < ratioPairs; index++) {
    const [first, second] = pairOrder(index);
    const earlier = await measureBlock(rig, first, concurrency);
    const later = await measureBlock(rig, second, concurrency);
    const [confighash, floor] = first === 'confighash' ? [earlier, later] : [later, earlier];
    const pair = pairOf(first, confighash, floor);
    logPair(index, concurrency, pair);
    pairs.push(pair);
  }
  return { concurrency, warmUp, pairs, summary: summarizePairs(concurrency, pairs) };
}

/** One block: a load round of the plan's block length (or `timing`), no warm-up of its own. */
async function measureBlock(
  rig: Rig,
  server: RatioServer,
  concurrency: number,
  timing: RoundTiming = { warmupS: 0, measureS: rig.context.plan.ratioBlockS },
): Promise<Block> {
  const total = emptyAccumulator();
  await measureRound(rig.context, rig.targets[server], concurrency, total, timing);
  return blockOf(server, total);
}

function logPair(index: number, concurrency: number, pair: BlockPair): void {
  const side = (block: Block) =>
    `${block.cpuPerReviewUs.toFixed(0)} µs/review, ${block.reviewsPerS.toFixed(0)}/s, p50 ${(block.p50Us / 1000).toFixed(2)} ms`;
  log(
    `  c=${String(concurrency).padStart(2)} pair ${index + 1} (${pair.first} first): confighash ${side(pair.confighash)}; floor (b) ${side(pair.floor)} → CPU ${pair.cpu.toFixed(2)} ×, throughput ${pair.throughput.toFixed(2)} ×, p50 ${pair.p50AddedMs >= 0 ? '+' : ''}${pair.p50AddedMs.toFixed(2)} ms`,
  );
}

function ratioScenarioOf(
  settle: readonly Block[],
  runs: readonly ConcurrencyRun[],
  rig: Rig,
): Scenario {
  const summaries = runs.map((r) => r.summary);
  const blocks = [
    ...settle,
    ...runs.flatMap((r) => [...r.warmUp, ...r.pairs.flatMap((p) => [p.confighash, p.floor])]),
  ];
  const { ratioSettleReviews, ratioBlockS, ratioPairs } = rig.context.plan;
  return {
    id: 'ratio',
    title:
      'Ratio run: confighash ÷ floor (b), alternating blocks in one run (API stub; median and min–max over the pairs)',
    runs: [],
    ratios: ratioRecord(summaries),
    targets: [
      ...ratioTargets(summaries),
      noFailuresTarget(blocks.reduce((n, b) => n + b.failures, 0)),
    ],
    notes: [
      `Both servers alive for the whole run, loaded one at a time: first each settled by ${ratioSettleReviews.toLocaleString('en-US')} reviews at c=${SETTLE_CONCURRENCY}, then per concurrency a ${ratioBlockS} s warm-up block each (none of these counted), then ${ratioPairs} pairs of ${ratioBlockS} s blocks in alternating order (confighash first, then floor (b) first, …). Each ratio is one pair's; the table gives their median and min–max.`,
      rig.pinned
        ? `Pinned with taskset: confighash and floor (b) on CPU ${SERVER_CPUS}, the load generator and the API stub on CPU ${LOAD_CPUS}. Each block lists the cores its server and the load side used (serverCores, loadSideCores): a load side near 1 core set the pace, not the server; a server well below 1 core at c=32 shared CPU ${SERVER_CPUS} with something outside the bench.`
        : 'Unpinned: taskset was not found, so servers, load generator and stub share every core as the scheduler decides.',
      `Workload: Deployment CREATE with ${STANDARD_SOURCES} sources of 1 KiB, as in scenario 2; every confighash answer is the hash patch, checked through /metrics around each block. A block opens its c connections afresh (TLS handshakes), for both servers alike.`,
    ],
    details: {
      table: ratioTable(summaries),
      pinned: rig.pinned,
      cpusAllowed: rig.cpusAllowed,
      blockS: ratioBlockS,
      pairsPerConcurrency: ratioPairs,
      settle,
      concurrencies: runs,
    },
  };
}
