// Scenarios 1, 2, 5a, 5b, 7, 8 and 9 against the API stub, and the peers' RSS run.

import { HASH } from '../../src/workload/annotations.js';
import { startControlPlane } from '../../tools/cluster/control-plane.js';
import { bigBodiesScenario } from './big-bodies.js';
import type { Webhook } from './children.js';
import { connectApi } from './cluster.js';
import {
  type Context,
  log,
  NAMESPACE,
  type Plan,
  STANDARD_BYTES,
  STANDARD_SOURCES,
  wants,
} from './context.js';
import { compareWithFloor, find, type LoadTarget, measureTargets } from './load.js';
import {
  type MemoryBuild,
  type MemoryMeasurement,
  measureMemory,
  memoryScenario,
} from './memory.js';
import { measurePeers, type PeerBinaries, peersScenario } from './peers.js';
import {
  connectionsTarget,
  formatBytes,
  type LoadRun,
  noFailuresTarget,
  type Scenario,
  type Target,
} from './report.js';
import { checkReview } from './review.js';
import { type Floor, lifetimeNote, startConfighash, startFloor, wrongOutcomes } from './servers.js';
import { soakScenario } from './soak.js';
import { ms, round } from './stats.js';
import {
  confighashTarget,
  floorBTarget,
  type StubApi,
  setFloorReads,
  startStubApi,
} from './stub-api.js';
import { admissionReviewBody, benchSources } from './workload.js';

/** The API stub (seeded per scenario), the floors and confighash against it. */
interface StubSetup extends StubApi {
  /** floor (b) reads what the review with `count` sources reads. */
  floorReads(count: number): Promise<unknown>;
  readonly floorA: Floor;
  readonly floorB: Floor;
  readonly webhook: Webhook;
  /** The confighash of --baseline, in scenarios 1 and 2. */
  readonly previous: Webhook | undefined;
  /** floor (a), floor (b) and confighash, each given the review with `count` sources. */
  targetsFor(count: number): LoadTarget[];
}

export async function stubScenarios(context: Context, scenarios: Scenario[]): Promise<void> {
  const { plan, options } = context;
  const setup = await prepareStub(context);
  if (wants(options, '1', '2')) {
    log('scenarios 1 and 2: floors and confighash against the API stub');
    scenarios.push(...(await floorsAndConfighash(context, setup)));
  }
  if (wants(options, '5a')) {
    log('scenario 5a: sources per workload');
    scenarios.push(sourcesScenario(await sourcesRuns(context, setup), plan));
  }
  if (wants(options, '5b')) {
    log('scenario 5b: selected bytes per source (every read a new resourceVersion: no memo)');
    scenarios.push(bytesScenario(await bytesRuns(context, setup), plan));
  }
  await setup.webhook.stop();
  await setup.previous?.stop();
  await setup.floorA.helper.stop();
  await setup.floorB.helper.stop();
  if (wants(options, '8')) {
    log('scenario 8: memory, startup → idle → 10,000 reviews, fresh webhooks');
    await setup.seed(STANDARD_SOURCES, STANDARD_BYTES, false);
    scenarios.push(await memoryScenarioRun(context, setup.kubeconfig));
  }
  if (wants(options, '9')) {
    log('scenario 9: memory, bursts of concurrent 7 MiB reviews, fresh webhooks');
    await setup.seed(STANDARD_SOURCES, STANDARD_BYTES, false);
    scenarios.push(await bigBodiesScenario(context, setup.kubeconfig));
  }
  if (wants(options, '7')) {
    log(`scenario 7: soak, ${plan.soakS} s at ${plan.soakRate} reviews/s, fresh webhook`);
    await setup.seed(STANDARD_SOURCES, STANDARD_BYTES, true);
    scenarios.push(await soakScenario(context, setup.kubeconfig, setup.stubConnections));
  }
  await setup.stub.stop();
}

async function prepareStub(context: Context): Promise<StubSetup> {
  const api = await startStubApi(context);
  const floorA = await startFloor(context, 'floor-a');
  const floorB = await startFloor(context, 'floor-b', { url: api.apiUrl, ca: api.ca });
  const webhook = await startConfighash(context, 'confighash-stub', api.kubeconfig);
  const { options } = context;
  const previous =
    options.baseline && wants(options, '1', '2')
      ? await startConfighash(context, 'confighash-previous', api.kubeconfig, options.baseline)
      : undefined;
  return {
    ...api,
    floorReads: (count) => setFloorReads(floorB, count),
    floorA,
    floorB,
    webhook,
    previous,
    targetsFor(count) {
      const body = admissionReviewBody(NAMESPACE, benchSources(count));
      return [
        { id: 'floor-a', url: floorA.url, body, serverPid: floorA.helper.pid },
        floorBTarget(floorB, api, body),
        confighashTarget(webhook, api, body),
      ];
    },
  };
}

/** Scenarios 1 and 2: the floors and confighash (and --baseline's build) in the same rounds. */
async function floorsAndConfighash(context: Context, setup: StubSetup): Promise<Scenario[]> {
  await setup.seed(STANDARD_SOURCES, STANDARD_BYTES, false);
  await setup.floorReads(STANDARD_SOURCES);
  const targets = setup.targetsFor(STANDARD_SOURCES);
  if (setup.previous) {
    targets.push({
      ...targets[2]!,
      id: 'confighash-previous',
      url: setup.previous.url,
      wrongOutcomes: wrongOutcomes(setup.previous, 'patched'),
      serverPid: setup.previous.pid,
    });
  }
  await checkReview(setup.webhook.url, targets[0]!.body, context.certs.ca, HASH);
  const runs = await measureTargets(context, targets, context.plan.concurrencies);
  const result = stubScenario(runs, context.plan);
  result.notes.push(await lifetimeNote(setup.webhook, new URL(setup.apiUrl).host));
  return [floorScenario(runs), result];
}

/** Scenario 5a's runs: floor (b) and confighash with 1 … 64 sources. */
async function sourcesRuns(context: Context, setup: StubSetup): Promise<LoadRun[]> {
  const runs: LoadRun[] = [];
  for (const count of context.plan.sources) {
    await setup.seed(count, STANDARD_BYTES, false);
    await setup.floorReads(count);
    const targets = setup.targetsFor(count).slice(1);
    await checkReview(setup.webhook.url, targets[0]!.body, context.certs.ca, HASH);
    runs.push(
      ...(await measureTargets(context, targets, context.plan.scaleConcurrencies, {
        rounds: 1,
        parameter: { name: 'sources', value: count },
      })),
    );
  }
  return runs;
}

/** Scenario 5b's runs: floor (b) and confighash with 1 KiB … 1 MiB per source, every read new. */
async function bytesRuns(context: Context, setup: StubSetup): Promise<LoadRun[]> {
  const runs: LoadRun[] = [];
  for (const bytes of context.plan.bytes) {
    await setup.seed(STANDARD_SOURCES, bytes, true);
    await setup.floorReads(STANDARD_SOURCES);
    const targets = setup.targetsFor(STANDARD_SOURCES).slice(1);
    runs.push(
      ...(await measureTargets(context, targets, context.plan.scaleConcurrencies, {
        rounds: 1,
        parameter: { name: 'bytes per source', value: bytes },
      })),
    );
  }
  return runs;
}

export async function peersRun(context: Context, binaries: PeerBinaries): Promise<Scenario> {
  log('peers: RSS of wave, Reloader and confighash at 0 / 1,000 / 10,000 objects');
  const controlPlane = await startControlPlane({ log: (line) => log(`  ${line}`) });
  const api = await connectApi(controlPlane.kubeconfig);
  try {
    const namespace = 'bench-peers';
    await api.expect(
      [201],
      'POST',
      '/api/v1/namespaces',
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
    );
    const rows = await measurePeers({
      binaries,
      api,
      kubeconfig: controlPlane.kubeconfig,
      work: context.work,
      namespace,
      startConfighash: (name) => startConfighash(context, name, controlPlane.kubeconfig),
      log,
    });
    return peersScenario(rows);
  } finally {
    api.close();
    await controlPlane.stop();
  }
}

export async function memoryScenarioRun(context: Context, kubeconfig: string): Promise<Scenario> {
  let started = 0;
  const build = (id: string, label: string, mainJs?: string): MemoryBuild => ({
    id,
    label,
    start: () => startConfighash(context, `${id}-memory-${started++}`, kubeconfig, mainJs),
  });
  const builds = [
    build('confighash', 'confighash (this build)'),
    ...(context.options.baseline
      ? [build('confighash-previous', 'confighash (previous build)', context.options.baseline)]
      : []),
  ];
  const request = {
    body: admissionReviewBody(NAMESPACE, benchSources(STANDARD_SOURCES)),
    reviews: context.options.quick ? 2_000 : 10_000,
    wrongOutcomes: (webhook: Webhook) => wrongOutcomes(webhook, 'patched')(),
  };
  const measurements: MemoryMeasurement[] = [];
  for (let round = 0; round < (context.options.quick ? 1 : 2); round++) {
    for (const each of round % 2 === 0 ? builds : [...builds].reverse()) {
      const measured = await measureMemory(each, context.loadgen, request);
      log(
        `  ${each.id.padEnd(20)} startup peak ${measured.startupPeakMb} MB, idle ${measured.idleMb} MB (heap ${measured.idleHeap.heapTotalMb}, young ${measured.idleHeap.newSpaceMb}, external ${measured.idleHeap.externalMb}, anon ${measured.idleHeap.anonMb}, files ${measured.idleHeap.fileMb}), after ${measured.reviews} reviews ${measured.afterReviewsMb} MB (heap ${measured.afterReviewsHeap.heapTotalMb}, young ${measured.afterReviewsHeap.newSpaceMb}, external ${measured.afterReviewsHeap.externalMb}, anon ${measured.afterReviewsHeap.anonMb}, files ${measured.afterReviewsHeap.fileMb}; max ${measured.maxUnderLoadMb})`,
      );
      measurements.push(measured);
    }
  }
  return memoryScenario(builds, measurements);
}

export function floorScenario(runs: readonly LoadRun[]): Scenario {
  const floors = runs.filter((r) => r.target === 'floor-a' || r.target === 'floor-b');
  const ratios: Record<string, number> = {};
  for (const run of floors.filter((r) => r.target === 'floor-b')) {
    const a = find(runs, 'floor-a', run.concurrency);
    if (a) ratios[`floorB/floorA.throughput.c${run.concurrency}`] = round(run.rps / a.rps, 3);
  }
  return {
    id: '1',
    title: 'Floors',
    runs: floors,
    ratios,
    targets: [],
    notes: [
      'Issue reference (same kind of machine): (a) ≈ 6–7k reviews/s, (b) ≈ 1.6–1.8k reviews/s at c=32.',
    ],
  };
}

export function stubScenario(runs: readonly LoadRun[], plan: Plan): Scenario {
  const { subject, ratios, connections, reviews, failures } = compareWithFloor(
    runs,
    'confighash',
    'floor-b',
  );
  for (const run of subject) {
    const floor = find(runs, 'floor-b', run.concurrency)!;
    ratios[`p99Ratio.c${run.concurrency}`] = round(run.latency.p99Us / floor.latency.p99Us, 3);
  }
  const top = Math.max(...plan.concurrencies);
  const c32 = find(runs, 'confighash', top)!;
  const c1 = find(runs, 'confighash', 1)!;
  const floor32 = find(runs, 'floor-b', top)!;
  const floor1 = find(runs, 'floor-b', 1)!;
  const cpuOf32 = (run: LoadRun) => run.cpuUsPerReview?.server ?? Number.NaN;
  const targets: Target[] = [
    {
      name: `throughput ≥ 0.8 × floor (b) at c=${top}`,
      measured: `${(c32.rps / floor32.rps).toFixed(2)} × (${c32.rps.toFixed(0)} vs ${floor32.rps.toFixed(0)}/s)`,
      limit: '≥ 0.80 ×',
      holds: c32.rps / floor32.rps >= 0.8,
    },
    {
      name: `CPU per review ≤ 1.3 × floor (b)'s at c=${top}`,
      measured: `${(cpuOf32(c32) / cpuOf32(floor32)).toFixed(2)} × (${cpuOf32(c32)} vs ${cpuOf32(floor32)} µs)`,
      limit: '≤ 1.30 ×',
      holds: cpuOf32(c32) <= 1.3 * cpuOf32(floor32),
    },
    {
      name: 'p50 at c=1 ≤ floor (b) p50 + 0.5 ms',
      measured: `+${((c1.latency.p50Us - floor1.latency.p50Us) / 1000).toFixed(3)} ms (${ms(c1.latency.p50Us)} vs ${ms(floor1.latency.p50Us)})`,
      limit: '≤ +0.5 ms',
      holds: c1.latency.p50Us - floor1.latency.p50Us <= 500,
    },
    {
      name: 'p99 at c=1 ≤ 2 × floor (b) p99',
      measured: `${(c1.latency.p99Us / floor1.latency.p99Us).toFixed(2)} × (${ms(c1.latency.p99Us)} vs ${ms(floor1.latency.p99Us)} ms)`,
      limit: '≤ 2 ×',
      holds: c1.latency.p99Us <= 2 * floor1.latency.p99Us,
    },
    connectionsTarget('stub counts accepts', connections, reviews),
    noFailuresTarget(failures),
  ];
  const previous = runs.filter((r) => r.target === 'confighash-previous');
  for (const run of previous) {
    const now = find(runs, 'confighash', run.concurrency)!;
    ratios[`vsPrevious.throughput.c${run.concurrency}`] = round(now.rps / run.rps, 3);
    ratios[`vsPrevious.cpu.c${run.concurrency}`] = round(cpuOf32(now) / cpuOf32(run), 3);
  }
  return {
    id: '2',
    title: 'confighash, API stub',
    runs: [...subject, ...previous],
    ratios,
    targets,
    notes: [
      `Workload: Deployment CREATE with ${STANDARD_SOURCES} sources of ${formatBytes(STANDARD_BYTES)} (ConfigMap volume, Secret envFrom, one key ref); every answer is the hash patch, checked through /metrics.`,
      ...(previous.length > 0
        ? [
            `This build ÷ the previous build (--baseline), same run, rounds interleaved: ${previous
              .map(
                (run) =>
                  `c=${run.concurrency} throughput ${ratios[`vsPrevious.throughput.c${run.concurrency}`]} ×, CPU per review ${ratios[`vsPrevious.cpu.c${run.concurrency}`]} ×`,
              )
              .join('; ')}.`,
          ]
        : []),
    ],
  };
}

export function sourcesScenario(runs: readonly LoadRun[], plan: Plan): Scenario {
  const ratios: Record<string, number> = {};
  const c = Math.max(...plan.scaleConcurrencies);
  for (const count of plan.sources) {
    const subject = find(runs, 'confighash', c, count);
    const floor = find(runs, 'floor-b', c, count);
    if (subject && floor)
      ratios[`throughput.sources${count}.c${c}`] = round(subject.rps / floor.rps, 3);
  }
  const counts = plan.sources;
  const first = ratios[`throughput.sources${counts[0]}.c${c}`]!;
  const last = ratios[`throughput.sources${counts[counts.length - 1]}.c${c}`]!;
  return {
    id: '5a',
    title:
      'Scaling: sources per workload (API stub, ratio = confighash ÷ floor (b) reading the same sources)',
    runs: [...runs],
    ratios,
    targets: [
      {
        name: `linear in sources: confighash ÷ floor (b) throughput with ${counts[counts.length - 1]} vs ${counts[0]} source(s) (c=${c}; the issue sets no number)`,
        measured: `${last.toFixed(2)} vs ${first.toFixed(2)}`,
        limit: '≥ 0.9 × the smallest',
        holds: last >= 0.9 * first,
      },
    ],
    notes: [
      'Sources cycle ConfigMap volume, Secret envFrom, ConfigMap key ref; 1 KiB each. The memo hits (stable resourceVersions), as in a cluster whose config is not changing.',
      "floor (b)'s bare agent keeps at most 256 idle sockets (Node's default maxFreeSockets): at 64 sources × c=8 it opens new connections all the time; confighash's pool (64 sockets) opens none.",
    ],
  };
}

export function bytesScenario(runs: readonly LoadRun[], plan: Plan): Scenario {
  const ratios: Record<string, number> = {};
  const rows: string[] = [
    '| selected bytes per review | confighash p50 − floor (b) p50 | marginal cost per MiB beyond the smallest | confighash ÷ floor (b) throughput |',
    '|--:|--:|--:|--:|',
  ];
  const c1 = plan.scaleConcurrencies.includes(1) ? 1 : Math.min(...plan.scaleConcurrencies);
  const cHigh = Math.max(...plan.scaleConcurrencies);
  const extra: { bytes: number; extraUs: number }[] = [];
  for (const bytes of plan.bytes) {
    const subject = find(runs, 'confighash', c1, bytes)!;
    const floor = find(runs, 'floor-b', c1, bytes)!;
    const extraUs = subject.latency.p50Us - floor.latency.p50Us;
    const total = bytes * STANDARD_SOURCES;
    extra.push({ bytes: total, extraUs });
    const high = find(runs, 'confighash', cHigh, bytes);
    const highFloor = find(runs, 'floor-b', cHigh, bytes);
    const throughput = high && highFloor ? high.rps / highFloor.rps : Number.NaN;
    ratios[`extraP50Ms.bytes${bytes}.c${c1}`] = round(extraUs / 1000, 3);
    ratios[`throughput.bytes${bytes}.c${cHigh}`] = round(throughput, 3);
    const base = extra[0]!;
    const marginal =
      total > base.bytes
        ? `${((((extraUs - base.extraUs) / (total - base.bytes)) * 1024 * 1024) / 1000).toFixed(2)} ms`
        : '';
    rows.push(
      `| ${formatBytes(total)} | ${(extraUs / 1000).toFixed(2)} ms (c=${c1}) | ${marginal} | ${throughput.toFixed(2)} × (c=${cHigh}) |`,
    );
  }
  // Linear: the floor's cost (transfer + JSON parse) is linear in bytes; if confighash's
  // extra cost per byte (hashing) grew faster, its share would grow and the ratio fall.
  const targets: Target[] = [];
  const smallest = ratios[`throughput.bytes${plan.bytes[0]}.c${cHigh}`]!;
  const largest = ratios[`throughput.bytes${plan.bytes[plan.bytes.length - 1]}.c${cHigh}`]!;
  targets.push({
    name: `linear in bytes: confighash ÷ floor (b) throughput at ${formatBytes(plan.bytes[plan.bytes.length - 1]!)} vs at ${formatBytes(plan.bytes[0]!)} per source (c=${cHigh})`,
    measured: `${largest.toFixed(2)} vs ${smallest.toFixed(2)}`,
    limit: '≥ 0.9 × the smallest',
    holds: largest >= 0.9 * smallest,
  });
  return {
    id: '5b',
    title:
      'Scaling: selected data per source (API stub, 3 sources, a new resourceVersion on every read)',
    runs: [...runs],
    ratios,
    targets,
    notes: [
      'The stub bumps resourceVersion on every GET, so the hash memo never hits: every review hashes all bytes. The floor reads and parses the same bytes, so its cost is linear in them; confighash keeping (or improving) its ratio to it as bytes grow means its own cost per byte does not grow.',
    ],
    details: { table: rows.join('\n') },
  };
}
