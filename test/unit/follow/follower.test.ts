// The follower against an in-memory cluster (test/support/memory-follow-api.ts)
// on a fake clock: the guards of docs/design.md §6 — global rate limit, per-workload
// minimum interval, debounce, resync, watch restarts and 410 relists — and what
// it tells people (Events, metrics).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEvaluator } from '../../../src/evaluate.js';
import { runFollower } from '../../../src/follow/follower.js';
import { DEFAULT_FOLLOW_OPTIONS, type FollowOptions } from '../../../src/follow/index.js';
import type { FollowMetrics } from '../../../src/follow/metrics.js';
import { createMutator } from '../../../src/mutate.js';
import { MemoryFollowApi } from '../../support/memory-follow-api.js';
import { MemorySource } from '../../support/memory-source.js';
import { everyNamespaceOptedIn } from '../../support/namespaces.js';
import { NAMESPACE, workload } from '../../support/workloads.js';

const KEY = Buffer.alloc(32, 9);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function recordingMetrics() {
  const calls: string[] = [];
  const metrics: FollowMetrics = {
    touched: (kind) => calls.push(`touched ${kind}`),
    deferred: (reason) => calls.push(`deferred ${reason}`),
    reconcileError: () => calls.push('reconcile-error'),
    leader: () => {},
    watchRestart: (reason) => calls.push(`watch-restart ${reason}`),
    pending: () => {},
  };
  return { calls, metrics };
}

interface Harness {
  source: MemorySource;
  api: MemoryFollowApi;
  calls: string[];
  stop(): Promise<void>;
}

/** `count` Deployments reading ConfigMap `app` (already hashed, as the webhook left them). */
async function start(options: Partial<FollowOptions>, count = 1): Promise<Harness> {
  const source = new MemorySource().configMap('app', { v: '1' });
  const mutator = createMutator({
    configSource: source,
    hashKey: KEY,
    namespaces: everyNamespaceOptedIn,
  });
  const api = new MemoryFollowApi(mutator).followNamespace(NAMESPACE);
  const podSpec = {
    volumes: [
      { name: 'c', configMap: { name: 'app' } },
      { name: 'n', configMap: { name: 'new', optional: true } },
    ],
    containers: [],
  };
  for (let i = 0; i < count; i++) {
    api.putWorkload(NAMESPACE, workload({ name: `web-${i}`, podSpec }));
    await api.touch(
      NAMESPACE,
      { ...kindOf('Deployment') },
      `web-${i}`,
      new AbortController().signal,
    );
  }
  api.touches.length = 0;
  const { calls, metrics } = recordingMetrics();
  const stop = new AbortController();
  const running = runFollower(
    {
      api,
      evaluate: createEvaluator({ configSource: source, hashKey: KEY }),
      metrics,
      logger: quiet,
      options: { ...DEFAULT_FOLLOW_OPTIONS, ...options },
    },
    stop.signal,
  );
  // Let the namespace start and its first resync find everything up to date.
  await vi.advanceTimersByTimeAsync((options.debounceMs ?? 1000) + 10);
  return {
    source,
    api,
    calls,
    async stop() {
      stop.abort();
      await running;
    },
  };
}

function kindOf(kind: string) {
  return {
    group: 'apps',
    version: 'v1',
    kind,
    resource: 'deployments',
    templatePath: ['spec', 'template'],
    shortNames: [],
    rollout: 'deployment' as const,
  };
}

beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('guards', () => {
  it('a burst of changes to many workloads is held to the global rate limit', async () => {
    const h = await start({ debounceMs: 1000, ratePerSecond: 1, burst: 2 }, 5);
    expect(h.api.touches).toEqual([]);
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
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
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.touches).toHaveLength(1);
    const first = h.api.touches[0]!.at;
    h.source.configMap('app', { v: '3' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
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
      h.source.configMap('app', { v: String(i) });
      h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(h.api.touches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toHaveLength(1);
    await h.stop();
  });
});

describe('triggers', () => {
  it('a change to a ConfigMap the workload does not read touches nothing', async () => {
    const h = await start({ debounceMs: 1000 });
    h.source.configMap('other', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'other', 'MODIFIED');
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toEqual([]);
    await h.stop();
  });

  it('the periodic resync rolls a change no watch reported', async () => {
    const h = await start({ debounceMs: 1000, resyncMs: 60_000 });
    h.source.configMap('app', { v: '2' });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(h.api.touches).toEqual([]);
    await vi.advanceTimersByTimeAsync(32_000);
    expect(h.api.touches).toHaveLength(1);
    expect(h.api.events.map((event) => event.note)).toEqual([
      'confighash: config changed while not watched (sources: configmap/app,configmap/new); rolling',
    ]);
    await h.stop();
  });
});

describe('watches', () => {
  it('a watch the server ends resumes from its last resourceVersion, without a relist', async () => {
    const h = await start({ debounceMs: 1000 });
    const lists = h.api.configLists.length;
    const before = h.api.watches.find((w) => w.resource === 'configmaps')!.resourceVersion;
    h.api.endWatches('configmaps', {});
    await vi.advanceTimersByTimeAsync(10);
    const after = h.api.watches.find((w) => w.resource === 'configmaps')!;
    expect(after.resourceVersion).not.toBe(before);
    expect(h.api.configLists.length).toBe(lists);
    expect(h.calls).toContain('watch-restart ended');
    await h.stop();
  });

  it('410 Gone: relists, then resyncs so that nothing changed meanwhile is lost', async () => {
    const h = await start({ debounceMs: 1000 });
    const lists = h.api.configLists.length;
    h.source.configMap('app', { v: '2' }); // changed while the watch was too old to resume
    h.api.endWatches('configmaps', { expired: true });
    await vi.advanceTimersByTimeAsync(1050);
    expect(h.api.configLists.slice(lists)).toEqual([
      { namespace: NAMESPACE, resource: 'configmaps' },
    ]);
    expect(h.calls).toContain('watch-restart expired');
    expect(h.api.touches).toHaveLength(1);
    await h.stop();
  });

  it('a failed watch is retried after a backoff that grows', async () => {
    const h = await start({ debounceMs: 1000 });
    h.api.endWatches('secrets', { error: new Error('connection reset') });
    await vi.advanceTimersByTimeAsync(10);
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(0);
    expect(h.calls).toContain('watch-restart error');
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(1);
    h.api.endWatches('secrets', { error: new Error('again') });
    await vi.advanceTimersByTimeAsync(1010);
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.api.watches.filter((w) => w.resource === 'secrets')).toHaveLength(1);
    await h.stop();
  });

  it('stopping ends every watch and touches nothing more', async () => {
    const h = await start({ debounceMs: 1000 });
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
    await h.stop();
    expect(h.api.watches).toEqual([]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(h.api.touches).toEqual([]);
  });
});

describe('telling people', () => {
  it('a touch counts in the metrics and records a ConfigChanged Event naming the source', async () => {
    const h = await start({ debounceMs: 1000 });
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
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
    (object.metadata as Record<string, unknown>).annotations = {
      'confighash.dev/rollout-window': text,
    };
    for (const v of ['2', '3']) {
      h.source.configMap('app', { v });
      h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
      await vi.advanceTimersByTimeAsync(1050);
    }
    expect(h.api.touches).toEqual([]);
    expect(h.calls).toContain('deferred window');
    expect(h.api.events).toEqual([expect.objectContaining({ type, reason, action: 'Defer' })]);
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
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
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
    h.source.configMap('app', { v: '2' });
    h.api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
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
