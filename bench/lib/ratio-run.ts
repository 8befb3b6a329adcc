// Scenario `ratio`: confighash, floor (c) and floor (b) in ONE run, all alive throughout, loaded
// one at a time in alternating blocks, so that every ratio compares blocks seconds apart on the
// same cores. The targets are against floor (c) (the same GETs over one bare HTTP/2 session, as
// confighash reads the stub); floor (b) (HTTP/1.1 through an agent) stays beside for the record.
// The servers are pinned to CPU 0 and the load generator and the API stub to CPU 1, so that a
// server's figures do not depend on how the scheduler shares its core with the load.
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
  FLOORS,
  type FloorServer,
  pairIn,
  type RatioServer,
  type RatioSummary,
  ratioRecord,
  ratioTable,
  ratioTargets,
  roundOrder,
  summarizePairs,
} from './ratio.js';
import { noFailuresTarget, type Scenario } from './report.js';
import { checkReview } from './review.js';
import { startConfighash, startFloor } from './servers.js';
import { confighashTarget, floorTarget, setFloorReads, startStubApi } from './stub-api.js';
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

/** The three servers, the stub they read and a load generator of the run's own, pinned or not. */
interface Rig {
  /** The bench's context with this run's load generator in it. */
  readonly context: Context;
  readonly targets: Readonly<Record<RatioServer, LoadTarget>>;
  readonly pinned: boolean;
  /** Each process's CPU list, read back from /proc. */
  readonly cpusAllowed: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** What one concurrency measured: the uncounted warm-up blocks, then the rounds' pairs per floor. */
interface ConcurrencyRun {
  readonly concurrency: number;
  readonly warmUp: readonly Block[];
  /** Each round's blocks, in the order they ran. */
  readonly rounds: readonly (readonly Block[])[];
  readonly pairs: Readonly<Record<FloorServer, readonly BlockPair[]>>;
  readonly summaries: readonly RatioSummary[];
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
    for (const line of ratioTable(summariesOf(runs)).split('\n')) log(`  ${line}`);
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
  const floorC = await startFloor(
    context,
    'ratio-floor-c',
    { url: api.apiUrl, ca: api.ca, http2: true },
    serverCpus,
  );
  await setFloorReads(floorC, STANDARD_SOURCES);
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
    'floor-c': await allowedCpus(floorC.helper.pid),
    loadgen: await allowedCpus(loadgen.pid),
    'api-stub': await allowedCpus(api.stub.pid),
  };
  log(`ratio: CPUs allowed ${JSON.stringify(cpusAllowed)}`);
  return {
    context: { ...context, loadgen },
    cpusAllowed,
    targets: {
      confighash: confighashTarget(webhook, api, body),
      'floor-b': floorTarget('floor-b', floorB, api, body),
      'floor-c': floorTarget('floor-c', floorC, api, body),
    },
    pinned,
    async stop() {
      await webhook.stop();
      await floorB.helper.stop();
      await floorC.helper.stop();
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
  const blocks: Block[] = [];
  for (const server of SERVERS) {
    blocks.push(await measureBlock(rig, server, SETTLE_CONCURRENCY, timing));
  }
  return blocks;
}

const SERVERS: readonly RatioServer[] = ['confighash', 'floor-c', 'floor-b'];

/**
 * A warm-up block per server, then the rounds, each round's order the reverse of the last's; a
 * round gives one pair per floor.
 */
async function measureConcurrency(rig: Rig, concurrency: number): Promise<ConcurrencyRun> {
  const { ratioPairs, ratioBlockS } = rig.context.plan;
  log(
    `ratio: c=${concurrency}, a warm-up block per server, then ${ratioPairs} rounds of three ${ratioBlockS} s blocks`,
  );
  const warmUp: Block[] = [];
  for (const server of SERVERS) warmUp.push(await measureBlock(rig, server, concurrency));
  const rounds: Block[][] = [];
  const pairs: Record<FloorServer, BlockPair[]> = { 'floor-b': [], 'floor-c': [] };
  for (let index = 0; index < ratioPairs; index++) {
    const blocks: Block[] = [];
    for (const server of roundOrder(index)) {
      blocks.push(await measureBlock(rig, server, concurrency));
    }
    rounds.push(blocks);
    for (const floor of FLOORS) {
      const pair = pairIn(blocks, floor);
      logPair(index, concurrency, pair);
      pairs[floor].push(pair);
    }
  }
  const summaries = FLOORS.map((floor) => summarizePairs(floor, concurrency, pairs[floor]));
  return { concurrency, warmUp, rounds, pairs, summaries };
}

/** Floor (c)'s summaries first (the judged ones), then floor (b)'s, each by concurrency. */
function summariesOf(runs: readonly ConcurrencyRun[]): RatioSummary[] {
  return FLOORS.flatMap((floor) =>
    runs.flatMap((r) => r.summaries.filter((s) => s.floor === floor)),
  );
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
    `  c=${String(concurrency).padStart(2)} round ${index + 1} vs ${pair.floor.server} (${pair.first} first): confighash ${side(pair.confighash)}; ${pair.floor.server} ${side(pair.floor)} → CPU ${pair.cpu.toFixed(2)} ×, throughput ${pair.throughput.toFixed(2)} ×, p50 ${pair.p50AddedMs >= 0 ? '+' : ''}${pair.p50AddedMs.toFixed(2)} ms`,
  );
}

function ratioScenarioOf(
  settle: readonly Block[],
  runs: readonly ConcurrencyRun[],
  rig: Rig,
): Scenario {
  const summaries = summariesOf(runs);
  const blocks = [...settle, ...runs.flatMap((r) => [...r.warmUp, ...r.rounds.flat()])];
  const { ratioSettleReviews, ratioBlockS, ratioPairs } = rig.context.plan;
  return {
    id: 'ratio',
    title:
      'Ratio run: confighash ÷ floor (c), floor (b) beside, alternating blocks in one run (API stub; median and min–max over the pairs)',
    runs: [],
    ratios: ratioRecord(summaries),
    targets: [
      ...ratioTargets(summaries),
      noFailuresTarget(blocks.reduce((n, b) => n + b.failures, 0)),
    ],
    notes: [
      `The three servers alive for the whole run, loaded one at a time: first each settled by ${ratioSettleReviews.toLocaleString('en-US')} reviews at c=${SETTLE_CONCURRENCY}, then per concurrency a ${ratioBlockS} s warm-up block each (none of these counted), then ${ratioPairs} rounds of three ${ratioBlockS} s blocks, confighash, floor (c), floor (b), then the reverse, and so on. Each round gives a pair per floor (confighash and floor (c) always next to each other, each first by turns); each ratio is one pair's; the table gives their median and min–max. The targets are against floor (c), the same GETs over one bare HTTP/2 session as confighash reads the stub; floor (b) reads it over HTTP/1.1 through a keep-alive agent and is kept for the record.`,
      rig.pinned
        ? `Pinned with taskset: confighash and the floors on CPU ${SERVER_CPUS}, the load generator and the API stub on CPU ${LOAD_CPUS}. Each block lists the cores its server and the load side used (serverCores, loadSideCores): a load side near 1 core set the pace, not the server; a server well below 1 core at c=32 shared CPU ${SERVER_CPUS} with something outside the bench.`
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
