// `npm run bench:simulate [-- --workloads=1000,10000,100000]` (docs/design.md §11):
// the follower's own parts — the reference index, the resync, the touch queue and a fan-out —
// against an in-memory API (test/support/memory-follow-api.ts) on a virtual clock, at sizes
// no cluster on this machine can hold. Ten workloads a namespace, each reading five
// ConfigMaps of its own and one its namespace shares: 100,000 workloads are 10,000
// namespaces and 600,000 sources. It measures what depends on the follower alone: its heap
// per workload once the index is built and everything evaluated, the requests of a resync
// with nothing changed, the virtual time to take the lead (every workload evaluated once at
// --follow-evaluate-rate) and the requests of one shared change. Wall and CPU times are the
// simulation's, not a cluster's: the API answers in no time here.

import { writeFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMutator } from '../src/admission/mutate.js';
import { createEvaluator, createSourceDigester } from '../src/evaluate/index.js';
import { runFollower } from '../src/follow/follower.js';
import { DEFAULT_FOLLOW_OPTIONS } from '../src/follow/index.js';
import { hashKeyId } from '../src/hash/index.js';
import type { Clock } from '../src/runtime/index.js';
import { HANDLED_KINDS } from '../src/workload/index.js';
import { silentFollowMetrics } from '../test/support/follow-metrics.js';
import { MemoryFollowApi } from '../test/support/memory-follow-api.js';
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
  /** The follower's heap once everything is evaluated, per workload (bytes). */
  readonly heapPerWorkloadBytes: number;
  readonly followerHeapMb: number;
  /** Virtual seconds from the start until every workload was evaluated once. */
  readonly takeLeadS: number;
  readonly takeLeadGets: number;
  readonly takeLeadLists: number;
  /** Requests of two resync periods with nothing changed. */
  readonly idleResyncRequests: number;
  /** Requests of one change of a namespace's shared ConfigMap (canaries off). */
  readonly sharedChangeRequests: Readonly<Record<string, number>>;
  readonly wallS: number;
  readonly cpuS: number;
}

async function simulate(workloads: number): Promise<Figures> {
  const namespaces = Math.ceil(workloads / PER_NAMESPACE);
  const source = new MemorySource();
  const mutator = createMutator({
    configSource: source,
    hashKey: KEY,
    namespaces: everyNamespaceOptedIn,
  });
  const api = new MemoryFollowApi(mutator);
  const signal = new AbortController().signal;
  for (let n = 0; n < namespaces; n++) {
    const ns = `ns-${n}`;
    api.followNamespace(ns);
    source.configMap(`${ns}-shared`, { v: '1' });
    api.change(ns, 'configmaps', `${ns}-shared`, 'ADDED');
    for (let w = 0; w < PER_NAMESPACE && n * PER_NAMESPACE + w < workloads; w++) {
      const name = `app-${w}`;
      const own = Array.from({ length: OWN_SOURCES }, (_, i) => `${ns}-${name}-${i}`);
      for (const cm of own) {
        source.configMap(cm, { v: '1' });
        api.change(ns, 'configmaps', cm, 'ADDED');
      }
      const volumes = [...own, `${ns}-shared`].map((cm, i) => ({
        name: `c${i}`,
        configMap: { name: cm },
      }));
      api.putWorkloadUnseen(ns, workload({ name, podSpec: { volumes, containers: [] } }));
      await api.write(ns, DEPLOYMENT, name, signal, { unseen: true }); // hashed at its create
    }
  }
  api.requests.length = 0;
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const clock = new VirtualClock();
  const stop = new AbortController();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const options = { ...DEFAULT_FOLLOW_OPTIONS, canaries: 0 };
  const running = runFollower(
    {
      api,
      evaluate: createEvaluator({ configSource: source, hashKey: KEY }),
      digestSource: createSourceDigester({ configSource: source, hashKey: KEY }),
      hashKeyId: hashKeyId(KEY),
      metrics: noMetrics,
      logger: quiet,
      options,
      clock,
    },
    stop.signal,
  );
  let counted = 0;
  let getCount = 0;
  // Counted as requests arrive: the predicate runs after every timer, over 100,000s of requests.
  const gets = () => {
    for (; counted < api.requests.length; counted++) {
      if (api.requests[counted]!.startsWith('GET ')) getCount++;
    }
    return getCount;
  };
  const limit = 10 * workloads * 1000;
  if (!(await clock.advance(limit, () => gets() >= workloads))) {
    throw new Error(`not every workload was evaluated within ${limit / 1000} s`);
  }
  const takeLeadS = clock.now() / 1000;
  const takeLeadGets = gets();
  const takeLeadLists = api.count('LIST ');
  await clock.advance(clock.now() + 1000);
  api.requests.length = 0; // The in-memory API's own record, not the follower's.
  counted = 0;
  gc();
  const followerHeap = process.memoryUsage().heapUsed - heapBefore;

  const beforeIdle = api.requests.length;
  await clock.advance(clock.now() + 2 * options.resyncMs);
  const idleResyncRequests = api.requests.length - beforeIdle;

  const beforeChange = api.requests.length;
  source.configMap('ns-0-shared', { v: '2' });
  api.change('ns-0', 'configmaps', 'ns-0-shared', 'MODIFIED');
  await clock.advance(clock.now() + options.debounceMs + 10_000);
  const sharedChangeRequests: Record<string, number> = {};
  for (const request of api.requests.slice(beforeChange)) {
    const verb = request.split(' ')[0]!;
    sharedChangeRequests[verb] = (sharedChangeRequests[verb] ?? 0) + 1;
  }
  const used = process.cpuUsage(cpu);
  stop.abort();
  await running;
  return {
    workloads,
    namespaces,
    sources: namespaces + workloads * OWN_SOURCES,
    heapPerWorkloadBytes: Math.round(followerHeap / workloads),
    followerHeapMb: Math.round((followerHeap / 2 ** 20) * 10) / 10,
    takeLeadS,
    takeLeadGets,
    takeLeadLists,
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
