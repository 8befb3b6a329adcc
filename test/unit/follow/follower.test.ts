// The follower against an in-memory cluster (test/support/memory-follow-api.ts)
// on a fake clock: what it asks of the apiserver (cluster-wide watches, no LIST
// for a change, no GET for an idle resync, one GET per workload of a fan-out), the
// reference index (events outside follow namespaces dropped, a wrong entry
// corrected by the workload's own event), the guards of docs/design.md §6 — global rate
// limit, per-workload minimum interval, debounce, rollout windows, watch restarts
// and 410 relists, opt-in and absent kinds — and what it tells people (Events, metrics).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMutator } from '../../../src/admission/mutate.js';
import { createEvaluator, createSourceDigester } from '../../../src/evaluate/index.js';
import { runFollower } from '../../../src/follow/follower.js';
import { HALT_REPEAT_MS } from '../../../src/follow/halt-notice.js';
import { DEFAULT_FOLLOW_OPTIONS, type FollowOptions } from '../../../src/follow/index.js';
import type { FollowMetrics } from '../../../src/follow/metrics.js';
import { hashKeyId } from '../../../src/hash/index.js';
import {
  decideHandled,
  HANDLED_KINDS,
  HASH,
  HASHED_VERSIONS,
  KNOWN_KINDS,
  readFanoutRecord,
  readWorkload,
  type WorkloadKind,
} from '../../../src/workload/index.js';
import {
  MemoryFollowApi,
  type SourceAnnotations,
  withClusterVersions,
} from '../../support/memory-follow-api.js';
import { digestOf, MemorySource } from '../../support/memory-source.js';
import { everyNamespaceOptedIn } from '../../support/namespaces.js';
import { NAMESPACE, workload } from '../../support/workloads.js';

const KEY = Buffer.alloc(32, 9);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const DEPLOYMENT = HANDLED_KINDS[0]!;
const ROLLOUT = KNOWN_KINDS.find((kind) => kind.kind === 'Rollout')!;
const signal = () => new AbortController().signal;

function recordingMetrics() {
  const calls: string[] = [];
  const metrics: FollowMetrics = {
    touched: (kind) => calls.push(`touched ${kind}`),
    touchDenied: (kind) => calls.push(`denied ${kind}`),
    deferred: (reason) => calls.push(`deferred ${reason}`),
    reconcileError: (reason) => calls.push(`reconcile-error ${reason}`),
    resynced: ({ workloads, sources }, atMs) =>
      calls.push(`resynced ${workloads} workloads ${sources} sources at ${atMs}`),
    heldMissing: (kind) => calls.push(`missing ${kind}`),
    leader: () => {},
    watchRestart: (reason) => calls.push(`watch-restart ${reason}`),
    pending: () => {},
    previousKeyHash: () => calls.push('previous-key-hash'),
    fanoutHalted: () => calls.push('fanout-halted'),
    workloadsHeld: (count) => calls.push(`held ${count}`),
    workloadsBehindCanary: (count) => calls.push(`behind ${count}`),
    fanoutsHaltedNow: (count) => calls.push(`halted ${count}`),
    fanoutsAwaitingApproval: (count) => calls.push(`awaiting ${count}`),
  };
  return { calls, metrics };
}

interface Harness {
  source: MemorySource;
  api: MemoryFollowApi;
  calls: string[];
  /** The requests made since the follower took the lead and evaluated everything. */
  since(prefix: string): number;
  /** The leader stops and a new one takes the lead (a new Follower, nothing kept in memory). */
  newLeader(): Promise<void>;
  stop(): Promise<void>;
}

const POD_SPEC = {
  volumes: [
    { name: 'c', configMap: { name: 'app' } },
    { name: 'n', configMap: { name: 'new', optional: true } },
  ],
  containers: [],
};

interface Setup {
  /** Deployments `web-0`… reading ConfigMap `app`, already hashed (as the webhook left them). */
  count?: number;
  /** Namespaces, besides NAMESPACE, holding the same workloads but not followed. */
  unfollowed?: string[];
  kinds?: readonly WorkloadKind[];
  /** --excluded-namespace: never followed, whatever their label. */
  excluded?: string[];
  /** false: return at once, before taking the lead has evaluated everything. */
  settled?: boolean;
  /** Runs on the cluster before the follower starts. */
  before?(api: MemoryFollowApi, source: MemorySource): Promise<void> | void;
  /** The follower's keys (default: the webhook's KEY alone). */
  keys?: { hashKey: Buffer; previousHashKeys: Buffer[] };
  /**
   * false: the workloads carry no hashed-versions, as a confighash that recorded none left
   * them, so taking the lead evaluates every one (docs/design.md §6).
   */
  recorded?: false;
}

async function start(options: Partial<FollowOptions>, setup: Setup = {}): Promise<Harness> {
  const { count = 1, unfollowed = [], kinds } = setup;
  const source = new MemorySource().configMap('app', { v: '1' });
  const config = new Map<string, string>();
  const annotations = new Map<string, SourceAnnotations>();
  const configSource = withClusterVersions(source, config, annotations);
  const mutator = createMutator({
    configSource,
    hashKey: KEY,
    namespaces: everyNamespaceOptedIn,
    ...(kinds ? { kinds } : {}),
  });
  const api = new MemoryFollowApi(mutator, config, annotations).followNamespace(NAMESPACE);
  for (const namespace of [NAMESPACE, ...unfollowed]) {
    api.change(namespace, 'configmaps', 'app', 'ADDED');
    for (let i = 0; i < count; i++) {
      api.putWorkload(namespace, workload({ name: `web-${i}`, podSpec: POD_SPEC }));
      await api.write(namespace, DEPLOYMENT, `web-${i}`, signal());
    }
  }
  await setup.before?.(api, source);
  if (setup.recorded === false) {
    for (const stored of api.workloads.values()) {
      delete (stored.metadata.annotations as Record<string, string> | undefined)?.[HASHED_VERSIONS];
    }
  }
  const { calls, metrics } = recordingMetrics();
  // Canaries off unless a row asks for them: the rows below them are about other things.
  const merged = { ...DEFAULT_FOLLOW_OPTIONS, canaries: 0, ...options };
  /** One term of leadership: a new Follower, as a new leader or a restarted pod builds it. */
  const lead = () => {
    const stop = new AbortController();
    const running = runFollower(
      {
        api,
        evaluate: createEvaluator({ configSource, ...(setup.keys ?? { hashKey: KEY }) }),
        digestSource: createSourceDigester({ configSource, hashKey: KEY }),
        hashKeyId: hashKeyId(setup.keys?.hashKey ?? KEY),
        metrics,
        logger: quiet,
        options: merged,
        ...(kinds ? { kinds } : {}),
        ...(setup.excluded ? { excludedNamespaces: setup.excluded } : {}),
      },
      stop.signal,
    );
    return async () => {
      stop.abort();
      await running;
    };
  };
  let stopTerm = lead();
  // Taking the lead: every workload is evaluated once, at the evaluate rate.
  const settle = () =>
    vi.advanceTimersByTimeAsync(Math.ceil(count / merged.evaluatePerSecond) * 1000 + 10);
  if (setup.settled !== false) await settle();
  const mark = api.requests.length;
  return {
    source,
    api,
    calls,
    since: (prefix) => api.requests.slice(mark).filter((r) => r.startsWith(prefix)).length,
    async newLeader() {
      await stopTerm();
      stopTerm = lead();
      await settle();
    },
    stop: () => stopTerm(),
  };
}

/** A change of ConfigMap `app` in the follow namespace, as the watch reports it. */
function changeApp(h: Harness, v: string): void {
  h.source.configMap('app', { v });
  h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
}

beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('what it asks of the apiserver', () => {
  it('one cluster-wide watch per resource, whatever the number of follow namespaces', async () => {
    const h = await start(
      {},
      { before: (api) => void api.followNamespace('a').followNamespace('b') },
    );
    expect(h.api.watches.map((w) => `${w.resource} ${w.namespace ?? '*'}`).sort()).toEqual([
      'DaemonSet *',
      'Deployment *',
      'StatefulSet *',
      'configmaps *',
      'secrets *',
    ]);
    await h.stop();
  });

  it('--watch-scope=namespace: the same watches, per follow namespace', async () => {
    const h = await start(
      { watchScope: 'namespace' },
      { before: (api) => void api.followNamespace('a') },
    );
    expect(h.api.watches.map((w) => `${w.resource} ${w.namespace}`).sort()).toEqual(
      ['a', NAMESPACE]
        .flatMap((ns) =>
          ['DaemonSet', 'Deployment', 'StatefulSet', 'configmaps', 'secrets'].map(
            (r) => `${r} ${ns}`,
          ),
        )
        .sort(),
    );
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.debounceMs + 50);
    expect(h.api.touches).toHaveLength(1);
    await h.stop();
  });

  it('taking the lead evaluates each workload once, at the evaluate rate, and rolls none', async () => {
    // The ConfigMaps are listed last: evaluating before would see none of their versions.
    const h = await start(
      { evaluatePerSecond: 10 },
      {
        count: 25,
        recorded: false,
        before: (api) => void api.listDelayMs.set('configmaps', 2000),
      },
    );
    await vi.advanceTimersByTimeAsync(2000);
    expect(h.api.count('GET')).toBe(25);
    expect(new Set(h.api.requests.filter((r) => r.startsWith('GET'))).size).toBe(25);
    expect(h.api.touches).toEqual([]);
    await h.stop();
  });

  it('the evaluations of a resync start no faster than --follow-evaluate-rate', async () => {
    // 25 workloads at 10/s, a burst of 10: 20 after 1 s, all 25 after 2 s.
    const h = await start(
      { evaluatePerSecond: 10 },
      { count: 25, settled: false, recorded: false },
    );
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.count('GET')).toBe(20);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.api.count('GET')).toBe(25);
    await h.stop();
  });

  it('a resync with nothing changed makes no GET and no LIST', async () => {
    const h = await start({ resyncMs: 60_000 }, { count: 5 });
    await vi.advanceTimersByTimeAsync(3 * 60_000);
    expect(h.since('GET')).toBe(0);
    expect(h.since('LIST')).toBe(0);
    expect(h.api.touches).toEqual([]);
    await h.stop();
  });

  it('a change of a source one workload reads: no LIST, one GET, one PATCH, one Event', async () => {
    const h = await start({ debounceMs: 1000 }, { count: 1 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.since('LIST')).toBe(0);
    expect(h.since('GET')).toBe(1);
    expect(h.since('PATCH')).toBe(1);
    expect(h.since('POST events')).toBe(1);
    // The touch's own write comes back as a workload event: it asks for nothing more.
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    expect(h.since('GET')).toBe(1);
    await h.stop();
  });

  it('a fan-out to N workloads under a tight rate limit makes N GETs, each touch once', async () => {
    const h = await start({ debounceMs: 1000, ratePerSecond: 2, burst: 1 }, { count: 12 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1000 + 6000 + 50);
    expect(h.since('GET')).toBe(12);
    expect(h.since('PATCH')).toBe(12);
    expect(new Set(h.api.touches.map((t) => t.name)).size).toBe(12);
    expect(h.since('LIST')).toBe(0);
    await h.stop();
  });
});

// docs/security.md "Rotate the hash key": the workloads were hashed with KEY; the follower now
// has another current key.
describe('key rotation', () => {
  const NEW_KEY = Buffer.alloc(32, 10);
  it.each([
    ['the old key kept as a previous one: no touch, each hash counted', [KEY], 0, 3],
    ['the old key dropped: each workload touched once, nothing counted', [], 3, 0],
  ])('%s', async (_name, previousHashKeys, touches, counted) => {
    let mark = 0;
    const h = await start(
      {},
      {
        count: 3,
        keys: { hashKey: NEW_KEY, previousHashKeys },
        before: (api) => {
          mark = api.requests.length;
        },
      },
    );
    const patches = h.api.requests.slice(mark).filter((r) => r.startsWith('PATCH'));
    expect(patches.length).toBe(touches);
    expect(h.calls.filter((call) => call === 'previous-key-hash').length).toBe(counted);
    await h.stop();
  });
});

describe('the reference index', () => {
  it('events of namespaces that are not followed are dropped', async () => {
    const h = await start({ debounceMs: 1000 }, { count: 2, unfollowed: ['elsewhere'] });
    expect(h.api.count(`GET Deployment elsewhere/`)).toBe(0);
    h.api.change('elsewhere', 'configmaps', 'app', 'MODIFIED');
    h.api.putWorkload('elsewhere', workload({ name: 'late', podSpec: POD_SPEC }));
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    expect(h.since('GET')).toBe(0);
    expect(h.api.touches).toEqual([]);
    await h.stop();
  });

  it('kube-system and an --excluded-namespace are never followed, whatever their label', async () => {
    const h = await start(
      { debounceMs: 1000 },
      {
        count: 2,
        recorded: false,
        unfollowed: ['kube-system', 'team-b'],
        excluded: ['team-b'],
        before: (api) => void ['kube-system', 'team-b'].map((name) => api.followNamespace(name)),
      },
    );
    expect(h.api.count(`GET Deployment ${NAMESPACE}/`)).toBe(2);
    for (const name of ['kube-system', 'team-b']) {
      expect(h.api.count(`GET Deployment ${name}/`)).toBe(0);
      h.source.configMap('app', { v: '2' });
      h.api.change(name, 'configmaps', 'app', 'MODIFIED');
    }
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    expect(h.api.touches.map((t) => t.namespace)).not.toContain('kube-system');
    expect(h.api.touches.map((t) => t.namespace)).not.toContain('team-b');
    await h.stop();
  });

  it('a namespace labelled follow later is listed once by itself, then evaluated', async () => {
    const h = await start(
      { debounceMs: 1000 },
      { count: 2, unfollowed: ['later'], recorded: false },
    );
    h.api.followNamespace('later');
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.since('LIST Deployment')).toBe(1);
    expect(h.since('GET Deployment later/')).toBe(2);
    expect(h.api.touches).toEqual([]);
    h.source.configMap('app', { v: '2' });
    h.api.change('later', 'configmaps', 'app', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches.map((t) => `${t.namespace}/${t.name}`).sort()).toEqual([
      'later/web-0',
      'later/web-1',
    ]);
    h.api.unfollowNamespace('later');
    h.api.change('later', 'configmaps', 'app', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.minIntervalMs + 1000);
    expect(h.api.touches).toHaveLength(2);
    await h.stop();
  });

  it('a wrong entry is corrected by the workload’s own watch event', async () => {
    const h = await start({ debounceMs: 1000 });
    const reads = {
      ...POD_SPEC,
      volumes: [...POD_SPEC.volumes, { name: 'o', configMap: { name: 'other' } }],
    };
    h.source.configMap('other', { v: '1' });
    h.api.putWorkloadUnseen(NAMESPACE, workload({ name: 'web-0', podSpec: reads }));
    await h.api.write(NAMESPACE, DEPLOYMENT, 'web-0', signal(), { unseen: true });
    h.source.configMap('other', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'other', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.since('GET')).toBe(0); // The index does not know web-0 reads it.
    h.api.announceWorkload('Deployment', NAMESPACE, 'web-0');
    h.source.configMap('other', { v: '3' });
    h.api.change(NAMESPACE, 'configmaps', 'other', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches.map((t) => t.name)).toEqual(['web-0']);
    expect(h.api.events.map((e) => e.note)).toEqual([
      'confighash: configmap/other changed; rolling',
    ]);
    await h.stop();
  });

  it('the periodic resync rolls a workload whose source moved without a touch being asked', async () => {
    const h = await start({ debounceMs: 1000, resyncMs: 60_000 });
    const reads = {
      ...POD_SPEC,
      volumes: [...POD_SPEC.volumes, { name: 'o', configMap: { name: 'other' } }],
    };
    h.source.configMap('other', { v: '1' });
    h.api.putWorkloadUnseen(NAMESPACE, workload({ name: 'web-0', podSpec: reads }));
    await h.api.write(NAMESPACE, DEPLOYMENT, 'web-0', signal(), { unseen: true });
    h.source.configMap('other', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'other', 'MODIFIED'); // Nobody reads it, as far as the index knows.
    h.api.announceWorkload('Deployment', NAMESPACE, 'web-0'); // Now it does: moved since its evaluation.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(h.api.touches).toEqual([]);
    await vi.advanceTimersByTimeAsync(32_000);
    expect(h.since('GET')).toBe(1);
    expect(h.api.touches).toHaveLength(1);
    expect(h.api.events.map((event) => event.note)).toEqual([
      'confighash: config changed while not watched (sources: configmap/app,configmap/new,configmap/other); rolling',
    ]);
    await h.stop();
  });
});

// docs/design.md §2 "opt workloads in one at a time": in a follow namespace labelled
// confighash.dev/workloads=annotated, follow mode never evaluates (GETs) nor touches a
// workload that is not annotated confighash.dev/enabled: "true".
describe('per-workload opt-in', () => {
  const ANNOTATED_ONLY = { 'confighash.dev/workloads': 'annotated' };
  const OPTED_IN = { 'confighash.dev/enabled': 'true' };

  /** web-0 and web-1, unannotated, and `mine`, annotated, all reading `app`. */
  async function startAnnotatedOnly(
    options: Partial<FollowOptions> = {},
    setup: Pick<Setup, 'recorded'> = {},
  ): Promise<Harness> {
    return start(
      { debounceMs: 1000, ...options },
      {
        ...setup,
        count: 2,
        before: async (api) => {
          api.followNamespace(NAMESPACE, {}, ANNOTATED_ONLY);
          api.putWorkload(
            NAMESPACE,
            workload({ name: 'mine', podSpec: POD_SPEC, annotations: OPTED_IN }),
          );
          await api.write(NAMESPACE, DEPLOYMENT, 'mine', signal());
        },
      },
    );
  }
  const touched = (h: Harness) => h.api.touches.map((t) => t.name).sort();
  /** Annotates web-0 (or, `{}`, removes the annotation), as a write its watch sees (or, `unseen`, misses). */
  function annotateWeb0(h: Harness, opted: Record<string, string>, unseen = false): void {
    const object = h.api.workload('Deployment', NAMESPACE, 'web-0')!;
    const { 'confighash.dev/enabled': _, ...kept } = (object.metadata.annotations ?? {}) as Record<
      string,
      string
    >;
    const changed = {
      ...object,
      metadata: { ...object.metadata, annotations: { ...kept, ...opted } },
    };
    if (unseen) h.api.putWorkloadUnseen(NAMESPACE, changed);
    else h.api.putWorkload(NAMESPACE, changed);
  }

  it('taking the lead evaluates only the annotated workload; a change touches only it', async () => {
    const h = await startAnnotatedOnly({}, { recorded: false });
    expect(h.api.count(`GET Deployment ${NAMESPACE}/mine`)).toBe(1);
    expect(h.api.count(`GET Deployment ${NAMESPACE}/web-`)).toBe(0);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    expect(touched(h)).toEqual(['mine']);
    expect(h.api.count(`GET Deployment ${NAMESPACE}/web-`)).toBe(0);
    await h.stop();
  });

  it('a workload annotated later is followed from its watch event on', async () => {
    const h = await startAnnotatedOnly();
    annotateWeb0(h, OPTED_IN);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual(['mine', 'web-0']);
    await h.stop();
  });

  it('a workload whose annotation is removed leaves the index: no GET, no touch', async () => {
    const h = await startAnnotatedOnly();
    annotateWeb0(h, OPTED_IN);
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000); // evaluated once
    annotateWeb0(h, {});
    const gets = h.api.count(`GET Deployment ${NAMESPACE}/web-0`);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    expect(touched(h)).toEqual(['mine']);
    expect(h.api.count(`GET Deployment ${NAMESPACE}/web-0`)).toBe(gets);
    await h.stop();
  });

  it('a touch due after the annotation went unseen reads it once and stops: no evaluation, no touch', async () => {
    const h = await startAnnotatedOnly();
    annotateWeb0(h, OPTED_IN);
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    annotateWeb0(h, {}, true);
    const lookups = h.source.calls.length;
    const gets = h.api.count(`GET Deployment ${NAMESPACE}/web-0`);
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual(['mine']);
    // mine's evaluation and its touch (the webhook) look up its two sources each; web-0's
    // evaluation would add two more.
    expect(h.source.calls.length - lookups).toBe(4);
    expect(h.api.count(`GET Deployment ${NAMESPACE}/web-0`)).toBe(gets + 1);
    await h.stop();
  });

  it.each([
    ['labelled annotated', {}, ANNOTATED_ONLY, ['mine']],
    ['its label removed', ANNOTATED_ONLY, {}, ['mine', 'web-0', 'web-1']],
  ])(
    'a followed namespace %s: the next change touches accordingly',
    async (_n, from, to, names) => {
      const h = await startAnnotatedOnly();
      h.api.followNamespace(NAMESPACE, {}, from);
      await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
      h.api.followNamespace(NAMESPACE, {}, to);
      await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
      expect(h.api.touches).toEqual([]);
      changeApp(h, '2');
      await vi.advanceTimersByTimeAsync(1050);
      expect(touched(h)).toEqual(names);
      await h.stop();
    },
  );

  // The decision table (src/workload/handled.ts) is follow mode's too: web-0 is touched
  // exactly when the table hands it over (test/unit/handled.test.ts has the table).
  it.each(
    [
      ['all', {}],
      ['annotated', ANNOTATED_ONLY],
    ].flatMap(([mode, labels]) =>
      [undefined, 'true', 'false', 'yes'].map(
        (value) => [`${mode} workloads, web-0 ${value ?? 'not annotated'}`, labels, value] as const,
      ),
    ),
  )('%s: touched as the table says', async (_n, labels, value) => {
    const h = await startAnnotatedOnly();
    h.api.followNamespace(NAMESPACE, {}, labels as Record<string, string>);
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    const annotations: Record<string, string> =
      value === undefined ? {} : { 'confighash.dev/enabled': value };
    annotateWeb0(h, annotations);
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs + 1000);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    const standing = labels === ANNOTATED_ONLY ? 'annotated' : 'all';
    expect(touched(h).includes('web-0')).toBe(decideHandled(annotations, standing).handled);
    await h.stop();
  });
});

describe('guards', () => {
  it('a burst of changes to many workloads is held to the global rate limit', async () => {
    const h = await start({ debounceMs: 1000, ratePerSecond: 1, burst: 2 }, { count: 5 });
    expect(h.api.touches).toEqual([]);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1000 + 50);
    expect(h.api.touches).toHaveLength(2); // the burst
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.api.touches).toHaveLength(3); // then one per second
    await vi.advanceTimersByTimeAsync(2000);
    expect(h.api.touches).toHaveLength(5);
    expect(h.calls).toContain('deferred rate-limit');
    await h.stop();
  });

  it('touches one workload at most once per minimum interval', async () => {
    const h = await start({ debounceMs: 1000, minIntervalMs: 60_000 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches).toHaveLength(1);
    const first = h.api.touches[0]!.at;
    changeApp(h, '3');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(h.api.touches).toHaveLength(1);
    expect(h.calls).toContain('deferred min-interval');
    await vi.advanceTimersByTimeAsync(31_000);
    expect(h.api.touches).toHaveLength(2);
    expect(h.api.touches[1]!.at - first).toBeGreaterThanOrEqual(60_000);
    await h.stop();
  });

  it('a burst of changes to one workload makes one touch, after the debounce', async () => {
    const h = await start({ debounceMs: 5000 });
    for (let i = 2; i < 6; i++) {
      changeApp(h, String(i));
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(h.api.touches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toHaveLength(1);
    expect(h.since('GET')).toBe(1);
    await h.stop();
  });

  it('a change to a ConfigMap the workload does not read touches nothing, reads nothing', async () => {
    const h = await start({ debounceMs: 1000 });
    h.source.configMap('other', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'other', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toEqual([]);
    expect(h.since('GET')).toBe(0);
    await h.stop();
  });
});

describe('kinds', () => {
  it('an opt-in kind is listed, watched and touched; one whose CRD is absent is listed again later, the others unharmed', async () => {
    const kinds = [DEPLOYMENT, ROLLOUT];
    const h = await start(
      { debounceMs: 1000, resyncMs: 60_000 },
      { kinds, before: (api) => void api.absentKinds.add('Rollout') },
    );
    expect(h.api.watches.map((w) => w.resource).sort()).toEqual([
      'Deployment',
      'configmaps',
      'secrets',
    ]);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches.map((t) => t.kind)).toEqual(['Deployment']);
    // The CRD is installed; a Rollout appears; the next attempt lists and watches it.
    h.api.absentKinds.delete('Rollout');
    h.api.putWorkloadUnseen(NAMESPACE, {
      ...workload({ name: 'canary', podSpec: POD_SPEC }),
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.api.watches.map((w) => w.resource)).toContain('Rollout');
    expect(h.since('GET Rollout')).toBe(1); // Never evaluated: the resync after its list did.
    expect(h.api.touches.map((t) => t.kind)).toEqual(['Deployment', 'Rollout']); // adopted
    await h.stop();
  });
  it('a resource whose list keeps failing holds back no evaluation of the others', async () => {
    const h = await start(
      { resyncMs: 60_000 },
      {
        count: 3,
        settled: false,
        recorded: false,
        before: (api) => void api.failingLists.add('secrets'),
      },
    );
    await vi.advanceTimersByTimeAsync(1010);
    expect(h.api.requests.filter((r) => r === 'LIST secrets').length).toBeGreaterThan(0);
    expect(h.api.requests.filter((r) => r.startsWith('GET Deployment')).length).toBe(3);
    // Once its list succeeds, the workloads are not evaluated again: no source of theirs moved.
    h.api.failingLists.delete('secrets');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.api.requests.filter((r) => r.startsWith('GET Deployment')).length).toBe(3);
    expect(h.api.touches).toEqual([]);
    await h.stop();
  });
});

// docs/design.md §6: a workload the webhook hashed counts as evaluated at the versions it
// read (its hashed-versions), so creating workloads and taking the lead cost work only for
// the sources that moved since — and a change that lands between the webhook's read and
// the follower's event is never lost.
describe('cost in proportion to what changed', () => {
  const OPTIONS = { debounceMs: 1000, resyncMs: 60_000 };
  /** `own-N`: a Deployment reading ConfigMap `own-N` alone. */
  const reader = (n: number) =>
    workload({
      name: `own-${n}`,
      podSpec: { volumes: [{ name: 'c', configMap: { name: `own-${n}` } }], containers: [] },
    });
  /** ConfigMap `own-N` written with `v`, its watch event delivered (or, `unseen`, not yet). */
  function writeOwn(
    api: MemoryFollowApi,
    source: MemorySource,
    n: number,
    v: string,
    unseen = false,
  ) {
    source.configMap(`own-${n}`, { v });
    if (unseen) api.changeUnseen(NAMESPACE, 'configmaps', `own-${n}`);
    else api.change(NAMESPACE, 'configmaps', `own-${n}`, v === '1' ? 'ADDED' : 'MODIFIED');
  }
  /** Whether own-N's template carries the hash of its ConfigMap's content now. */
  async function hashedNow(h: Harness, n: number): Promise<boolean> {
    const stored = h.api.workload('Deployment', NAMESPACE, `own-${n}`)!;
    const now = await digestOf(h.source, readWorkload(stored, DEPLOYMENT), KEY, NAMESPACE);
    const template = (
      stored.spec as { template: { metadata?: { annotations?: Record<string, string> } } }
    ).template;
    return template.metadata?.annotations?.[HASH] === now;
  }
  const gets = (h: Harness) => h.api.count('GET Deployment');

  it('a new leader reads only the readers of what changed while no leader ran', async () => {
    const h = await start(OPTIONS, {
      count: 0,
      before: async (api, source) => {
        for (let n = 0; n < 10; n++) {
          writeOwn(api, source, n, '1');
          await api.create(NAMESPACE, DEPLOYMENT, reader(n), signal());
        }
        writeOwn(api, source, 3, '2', true);
      },
    });
    await vi.advanceTimersByTimeAsync(OPTIONS.debounceMs + 1000);
    expect(h.api.requests.filter((r) => r.startsWith('GET '))).toEqual([
      `GET Deployment ${NAMESPACE}/own-3`,
    ]);
    expect(h.api.touches.map((t) => t.name)).toEqual(['own-3']);
    expect(await hashedNow(h, 3)).toBe(true);
    await h.stop();
  });

  it('workloads created while it leads cost no read at the next resyncs', async () => {
    const h = await start(OPTIONS, { count: 0 });
    for (let n = 0; n < 10; n++) {
      writeOwn(h.api, h.source, n, '1');
      await h.api.create(NAMESPACE, DEPLOYMENT, reader(n), signal());
    }
    await vi.advanceTimersByTimeAsync(2 * OPTIONS.resyncMs + 1000);
    expect(gets(h)).toBe(0);
    expect(h.api.touches).toEqual([]);
    await h.stop();
  });

  it.each([
    {
      name: 'changed before the webhook read it: nothing to do',
      create: async (h: Harness) => {
        writeOwn(h.api, h.source, 0, '2');
        await h.api.create(NAMESPACE, DEPLOYMENT, reader(0), signal());
      },
      touches: 0,
    },
    {
      name: 'changed after the webhook read it, its event before the workload’s: the resync touches it',
      create: (h: Harness) =>
        h.api.create(NAMESPACE, DEPLOYMENT, reader(0), signal(), () =>
          writeOwn(h.api, h.source, 0, '2'),
        ),
      touches: 1,
    },
    {
      name: 'changed after the webhook read it, its event after the workload’s: the event touches it',
      create: async (h: Harness) => {
        await h.api.create(NAMESPACE, DEPLOYMENT, reader(0), signal(), () =>
          writeOwn(h.api, h.source, 0, '2', true),
        );
        h.api.announceConfig(NAMESPACE, 'configmaps', 'own-0');
      },
      touches: 1,
    },
    {
      name: 'changed after the workload reached the follower: the event touches it',
      create: async (h: Harness) => {
        await h.api.create(NAMESPACE, DEPLOYMENT, reader(0), signal());
        writeOwn(h.api, h.source, 0, '2');
      },
      touches: 1,
    },
  ])('a source $name', async ({ create, touches }) => {
    const h = await start(OPTIONS, { count: 0 });
    writeOwn(h.api, h.source, 0, '1');
    await create(h);
    await vi.advanceTimersByTimeAsync(OPTIONS.resyncMs + OPTIONS.debounceMs + 1000);
    expect(h.api.touches).toHaveLength(touches);
    expect(await hashedNow(h, 0)).toBe(true);
    await h.stop();
  });
});

describe('watches', () => {
  it('a watch the server ends resumes from its last resourceVersion, without a relist', async () => {
    const h = await start({ debounceMs: 1000 });
    const before = h.api.watches.find((w) => w.resource === 'configmaps')!.resourceVersion;
    h.api.endWatches('configmaps', {});
    await vi.advanceTimersByTimeAsync(10);
    const after = h.api.watches.find((w) => w.resource === 'configmaps')!;
    expect(after.resourceVersion).not.toBe(before);
    expect(h.since('LIST')).toBe(0);
    expect(h.calls).toContain('watch-restart ended');
    await h.stop();
  });

  it('410 Gone: relists, and evaluates only the workloads whose sources moved meanwhile', async () => {
    const h = await start({ debounceMs: 1000 }, { count: 2 });
    h.api.putWorkload(
      NAMESPACE,
      workload({
        name: 'apart',
        podSpec: { volumes: [{ name: 'x', configMap: { name: 'x' } }], containers: [] },
      }),
    );
    await h.api.write(NAMESPACE, DEPLOYMENT, 'apart', signal());
    h.api.change(NAMESPACE, 'configmaps', 'x', 'ADDED');
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs); // evaluated once, as new
    const gets = h.api.count('GET');
    h.source.configMap('app', { v: '2' }); // changed while the watch was too old to resume
    h.api.changeUnseen(NAMESPACE, 'configmaps', 'app');
    h.api.endWatches('configmaps', { expired: true });
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.since('LIST configmaps')).toBe(1);
    expect(h.calls).toContain('watch-restart expired');
    expect(h.api.count('GET') - gets).toBe(2);
    expect(h.api.touches.map((t) => t.name).sort()).toEqual(['web-0', 'web-1']);
    await h.stop();
  });

  it('a failed watch is retried after a backoff that grows', async () => {
    const h = await start({ debounceMs: 1000 });
    h.api.endWatches('secrets', { error: new Error('connection reset') });
    await vi.advanceTimersByTimeAsync(10);
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(0);
    expect(h.calls).toContain('watch-restart error');
    await vi.advanceTimersByTimeAsync(4000); // the first wait: 1 s × 1 to 4, at random
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(1);
    h.api.endWatches('secrets', { error: new Error('again') });
    await vi.advanceTimersByTimeAsync(1990); // the second: 2 s × 1 to 4
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(6010);
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(1);
    await h.stop();
  });

  it('stopping ends every watch and touches nothing more', async () => {
    const h = await start({ debounceMs: 1000 });
    changeApp(h, '2');
    await h.stop();
    expect(h.api.watches).toEqual([]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toEqual([]);
  });
});

describe('telling people', () => {
  it('a change that drops a key new pods need is held: a RequiredConfigMissing Warning once, counted; restoring the key rolls it', async () => {
    const keyed = {
      containers: [
        {
          name: 'app',
          env: [{ name: 'V', valueFrom: { configMapKeyRef: { name: 'app', key: 'v' } } }],
        },
      ],
    };
    const h = await start(
      { debounceMs: 1000, minIntervalMs: 1000 },
      {
        async before(api) {
          api.putWorkload(NAMESPACE, workload({ name: 'web-0', podSpec: keyed }));
          await api.write(NAMESPACE, DEPLOYMENT, 'web-0', signal());
        },
      },
    );
    const missing = () => h.api.events.filter((event) => event.reason === 'RequiredConfigMissing');
    h.source.configMap('app', { other: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches).toEqual([]);
    expect(missing().map(({ name, type, note }) => [name, type, note])).toEqual([
      [
        'web-0',
        'Warning',
        'confighash: config change held, the workload did not roll: its new pods would not start (configmap/app has no key "v"); it rolls once that exists',
      ],
    ]);
    expect(h.calls).toContain('missing Deployment');
    h.source.configMap('app', { other: '3' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(missing()).toHaveLength(1); // the same news, not said again
    changeApp(h, '4');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches.map((touch) => touch.name)).toEqual(['web-0']);
    await h.stop();
  });

  it.each([
    ['request-failed', (h: Harness) => h.api.failingGets.add(`Deployment/${NAMESPACE}/web-0`)],
    ['sources-unreadable', (h: Harness) => h.source.fail('ConfigMap', 'app', 'forbidden')],
  ] as const)('a failed reconcile counts with its reason, %s', async (reason, breakIt) => {
    const h = await start({ debounceMs: 1000 });
    changeApp(h, '2');
    breakIt(h);
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches).toEqual([]);
    expect(h.calls.filter((call) => call.startsWith('reconcile-error'))).toEqual([
      `reconcile-error ${reason}`,
    ]);
    await h.stop();
  });

  it('a resync reports the index it ran over, and when', async () => {
    const h = await start({ resyncMs: 60_000 }, { count: 3 });
    const resyncs = () => h.calls.filter((call) => call.startsWith('resynced'));
    expect(resyncs()).toHaveLength(1); // the one the end of the first lists runs
    const before = Date.now();
    await vi.advanceTimersByTimeAsync(60_000);
    // web-0..2 read configmap/app (and configmap/new, which does not exist).
    expect(resyncs()).toHaveLength(2);
    const [, workloads, sources, at] = /^resynced (\d+) workloads (\d+) sources at (\d+)$/.exec(
      resyncs().at(-1)!,
    )!;
    expect([workloads, sources]).toEqual(['3', '1']);
    expect(Number(at)).toBeGreaterThan(before);
    expect(Number(at)).toBeLessThanOrEqual(Date.now());
    await h.stop();
  });

  it('a touch counts in the metrics and records a ConfigChanged Event naming the source', async () => {
    const h = await start({ debounceMs: 1000 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.calls).toContain('touched Deployment');
    expect(h.api.events).toEqual([
      expect.objectContaining({
        name: 'web-0',
        namespace: NAMESPACE,
        type: 'Normal',
        reason: 'ConfigChanged',
        action: 'Touch',
        note: 'confighash: configmap/app changed; rolling',
      }),
    ]);
    await h.stop();
  });

  it.each([
    ['closed', 'Sat-Sun 00:00-00:01 UTC', 'Normal', 'RolloutDeferred'],
    ['unreadable', 'whenever', 'Warning', 'InvalidRolloutWindow'],
  ])('outside a %s rollout window the touch is held, said once', async (_n, text, type, reason) => {
    vi.setSystemTime(new Date('2026-12-01T12:00:00Z')); // a Tuesday
    const h = await start({ debounceMs: 1000 });
    const object = h.api.workload('Deployment', NAMESPACE, 'web-0')!;
    object.metadata.annotations = { 'confighash.dev/rollout-window': text };
    for (const v of ['2', '3']) {
      changeApp(h, v);
      await vi.advanceTimersByTimeAsync(1050);
    }
    expect(h.api.touches).toEqual([]);
    expect(h.calls).toContain('deferred window');
    expect(h.api.events).toEqual([expect.objectContaining({ type, reason, action: 'Defer' })]);
    await h.stop();
  });

  it('a touch the cluster refuses is counted, said once in a TouchDenied Event, retried, and rolls once allowed', async () => {
    const h = await start({ debounceMs: 1000, retryMs: 5000 });
    const refusal = "ValidatingAdmissionPolicy 'confighash-follow-fence' denied request";
    h.api.deniedTouches.set(`Deployment/${NAMESPACE}/web-0`, refusal);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050 + 3 * 5000);
    expect(h.api.touches).toEqual([]);
    expect(h.since('PATCH')).toBe(4);
    expect(h.calls.filter((c) => c === 'denied Deployment')).toHaveLength(4);
    expect(h.calls).toContain('deferred denied');
    expect(h.api.events).toEqual([
      expect.objectContaining({
        name: 'web-0',
        type: 'Warning',
        reason: 'TouchDenied',
        action: 'Touch',
        note: `confighash: touch denied, the workload did not roll: ${refusal}`,
      }),
    ]);
    h.api.deniedTouches.clear();
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toHaveLength(1);
    expect(h.api.events.map((e) => e.reason)).toEqual(['TouchDenied', 'ConfigChanged']);
    await h.stop();
  });
});

it.each([
  ['paused', { paused: true }, 'RolloutHeld', /^confighash: paused: pods keep the old config/],
  [
    'Recreate',
    { strategy: { type: 'Recreate' } },
    'RolloutOutage',
    /this config change is an outage$/,
  ],
])(
  'a touch of a %s Deployment also records a Warning Event saying what the pods will do',
  async (_n, spec, reason, note) => {
    const h = await start({ debounceMs: 1000 });
    const object = h.api.workload('Deployment', NAMESPACE, 'web-0')!;
    Object.assign(object.spec as Record<string, unknown>, spec);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches).toHaveLength(1);
    expect(h.api.events).toEqual([
      expect.objectContaining({ type: 'Normal', reason: 'ConfigChanged' }),
      expect.objectContaining({
        type: 'Warning',
        reason,
        action: 'Touch',
        note: expect.stringMatching(note),
      }),
    ]);
    await h.stop();
  },
);

describe('what the Event says happened', () => {
  it('a ConfigMap created in the same debounce window is reported as created, not changed', async () => {
    const h = await start({ debounceMs: 5000 });
    h.source.configMap('new', { v: '1' });
    h.api.change(NAMESPACE, 'configmaps', 'new', 'ADDED');
    await vi.advanceTimersByTimeAsync(1000);
    h.source.configMap('new', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'new', 'MODIFIED');
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(5050);
    expect(h.api.touches).toHaveLength(1);
    expect(h.api.events.map((event) => event.note)).toEqual([
      'confighash: configmap/new created; configmap/app changed; rolling',
    ]);
    await h.stop();
  });

  it('names a deleted source as deleted', async () => {
    const h = await start({ debounceMs: 1000 });
    h.source.configMap('new', { v: '1' });
    h.api.change(NAMESPACE, 'configmaps', 'new', 'ADDED');
    await vi.advanceTimersByTimeAsync(61_000); // past the minimum interval
    h.source.delete('ConfigMap', 'new');
    h.api.change(NAMESPACE, 'configmaps', 'new', 'DELETED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.events.map((event) => event.note)).toEqual([
      'confighash: configmap/new created; rolling',
      'confighash: configmap/new deleted; rolling',
    ]);
    await h.stop();
  });
});

// docs/design.md §6 "Canary-first fan-out": the workloads web-0… read ConfigMap `app`; each is
// a Deployment of one replica whose rollout the test finishes or fails by writing its status.
describe('canary-first fan-out: one state machine, kept on the source', () => {
  const WINDOW_MS = 60_000;
  const CANARY_OPTIONS = {
    debounceMs: 1000,
    ratePerSecond: 100,
    burst: 100,
    canaries: 1,
    canaryPollMs: 5000,
    canaryWindowMs: WINDOW_MS,
    minIntervalMs: 1000,
  };

  /** Writes `name`'s status, as the Deployment controller would. */
  function rollout(h: Harness, name: string, status: Record<string, unknown>): void {
    const object = h.api.workload('Deployment', NAMESPACE, name)!;
    (object as Record<string, unknown>).status = { observedGeneration: 0, ...status };
  }
  const FINISHED = { replicas: 1, updatedReplicas: 1, availableReplicas: 1 };
  const DEADLINE = {
    replicas: 2,
    updatedReplicas: 1,
    conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
  };
  const finishAll = (h: Harness, count: number) => {
    for (let i = 0; i < count; i++) rollout(h, `web-${i}`, FINISHED);
  };
  const touched = (h: Harness) => h.api.touches.map((touch) => touch.name);
  /** Adds annotations to a stored workload, keeping those the webhook wrote. */
  function annotate(api: MemoryFollowApi, name: string, added: Record<string, string>) {
    const object = api.workload('Deployment', NAMESPACE, name)!;
    object.metadata.annotations = { ...(object.metadata.annotations as object), ...added };
    api.announceWorkload('Deployment', NAMESPACE, name);
  }
  const record = (h: Harness, name = 'app') =>
    readFanoutRecord(h.api.recordOf(NAMESPACE, 'configmaps', name));
  /** A pod of the canary's new revision (every test workload selects app=web). */
  function pod(h: Harness, state: Record<string, unknown>, restartCount = 0): void {
    h.api.pods.set(`${NAMESPACE}/app=web`, [
      {
        metadata: { name: 'web-0-abc', creationTimestamp: new Date().toISOString() },
        status: { containerStatuses: [{ name: 'app', restartCount, state }] },
      },
    ]);
  }
  /** A change of `app` to `v`, whose canary web-0 then exceeds its progress deadline. */
  async function haltOnItsCanary(h: Harness, v: string): Promise<void> {
    changeApp(h, v);
    await vi.advanceTimersByTimeAsync(1050);
    rollout(h, 'web-0', DEADLINE);
    await vi.advanceTimersByTimeAsync(5100);
  }

  /** The change reaches the canary (debounce), and its window passes with it finished. */
  async function throughCanary(h: Harness, count: number): Promise<void> {
    await vi.advanceTimersByTimeAsync(1050);
    finishAll(h, count);
    await vi.advanceTimersByTimeAsync(WINDOW_MS + 100);
  }

  it('touches the canary first; the rest, in order, once its window passed with the rollout finished', async () => {
    const h = await start(CANARY_OPTIONS, { count: 5 });
    finishAll(h, 5);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050 + WINDOW_MS - 5000);
    expect(touched(h)).toEqual(['web-0']); // finished, but its window is not over
    expect(record(h)).toMatchObject({ phase: 'canary', canaries: [{ name: 'web-0' }] });
    expect(h.calls).toContain('behind 4');
    await vi.advanceTimersByTimeAsync(5000 + 100);
    expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
    expect(record(h)).toMatchObject({ phase: 'done' });
    expect(record(h)!.rolled).toBe(record(h)!.change);
    expect(h.calls).not.toContain('fanout-halted');
    await h.stop();
  });

  it('the rest are touched even when a read of the source (its record’s own echo) holds them as they come due', async () => {
    const h = await start(CANARY_OPTIONS, { count: 4 });
    h.source.latencyMs = 50; // a read of the source outlasts the drain's first due touches
    finishAll(h, 4);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050 + WINDOW_MS + 100);
    await vi.advanceTimersByTimeAsync(5000);
    expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2', 'web-3']);
    expect(record(h)).toMatchObject({ phase: 'done' });
    await h.stop();
  });

  it('--follow-canaries=2: both are touched first, and each one’s touch is recorded as sent', async () => {
    const h = await start({ ...CANARY_OPTIONS, canaries: 2 }, { count: 4 });
    changeApp(h, '2');
    // The second waits a second: the first one's `sent` write was being read back.
    await vi.advanceTimersByTimeAsync(3500);
    expect(touched(h)).toEqual(['web-0', 'web-1']);
    expect(record(h)!.canaries!.map((canary) => Boolean(canary.sent))).toEqual([true, true]);
    await h.stop();
  });

  it('an annotated canary goes first, whatever the order', async () => {
    const h = await start(CANARY_OPTIONS, {
      count: 3,
      before(api) {
        annotate(api, 'web-2', { 'confighash.dev/canary': 'true' });
      },
    });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual(['web-2']);
    await h.stop();
  });

  it.each([
    [
      'its Deployment exceeds its progress deadline',
      (h: Harness) => rollout(h, 'web-0', DEADLINE),
      /failed: ProgressDeadlineExceeded/,
    ],
    [
      'a pod of its new revision crash-loops',
      (h: Harness) => pod(h, { waiting: { reason: 'CrashLoopBackOff' } }),
      /pod web-0-abc: container app CrashLoopBackOff/,
    ],
    [
      'a pod cannot read its config',
      (h: Harness) =>
        pod(h, {
          waiting: { reason: 'CreateContainerConfigError', message: 'key LEVEL not found' },
        }),
      /CreateContainerConfigError: key LEVEL not found/,
    ],
    [
      'a pod restarted',
      (h: Harness) => pod(h, { running: {} }, 1),
      /container app restarted 1 times/,
    ],
  ])(
    'a canary fails at once when %s: halted, on the source and the canary, nothing else touched',
    async (_, fail, why) => {
      const h = await start(CANARY_OPTIONS, { count: 4 });
      changeApp(h, '2');
      await vi.advanceTimersByTimeAsync(1050);
      fail(h);
      await vi.advanceTimersByTimeAsync(5000 + 100);
      expect(record(h)).toMatchObject({ phase: 'halted', canaries: [{ name: 'web-0' }] });
      expect(record(h)!.why).toMatch(why);
      expect(h.calls).toContain('fanout-halted');
      expect(h.calls).toContain('held 4');
      const halted = h.api.events.filter((event) => event.reason === 'FanoutHalted');
      expect(halted.map(({ kind, name, type }) => [kind.kind, name, type])).toEqual([
        ['ConfigMap', 'app', 'Warning'],
        ['Deployment', 'web-0', 'Warning'],
      ]);
      expect(halted[0]!.note).toContain(
        `fan-out of change ${record(h)!.change} of configmap/app halted`,
      );
      // Neither the queue nor the periodic resync touches the held ones.
      await vi.advanceTimersByTimeAsync(2 * DEFAULT_FOLLOW_OPTIONS.resyncMs);
      expect(touched(h)).toEqual(['web-0']);
      await h.stop();
    },
  );

  it('a canary not Ready by the end of its window halts; the halt is said again while it lasts', async () => {
    const h = await start(CANARY_OPTIONS, { count: 3 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050 + WINDOW_MS - 5000);
    expect(h.calls).not.toContain('fanout-halted');
    await vi.advanceTimersByTimeAsync(5000 + 100);
    expect(record(h)!.why).toMatch(
      /not Ready and available within 1 min of its touch \(0 of 1 replicas updated\)/,
    );
    expect(touched(h)).toEqual(['web-0']);
    const said = () => h.api.events.filter((event) => event.reason === 'FanoutHalted').length;
    expect(said()).toBe(2);
    await vi.advanceTimersByTimeAsync(HALT_REPEAT_MS);
    expect(said()).toBe(4);
    await h.stop();
  });

  it('a canary that cannot test the change is not counted: 0 replicas, or no new template; none at all halts', async () => {
    const h = await start(CANARY_OPTIONS, {
      count: 4,
      before(api) {
        // web-0 runs no pods; web-1 is annotated but will already have the change.
        (
          api.workload('Deployment', NAMESPACE, 'web-0')! as unknown as {
            spec: { replicas: number };
          }
        ).spec.replicas = 0;
        annotate(api, 'web-1', { 'confighash.dev/canary': 'true' });
      },
    });
    h.source.configMap('app', { v: '2' });
    h.api.changeUnseen(NAMESPACE, 'configmaps', 'app');
    await h.api.write(NAMESPACE, DEPLOYMENT, 'web-1', signal()); // its owner applied it
    h.api.announceConfig(NAMESPACE, 'configmaps', 'app');
    await vi.advanceTimersByTimeAsync(1500);
    expect(touched(h)).toEqual(['web-2']);
    expect(record(h)).toMatchObject({ phase: 'canary', canaries: [{ name: 'web-2' }] });
    await h.stop();

    const none = await start(CANARY_OPTIONS, {
      count: 3,
      before(api) {
        for (let i = 0; i < 3; i++) {
          (
            api.workload('Deployment', NAMESPACE, `web-${i}`)! as unknown as {
              spec: { replicas: number };
            }
          ).spec.replicas = 0;
        }
      },
    });
    changeApp(none, '2');
    await vi.advanceTimersByTimeAsync(1500 + 2 * WINDOW_MS);
    expect(touched(none)).toEqual([]);
    expect(record(none)).toMatchObject({ phase: 'halted' });
    expect(record(none)!.why).toMatch(/^no workload can test it \(deployment\/web-0: no replicas;/);
    await none.stop();
  });

  it('a namespace no longer followed leaves nothing halted or held in the gauges', async () => {
    const h = await start(CANARY_OPTIONS, { count: 3 });
    await haltOnItsCanary(h, '2');
    expect(h.calls).toContain('halted 1');
    h.api.unfollowNamespace(NAMESPACE);
    await vi.advanceTimersByTimeAsync(100);
    const last = (prefix: string) => h.calls.filter((call) => call.startsWith(prefix)).at(-1);
    expect([last('halted '), last('held '), last('behind ')]).toEqual([
      'halted 0',
      'held 0',
      'behind 0',
    ]);
    await h.stop();
  });

  it('a halt survives the leader changing: the new leader touches nothing it holds', async () => {
    const h = await start(CANARY_OPTIONS, { count: 4 });
    await haltOnItsCanary(h, '2');
    expect(record(h)).toMatchObject({ phase: 'halted' });
    await h.newLeader();
    await vi.advanceTimersByTimeAsync(2 * DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual(['web-0']);
    expect(record(h)).toMatchObject({ phase: 'halted' });
    await h.stop();
  });

  it('a canary being watched when the leader changes is watched again, and its window still counts', async () => {
    const h = await start(CANARY_OPTIONS, { count: 3 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(record(h)!.canaries![0]!.sent).toBeDefined();
    await h.newLeader();
    finishAll(h, 3);
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2']);
    await h.stop();

    const failing = await start(CANARY_OPTIONS, { count: 3 });
    changeApp(failing, '2');
    await vi.advanceTimersByTimeAsync(1050);
    await failing.newLeader();
    pod(failing, { waiting: { reason: 'CrashLoopBackOff' } });
    await vi.advanceTimersByTimeAsync(WINDOW_MS);
    expect(record(failing)).toMatchObject({ phase: 'halted' });
    expect(touched(failing)).toEqual(['web-0']);
    await failing.stop();
  });

  it('a change of another source the held workloads read touches none of them', async () => {
    const h = await start(CANARY_OPTIONS, {
      count: 3,
      before(api, source) {
        source.configMap('other', { x: '1' });
        api.change(NAMESPACE, 'configmaps', 'other', 'ADDED');
        for (let i = 0; i < 3; i++) {
          annotate(api, `web-${i}`, { 'confighash.dev/include': 'configmap/other' });
        }
        return Promise.all(
          [0, 1, 2].map((i) => api.write(NAMESPACE, DEPLOYMENT, `web-${i}`, signal())),
        ).then(() => {});
      },
    });
    await haltOnItsCanary(h, '2');
    expect(record(h)).toMatchObject({ phase: 'halted' });
    h.source.configMap('other', { x: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'other', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(2 * WINDOW_MS + DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual(['web-0']);
    expect(record(h, 'other')).toMatchObject({ phase: 'halted' });
    await h.stop();
  });

  it('a newer change during the drain drops the older one’s touches and goes canary-first again', async () => {
    const h = await start({ ...CANARY_OPTIONS, ratePerSecond: 0.5, burst: 1 }, { count: 5 });
    changeApp(h, '2');
    await throughCanary(h, 5);
    const first = record(h)!.change;
    expect(record(h)).toMatchObject({ phase: 'draining' });
    const drained = touched(h).length;
    expect(drained).toBeLessThan(5); // at 1 touch per 2 s, the drain is under way
    changeApp(h, '3');
    await vi.advanceTimersByTimeAsync(1050 + 10_000);
    expect(record(h)!.change).not.toBe(first);
    expect(record(h)).toMatchObject({ phase: 'canary' });
    // After the new change: only its canary.
    expect(touched(h).slice(drained)).toEqual(['web-0']);
    await h.stop();
  });

  it('a revert to what rolled everywhere releases the halt: only the canary rolls back', async () => {
    const h = await start(CANARY_OPTIONS, { count: 4 });
    changeApp(h, '2');
    await throughCanary(h, 4);
    await vi.advanceTimersByTimeAsync(2000);
    expect(record(h)).toMatchObject({ phase: 'done' });
    await haltOnItsCanary(h, '3');
    expect(record(h)).toMatchObject({ phase: 'halted' });
    const before = touched(h).length;
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(2 * 1050 + DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(record(h)).toMatchObject({ phase: 'done' });
    expect(touched(h).slice(before)).toEqual(['web-0']);
    await h.stop();
  });

  it('a revert of a first change that halted (no content recorded as rolled): only the canary rolls back', async () => {
    const h = await start(CANARY_OPTIONS, { count: 4 });
    await haltOnItsCanary(h, '2');
    expect(record(h)).toMatchObject({ phase: 'halted' });
    expect(record(h)!.rolled).toBeUndefined();
    changeApp(h, '1');
    await vi.advanceTimersByTimeAsync(2 * 1050 + DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(record(h)).toMatchObject({ phase: 'done' });
    expect(touched(h)).toEqual(['web-0', 'web-0']);
    await h.stop();
  });

  it('a change no leader saw goes canary-first too: the new leader reads the source before its resync touches a reader', async () => {
    const h = await start(CANARY_OPTIONS, { count: 4 });
    await h.stop();
    h.source.configMap('app', { v: '2' });
    h.api.changeUnseen(NAMESPACE, 'configmaps', 'app');
    await h.newLeader();
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual(['web-0']);
    expect(record(h)).toMatchObject({ phase: 'canary', canaries: [{ name: 'web-0' }] });
    await h.stop();
  });

  it('a touch that would read a change the watches have not shown yet leaves it to the change’s own, canary-first', async () => {
    const h = await start(CANARY_OPTIONS, {
      count: 3,
      async before(api, source) {
        source.configMap('solo', { x: '1' });
        api.change(NAMESPACE, 'configmaps', 'solo', 'ADDED');
        annotate(api, 'web-1', { 'confighash.dev/include': 'configmap/solo' });
        await api.write(NAMESPACE, DEPLOYMENT, 'web-1', signal());
      },
    });
    h.source.configMap('app', { v: '2' });
    h.api.changeUnseen(NAMESPACE, 'configmaps', 'app'); // its event is late
    h.source.configMap('solo', { x: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'solo', 'MODIFIED'); // web-1 alone reads it
    await vi.advanceTimersByTimeAsync(1500);
    expect(touched(h)).toEqual([]);
    h.api.announceConfig(NAMESPACE, 'configmaps', 'app');
    await vi.advanceTimersByTimeAsync(1500);
    expect(touched(h)).toEqual(['web-0']);
    await h.stop();
  });

  it('halt by hand stops a fan-out mid-way; resume releases it; retry-canary tests it again', async () => {
    const h = await start({ ...CANARY_OPTIONS, ratePerSecond: 0.5, burst: 1 }, { count: 5 });
    changeApp(h, '2');
    await throughCanary(h, 5);
    const { change } = record(h)!;
    h.api.control(NAMESPACE, 'configmaps', 'app', `halt ${change}`);
    await vi.advanceTimersByTimeAsync(100);
    expect(record(h)).toMatchObject({ phase: 'halted', why: 'halted by hand' });
    const stopped = touched(h).length;
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h).length).toBe(stopped);
    expect(stopped).toBeLessThan(5);
    h.api.control(NAMESPACE, 'configmaps', 'app', `resume ${change}`);
    await vi.advanceTimersByTimeAsync(20_000);
    expect([...new Set(touched(h))].sort()).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
    expect(record(h)).toMatchObject({ phase: 'done' });
    await h.stop();
  });

  it('retry-canary starts a halted change again from a canary that can test it', async () => {
    const h = await start(CANARY_OPTIONS, { count: 3 });
    await haltOnItsCanary(h, '2');
    const { change } = record(h)!;
    h.api.control(NAMESPACE, 'configmaps', 'app', `retry-canary ${change}`);
    await vi.advanceTimersByTimeAsync(1050);
    // web-0 has the change already: the next one that gets it is the canary.
    expect(record(h)).toMatchObject({ phase: 'canary', canaries: [{ name: 'web-1' }] });
    expect(touched(h)).toEqual(['web-0', 'web-1']);
    await h.stop();
  });

  it.each([
    ['--follow-canaries=0', { canaries: 0 }, {}],
    [
      'the namespace annotation confighash.dev/canaries: "0"',
      {},
      { 'confighash.dev/canaries': '0' },
    ],
  ])(
    '%s: every workload at the rate limit, no canary, nothing written on the source',
    async (_, options, annotations) => {
      const h = await start(
        { ...CANARY_OPTIONS, ...options },
        { count: 3, before: (api) => void api.followNamespace(NAMESPACE, annotations) },
      );
      changeApp(h, '2');
      await vi.advanceTimersByTimeAsync(1050);
      expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2']);
      expect(record(h)).toBeUndefined();
      await h.stop();
    },
  );
});

describe('approval above a size', () => {
  const APPROVAL_OPTIONS = { debounceMs: 1000, ratePerSecond: 100, burst: 100, maxFanout: 3 };
  const touched = (h: Harness) => h.api.touches.map((touch) => touch.name);
  const asked = (h: Harness) => h.api.events.filter((e) => e.reason === 'FanoutAwaitsApproval');

  /** The digest the Event names for ConfigMap `app` as it is now: what an approval writes. */
  async function digestNow(h: Harness): Promise<string> {
    const digest = createSourceDigester({ configSource: h.source, hashKey: KEY });
    const read = await digest({ kind: 'ConfigMap', name: 'app' }, NAMESPACE, signal());
    if (read.status !== 'found') throw new Error('ConfigMap app is not there');
    return read.digest;
  }

  /** What a user does with the Event's command: the annotation, seen by the metadata watch. */
  function approve(h: Harness, digest: string): void {
    h.source.approve('ConfigMap', 'app', digest);
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
  }

  it('a change read by more than --follow-max-fanout waits, says so on the source, and fans out once approved', async () => {
    const h = await start(APPROVAL_OPTIONS, { count: 5 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050 + 2 * DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual([]);
    expect(h.calls).toContain('awaiting 1');
    const digest = await digestNow(h);
    const [event, ...more] = asked(h);
    expect(more).toEqual([]);
    expect([event!.kind.kind, event!.name, event!.type]).toEqual(['ConfigMap', 'app', 'Warning']);
    expect(event!.note).toBe(
      `confighash: change ${digest} of configmap/app at resourceVersion ${h.api.config.get(`configmaps/${NAMESPACE}/app`)} awaits approval: 5 workloads read it, more than --follow-max-fanout 3; approve it with: kubectl annotate configmap/app -n ${NAMESPACE} --overwrite confighash.dev/approved-change=${digest}`,
    );
    approve(h, digest);
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
    expect(h.calls.filter((call) => call.startsWith('awaiting')).at(-1)).toBe('awaiting 0');
    await h.stop();
  });

  it('an approval of other content lets nothing through; the next change of content waits anew', async () => {
    const h = await start(APPROVAL_OPTIONS, { count: 4 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    const first = await digestNow(h);
    changeApp(h, '3');
    await vi.advanceTimersByTimeAsync(1050);
    approve(h, first); // The Event of `v: 2`, read too late: `v: 3` is not what was approved.
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual([]);
    expect(new Set(asked(h).map((event) => event.note.split(' ')[2]))).toEqual(
      new Set([first, await digestNow(h)]),
    );
    await h.stop();
  });

  it('a metadata write of a large source whose readers are current waits for nothing', async () => {
    const h = await start(APPROVAL_OPTIONS, { count: 5 });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED'); // a label, say: same content
    await vi.advanceTimersByTimeAsync(1050 + DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(asked(h)).toEqual([]);
    expect(touched(h)).toEqual([]);
    await h.stop();
  });

  it('a change read by --follow-max-fanout workloads or fewer fans out at once', async () => {
    const h = await start(APPROVAL_OPTIONS, { count: 3 });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2']);
    expect(asked(h)).toEqual([]);
    await h.stop();
  });

  // "More than N handled workloads" (docs/design.md §6), as plan counts them: an opted-out
  // reader is no reader, so four workloads with one opted out fan out at once under 3.
  it('an opted-out workload does not count toward --follow-max-fanout', async () => {
    const h = await start(APPROVAL_OPTIONS, { count: 4 });
    const web3 = h.api.workload('Deployment', NAMESPACE, 'web-3')!;
    const annotations = (web3.metadata.annotations ?? {}) as Record<string, string>;
    const optedOut = { ...annotations, 'confighash.dev/enabled': 'false' };
    h.api.putWorkload(NAMESPACE, {
      ...web3,
      metadata: { ...web3.metadata, annotations: optedOut },
    });
    await vi.advanceTimersByTimeAsync(1050);
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(asked(h)).toEqual([]);
    expect(touched(h)).toEqual(['web-0', 'web-1', 'web-2']);
    await h.stop();
  });

  it('a change no leader saw waits too: a new leader checks a large source before its resync touches a reader', async () => {
    const h = await start(APPROVAL_OPTIONS, {
      count: 5,
      before(api, source) {
        source.configMap('app', { v: '2' }); // changed while no follower ran
        api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
      },
    });
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual([]);
    expect(asked(h)).toHaveLength(1);
    approve(h, await digestNow(h));
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h)).toHaveLength(5);
    await h.stop();
  });

  it('a large source that cannot be read holds its readers; the next resync checks it again', async () => {
    const h = await start(APPROVAL_OPTIONS, { count: 4 });
    changeApp(h, '2');
    h.source.fail('ConfigMap', 'app', 'forbidden');
    await vi.advanceTimersByTimeAsync(1050 + DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual([]);
    expect(asked(h)).toEqual([]);
    h.source.heal('ConfigMap', 'app');
    await vi.advanceTimersByTimeAsync(DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual([]);
    expect(asked(h)).toHaveLength(1);
    await h.stop();
  });

  it('a reader held for approval is not touched by a change of another source it reads', async () => {
    const h = await start(APPROVAL_OPTIONS, {
      count: 4,
      async before(api, source) {
        source.configMap('own', { v: '1' });
        api.change(NAMESPACE, 'configmaps', 'own', 'ADDED');
        const podSpec = {
          ...POD_SPEC,
          volumes: [...POD_SPEC.volumes, { name: 'o', configMap: { name: 'own' } }],
        };
        api.putWorkload(NAMESPACE, workload({ name: 'solo', podSpec }));
        await api.write(NAMESPACE, DEPLOYMENT, 'solo', signal());
      },
    });
    changeApp(h, '2');
    await vi.advanceTimersByTimeAsync(1050);
    expect(asked(h)).toHaveLength(1);
    h.source.configMap('own', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'own', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050 + DEFAULT_FOLLOW_OPTIONS.resyncMs);
    expect(touched(h)).toEqual([]);
    approve(h, await digestNow(h));
    await vi.advanceTimersByTimeAsync(1050);
    expect(touched(h).sort()).toEqual(['solo', 'web-0', 'web-1', 'web-2', 'web-3']);
    await h.stop();
  });
});
