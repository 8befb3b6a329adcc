// `npm run bench:simulate [-- --workloads=1000,10000,100000]` (docs/design.md §11):
// the follower's own parts — the reference index, the resync, the touch queue and a fan-out —
// against an in-memory API (test/support/memory-follow-api.ts) on a virtual clock, at sizes
// no cluster on this machine can hold. Ten workloads a namespace, each reading five
// ConfigMaps of its own and one its namespace shares: 100,000 workloads are 10,000
// namespaces and 600,000 sources, every workload created through the webhook. It measures
// what depends on the follower alone: its heap per workload once the index is built, what
// taking the lead costs — over workloads hashed at their create, after 1 % of them had a
// source changed while no leader ran, and over workloads without hashed-versions (every one
// evaluated at --follow-evaluate-rate) — the requests of a resync with nothing changed and
// those of one shared change. Wall and CPU times are the simulation's, not a cluster's: the
// API answers in no time here.

import { writeFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMutator } from '../src/admission/mutate.js';
import { createEvaluator, createSourceDigester } from '../src/evaluate/index.js';
import { runFollower } from '../src/follow/follower.js';
import { DEFAULT_FOLLOW_OPTIONS } from '../src/follow/index.js';
import { hashKeyId } from '../src/hash/index.js';
import type { Clock } from '../src/runtime/index.js';
import { HANDLED_KINDS, HASHED_VERSIONS } from '../src/workload/index.js';
import { silentFollowMetrics } from '../test/support/follow-metrics.js';
import { MemoryFollowApi, withClusterVersions } from '../test/support/memory-follow-api.js';
import { MemorySource } from '../test/support/memory-source.js';
import { everyNamespaceOptedIn } from '../test/support/namespaces.js';
import { workload } from '../test/support/workloads.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const KEY = Buffer.alloc(32, 5);
const PER_NAMESPACE = 10;
const OWN_SOURCES = 5;
const DEPLOYMENT = HANDLED_KINDS[0]!;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Timers kept in order and fired by `advance`, one at a time, as the simulation asks. */
class VirtualClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fire: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fire: () => void): () => void {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fire });
    return () => this.#timers.delete(id);
  }

  /** Runs the world until `done` or until `untilMs`; false when it stopped at `untilMs`. */
  async advance(untilMs: number, done: () => boolean = () => false): Promise<boolean> {
    for (;;) {
      await settle();
      if (done()) return true;
      const next = this.#earliest();
      if (next === undefined || next[1].at > untilMs) {
        this.#now = Math.max(this.#now, untilMs);
        return false;
      }
      this.#timers.delete(next[0]);
      this.#now = next[1].at;
      next[1].fire();
    }
  }

  #earliest(): [number, { at: number; fire: () => void }] | undefined {
    let found: [number, { at: number; fire: () => void }] | undefined;
    for (const entry of this.#timers) if (!found || entry[1].at < found[1].at) found = entry;
    return found;
  }
}

/** Lets every promise chain that can run, run (reads answer at once here). */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
}

const noMetrics = silentFollowMetrics();

interface Figures {
  readonly workloads: number;
  readonly namespaces: number;
  readonly sources: number;
  /** The follower's heap once the index is built and the lead taken, per workload (bytes). */
  readonly heapPerWorkloadBytes: number;
  readonly followerHeapMb: number;
  /** Taking the lead over workloads the webhook hashed at their create, nothing changed since. */
  readonly takeLead: LeadTaken;
  /** A new leader after 1 % of the workloads' own sources changed while no leader ran. */
  readonly takeLeadAfterChanges: LeadTaken & { readonly changedSources: number };
  /** A new leader over workloads that carry no hashed-versions (hashed by an older confighash). */
  readonly takeLeadUnrecorded: LeadTaken;
  /** Requests of two resync periods with nothing changed. */
  readonly idleResyncRequests: number;
  /** Requests of one change of a namespace's shared ConfigMap (canaries off). */
  readonly sharedChangeRequests: Readonly<Record<string, number>>;
  readonly wallS: number;
  readonly cpuS: number;
}

/** What taking the lead cost: virtual seconds until the last evaluation it needed, and requests. */
interface LeadTaken {
  readonly seconds: number;
  readonly gets: number;
  readonly lists: number;
  readonly touches: number;
}

/** The simulated cluster: every workload created through the webhook, as `kubectl apply` would. */
async function buildCluster(workloads: number) {
  const namespaces = Math.ceil(workloads / PER_NAMESPACE);
  const source = new MemorySource();
  const config = new Map<string, string>();
  const configSource = withClusterVersions(source, config);
  const mutator = createMutator({ configSource, hashKey: KEY, namespaces: everyNamespaceOptedIn });
  const api = new MemoryFollowApi(mutator, config);
  const signal = new AbortController().signal;
  const own: string[][] = [];
  for (let n = 0; n < namespaces; n++) {
    const ns = `ns-${n}`;
    api.followNamespace(ns);
    source.configMap(`${ns}-shared`, { v: '1' });
    api.change(ns, 'configmaps', `${ns}-shared`, 'ADDED');
    for (let w = 0; w < PER_NAMESPACE && n * PER_NAMESPACE + w < workloads; w++) {
      const name = `app-${w}`;
      const names = Array.from({ length: OWN_SOURCES }, (_, i) => `${ns}-${name}-${i}`);
      for (const cm of names) {
        source.configMap(cm, { v: '1' });
        api.change(ns, 'configmaps', cm, 'ADDED');
      }
      own.push([ns, ...names]);
      const volumes = [...names, `${ns}-shared`].map((cm, i) => ({
        name: `c${i}`,
        configMap: { name: cm },
      }));
      await api.create(
        ns,
        DEPLOYMENT,
        workload({ name, podSpec: { volumes, containers: [] } }),
        signal,
      );
    }
  }
  return { namespaces, source, configSource, api, own };
}

type Cluster = Awaited<ReturnType<typeof buildCluster>>;

/** A follower leading on `cluster` until `stop` aborts. */
function lead(cluster: Cluster, clock: VirtualClock, stop: AbortSignal): Promise<void> {
  const { api, configSource } = cluster;
  return runFollower(
    {
      api,
      evaluate: createEvaluator({ configSource, hashKey: KEY }),
      digestSource: createSourceDigester({ configSource, hashKey: KEY }),
      hashKeyId: hashKeyId(KEY),
      metrics: noMetrics,
      logger: quiet,
      options: OPTIONS,
      clock,
    },
    stop,
  );
}

const OPTIONS = { ...DEFAULT_FOLLOW_OPTIONS, canaries: 0 };

/**
 * Runs the world until `expectedGets` workloads were read (and past the first resync), then
 * a second more; what the lead cost from the start.
 */
async function takeLead(
  api: MemoryFollowApi,
  clock: VirtualClock,
  expectedGets: number,
): Promise<LeadTaken> {
  api.requests.length = 0;
  api.touches.length = 0;
  const started = clock.now();
  let counted = 0;
  let gets = 0;
  let lastGetAt = started;
  // Counted as requests arrive: the predicate runs after every timer, over 100,000s of requests.
  const count = () => {
    for (; counted < api.requests.length; counted++) {
      if (api.requests[counted]!.startsWith('GET ')) {
        gets++;
        lastGetAt = clock.now();
      }
    }
    return gets;
  };
  const limit = started + 10 * Math.max(expectedGets, 1) * 1000 + 60_000;
  // At least a minute: the first resync runs once every first list is done.
  await clock.advance(started + 60_000, () => {
    count();
    return false;
  });
  if (!(await clock.advance(limit, () => count() >= expectedGets))) {
    throw new Error(
      `${count()} of ${expectedGets} workloads were evaluated within ${limit / 1000} s`,
    );
  }
  await clock.advance(clock.now() + 1000);
  count();
  return {
    seconds: Math.round((lastGetAt - started) / 100) / 10,
    gets,
    lists: api.count('LIST '),
    touches: api.touches.length,
  };
}

async function simulate(workloads: number): Promise<Figures> {
  const cluster = await buildCluster(workloads);
  const { api, source, own, namespaces } = cluster;
  api.requests.length = 0;
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const clock = new VirtualClock();
  const cpu = process.cpuUsage();
  const wall = performance.now();

  const first = new AbortController();
  let running = lead(cluster, clock, first.signal);
  const takeLeadFigures = await takeLead(api, clock, 0);
  api.requests.length = 0; // The in-memory API's own record, not the follower's.
  gc();
  const followerHeap = process.memoryUsage().heapUsed - heapBefore;

  const beforeIdle = api.requests.length;
  await clock.advance(clock.now() + 2 * OPTIONS.resyncMs);
  const idleResyncRequests = api.requests.length - beforeIdle;

  const beforeChange = api.requests.length;
  source.configMap('ns-0-shared', { v: '2' });
  api.change('ns-0', 'configmaps', 'ns-0-shared', 'MODIFIED');
  await clock.advance(clock.now() + OPTIONS.debounceMs + 10_000);
  const sharedChangeRequests: Record<string, number> = {};
  for (const request of api.requests.slice(beforeChange)) {
    const verb = request.split(' ')[0]!;
    sharedChangeRequests[verb] = (sharedChangeRequests[verb] ?? 0) + 1;
  }
  first.abort();
  await running;

  // While no leader runs, one workload in a hundred gets one of its own sources changed.
  const changed = own.filter((_, i) => i % 100 === 0);
  for (const [ns, name] of changed) {
    source.configMap(name!, { v: '2' });
    api.changeUnseen(ns!, 'configmaps', name!);
  }
  const second = new AbortController();
  running = lead(cluster, clock, second.signal);
  const afterChanges = await takeLead(api, clock, changed.length);
  second.abort();
  await running;

  for (const stored of api.workloads.values()) {
    delete (stored.metadata.annotations as Record<string, string> | undefined)?.[HASHED_VERSIONS];
  }
  const third = new AbortController();
  running = lead(cluster, clock, third.signal);
  const unrecorded = await takeLead(api, clock, workloads);
  third.abort();
  await running;

  const used = process.cpuUsage(cpu);
  return {
    workloads,
    namespaces,
    sources: namespaces + workloads * OWN_SOURCES,
    heapPerWorkloadBytes: Math.round(followerHeap / workloads),
    followerHeapMb: Math.round((followerHeap / 2 ** 20) * 10) / 10,
    takeLead: takeLeadFigures,
    takeLeadAfterChanges: { ...afterChanges, changedSources: changed.length },
    takeLeadUnrecorded: unrecorded,
    idleResyncRequests,
    sharedChangeRequests,
    wallS: Math.round((performance.now() - wall) / 100) / 10,
    cpuS: Math.round((used.user + used.system) / 1e5) / 10,
  };
}

function sizesFrom(argv: readonly string[]): number[] {
  const given = argv.find((arg) => arg.startsWith('--workloads='));
  const sizes = (given?.slice('--workloads='.length) ?? '1000,10000,100000').split(',').map(Number);
  if (sizes.some((size) => !Number.isInteger(size) || size < PER_NAMESPACE)) {
    throw new Error(`--workloads takes whole numbers of at least ${PER_NAMESPACE}, got ${given}`);
  }
  return sizes;
}

async function main(): Promise<void> {
  const results: Figures[] = [];
  for (const size of sizesFrom(process.argv.slice(2))) {
    const figures = await simulate(size);
    results.push(figures);
    console.log(JSON.stringify(figures));
  }
  const name = `bench/results/simulate-${new Date().toISOString().slice(0, 10)}.json`;
  await writeFile(name, `${JSON.stringify({ node: process.version, results }, null, 2)}\n`);
  console.log(`written: ${name}`);
}

await main();
