// The one list-then-watch loop (src/runtime/list-watch.ts) that the namespace check and
// every watch of follow mode run on: what it lists, where it resumes, when it relists,
// how it backs off, and that lists wait for a slot.

import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import {
  type ListWatchResource,
  listAndWatch,
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
  const done = listAndWatch(resource, { ...options, onRestart }, stop.signal);
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

it('a failed watch resumes where it was after a backoff that grows, and resets once a watch ends well', async () => {
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
  await vi.advanceTimersByTimeAsync(1000); // back to 1 s after a healthy watch
  expect(resource.calls.at(-1)).toBe('watch@3');
  expect(resource.calls).toHaveLength(6);
  expect(restarts).toEqual(['error: reset', 'error: reset', 'ended', 'error: reset']);
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
