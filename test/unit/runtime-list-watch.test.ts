// The one list-then-watch loop (src/runtime/list-watch.ts) that the namespace check and
// every watch of follow mode run on: what it lists, where it resumes, when it relists,
// how it backs off (jittered, so that a thousand replicas whose watches fail together do
// not all come back in the same second, and from the start again after a stable watch),
// that lists wait for a slot, and that a watch's timeout is jittered too.

import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { WATCH_TIMEOUT_SECONDS, watchTimeoutSeconds } from '../../src/kube/watch.js';
import {
  BACKOFF,
  type Clock,
  type ListWatchResource,
  listAndWatch,
  type Random,
  Slots,
  type WatchEnd,
  type WatchRestart,
} from '../../src/runtime/index.js';

/** A resource whose lists and watches answer from scripts; each call is logged. */
class ScriptedResource implements ListWatchResource {
  readonly calls: string[] = [];
  lists: (() => Promise<string | undefined>)[] = [];
  watches: ((signal: AbortSignal) => Promise<WatchEnd>)[] = [];

  list(): Promise<string | undefined> {
    this.calls.push('list');
    return (this.lists.shift() ?? (() => Promise.resolve('1')))();
  }

  watch(resourceVersion: string, signal: AbortSignal): Promise<WatchEnd> {
    this.calls.push(`watch@${resourceVersion}`);
    return (this.watches.shift() ?? untilAborted(resourceVersion))(signal);
  }
}

const ended =
  (resourceVersion: string, more: Partial<WatchEnd> = {}) =>
  () =>
    Promise.resolve({ resourceVersion, expired: false, ...more });
const fails = (message: string) => () => Promise.reject(new Error(message));
/** A watch that runs for `ms` and then fails. */
const failsAfter = (ms: number) => () =>
  new Promise<WatchEnd>((_resolve, reject) => setTimeout(() => reject(new Error('reset')), ms));
const untilAborted = (resourceVersion: string) => (signal: AbortSignal) =>
  new Promise<WatchEnd>((resolve) =>
    signal.addEventListener('abort', () => resolve({ resourceVersion, expired: false })),
  );

let stop: AbortController;
beforeEach(() => {
  vi.useFakeTimers();
  stop = new AbortController();
});
afterEach(() => {
  stop.abort();
  vi.useRealTimers();
});

function run(resource: ListWatchResource, options: Parameters<typeof listAndWatch>[1] = {}) {
  const restarts: string[] = [];
  const onRestart = (reason: WatchRestart, error?: Error) =>
    restarts.push(error ? `${reason}: ${error.message}` : reason);
  // No jitter unless a row asks for it: each wait is the base, 1 s, 2 s, 4 s, …
  const backoff = { random: () => 0, ...options.backoff };
  const done = listAndWatch(resource, { ...options, backoff, onRestart }, stop.signal);
  return { restarts, done };
}

it('lists, then watches from the listed resourceVersion', async () => {
  const resource = new ScriptedResource();
  resource.lists = [() => Promise.resolve('7')];
  run(resource);
  await vi.advanceTimersByTimeAsync(0);
  expect(resource.calls).toEqual(['list', 'watch@7']);
});

it.each([
  ['a watch the server ends', ended('9'), 'ended'],
  ['a silent watch', ended('9', { silent: true }), 'silent'],
])('%s resumes from its last resourceVersion, without a relist', async (_, end, reason) => {
  const resource = new ScriptedResource();
  resource.watches = [end];
  const { restarts } = run(resource);
  await vi.advanceTimersByTimeAsync(0);
  expect(resource.calls).toEqual(['list', 'watch@1', 'watch@9']);
  expect(restarts).toEqual([reason]);
});

it('410 (expired) relists, and watches from the new list', async () => {
  const resource = new ScriptedResource();
  resource.lists = [() => Promise.resolve('1'), () => Promise.resolve('20')];
  resource.watches = [ended('5', { expired: true })];
  const { restarts } = run(resource);
  await vi.advanceTimersByTimeAsync(0);
  expect(resource.calls).toEqual(['list', 'watch@1', 'list', 'watch@20']);
  expect(restarts).toEqual(['expired']);
});

it('a failed watch resumes where it was after a backoff that grows', async () => {
  const resource = new ScriptedResource();
  resource.watches = [fails('reset'), fails('reset'), ended('3'), fails('reset')];
  const { restarts } = run(resource);
  await vi.advanceTimersByTimeAsync(0);
  expect(resource.calls).toEqual(['list', 'watch@1']);
  await vi.advanceTimersByTimeAsync(1000); // the first backoff: 1 s
  expect(resource.calls).toEqual(['list', 'watch@1', 'watch@1']);
  await vi.advanceTimersByTimeAsync(1999); // the second: 2 s
  expect(resource.calls).toHaveLength(3);
  await vi.advanceTimersByTimeAsync(1);
  expect(resource.calls).toEqual(['list', 'watch@1', 'watch@1', 'watch@1', 'watch@3']);
  await vi.advanceTimersByTimeAsync(3999); // a watch that ended at once was no stable period: 4 s
  expect(resource.calls).toHaveLength(5);
  await vi.advanceTimersByTimeAsync(1);
  expect(resource.calls.at(-1)).toBe('watch@3');
  expect(restarts).toEqual(['error: reset', 'error: reset', 'ended', 'error: reset']);
});

it.each([
  ['just short of the stable period grows on (4 s)', BACKOFF.stableMs - 1, 4000],
  ['of the stable period starts again (1 s)', BACKOFF.stableMs, 1000],
])('the backoff after a watch %s', async (_, lasted, wait) => {
  const resource = new ScriptedResource();
  resource.watches = [fails('reset'), fails('reset'), failsAfter(lasted)];
  run(resource);
  await vi.advanceTimersByTimeAsync(1000 + 2000); // two failures: 1 s, then 2 s
  expect(resource.calls).toHaveLength(4);
  await vi.advanceTimersByTimeAsync(lasted + wait - 1);
  expect(resource.calls).toHaveLength(4);
  await vi.advanceTimersByTimeAsync(1);
  expect(resource.calls).toHaveLength(5);
});

it('a failed list is listed again after the backoff', async () => {
  const resource = new ScriptedResource();
  resource.lists = [fails('forbidden'), () => Promise.resolve('4')];
  const { restarts } = run(resource);
  await vi.advanceTimersByTimeAsync(1000);
  expect(resource.calls).toEqual(['list', 'list', 'watch@4']);
  expect(restarts).toEqual(['error: forbidden']);
});

it('a resource not served is listed again after absentRetryMs, not counted as a failure', async () => {
  const resource = new ScriptedResource();
  resource.lists = [() => Promise.resolve(undefined), () => Promise.resolve('2')];
  const { restarts } = run(resource, { absentRetryMs: 5000 });
  await vi.advanceTimersByTimeAsync(4999);
  expect(resource.calls).toEqual(['list']);
  await vi.advanceTimersByTimeAsync(1);
  expect(resource.calls).toEqual(['list', 'list', 'watch@2']);
  expect(restarts).toEqual([]);
});

it('with watch off, lists until one list succeeds and stops', async () => {
  const resource = new ScriptedResource();
  resource.lists = [fails('timeout'), () => Promise.resolve('8')];
  const { done } = run(resource, { watch: false });
  await vi.advanceTimersByTimeAsync(1000);
  await done;
  expect(resource.calls).toEqual(['list', 'list']);
});

it('lists wait for a slot; watches take none', async () => {
  const slots = new Slots(1);
  expect(slots.tryTake()).toBe(true); // another resource's list holds the only slot
  const resource = new ScriptedResource();
  run(resource, { listSlots: slots });
  await vi.advanceTimersByTimeAsync(0);
  expect(resource.calls).toEqual([]);
  slots.release();
  await vi.advanceTimersByTimeAsync(0);
  expect(resource.calls).toEqual(['list', 'watch@1']);
  expect(slots.inUse).toBe(0);
});

it('stops at once when its signal aborts, mid-watch or mid-backoff', async () => {
  const resource = new ScriptedResource();
  resource.watches = [fails('reset')];
  const { done } = run(resource);
  await vi.advanceTimersByTimeAsync(0);
  stop.abort();
  await done;
  expect(resource.calls).toEqual(['list', 'watch@1']);
});

/** A clock of this test's own: timers fire only when `advance` says, in order. */
class ManualClock implements Clock {
  #now = 0;
  #timers: { at: number; fire: () => void }[] = [];

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fire: () => void): () => void {
    const timer = { at: this.#now + ms, fire };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Fires every timer due within `ms`, letting what each one starts run before the next. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = next.at;
      next.fire();
      await settle();
    }
    this.#now = until;
  }
}

/** Lets every promise that can settle now settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A seeded random source (mulberry32): the same figures in every run. */
function seededRandom(seed: number): Random {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The most of `times` (ms) that any window of `windowMs` holds. */
function busiestWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

it('a thousand loops whose watches fail at the same instant do not all retry within one second', async () => {
  vi.useRealTimers(); // This row's timers are its own clock's.
  const clock = new ManualClock();
  const random = seededRandom(46);
  const loops = 1000;
  const retries: number[] = [];
  const failures: (() => void)[] = [];
  for (let loop = 0; loop < loops; loop++) {
    let watched = 0;
    const resource: ListWatchResource = {
      list: async () => '1',
      watch: (resourceVersion, signal) => {
        if (watched++ === 0) {
          return new Promise((_resolve, reject) => failures.push(() => reject(new Error('reset'))));
        }
        retries.push(clock.now());
        return untilAborted(resourceVersion)(signal);
      },
    };
    void listAndWatch(resource, { clock, backoff: { random } }, stop.signal);
  }
  await settle();
  expect(failures).toHaveLength(loops);
  for (const fail of failures) fail(); // the apiserver restarts under all of them
  await settle();
  await clock.advance(10_000);
  expect(retries).toHaveLength(loops);
  // Each first wait is 1 s × (1 + 3 × random): spread over 3 s, a second holds about a third.
  expect(busiestWindow(retries, 1000)).toBeLessThanOrEqual(loops / 2);
});

it('a watch asks the server to end it after 300 to 600 s, at random', () => {
  expect(watchTimeoutSeconds(() => 0)).toBe(WATCH_TIMEOUT_SECONDS);
  expect(watchTimeoutSeconds(() => 0.999_999)).toBe(2 * WATCH_TIMEOUT_SECONDS - 1);
  const random = seededRandom(46);
  const timeouts = Array.from({ length: 1000 }, () => watchTimeoutSeconds(random));
  expect(Math.min(...timeouts)).toBeGreaterThanOrEqual(300);
  expect(Math.max(...timeouts)).toBeLessThan(600);
  // Spread, not one figure: a thousand watches started together end over five minutes.
  expect(busiestWindow(timeouts, 1)).toBeLessThanOrEqual(20);
});
