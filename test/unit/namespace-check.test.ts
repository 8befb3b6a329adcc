// The namespace check (src/admission/namespace-check.ts) against an in-memory NamespaceApi: what
// the watch says, when a live GET decides, how many GETs a flood costs, and
// that a namespace labelled a moment ago is never missed.

import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_NAMESPACE_READS,
  type NamespaceApi,
  type NamespaceLabels,
  type NamespaceRead,
  type NamespaceWatch,
  startNamespaceCheck,
} from '../../src/admission/index.js';
import type { ListerWatcher, ListWatchHandler, ObjectEventType } from '../../src/runtime/index.js';

const NEVER = new AbortController().signal;
const LABEL = 'confighash.dev/enabled';
const WORKLOADS = 'confighash.dev/workloads';
const ALL = { status: 'opted-in', workloads: 'all' } as const;
const ANNOTATED = { status: 'opted-in', workloads: 'annotated' } as const;

/** Namespaces by name; `hold` keeps GETs (and the first list) waiting until released. */
class MemoryNamespaces implements NamespaceApi {
  readonly labels = new Map<string, Record<string, string>>();
  readonly gets: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  holdGets = false;
  holdList = false;
  failGets: string | undefined;
  readonly #waiting: (() => void)[] = [];
  #handler: ListWatchHandler<NamespaceLabels> | undefined;

  /** `workloads`: the value of the confighash.dev/workloads label beside the opt-in label. */
  set(name: string, label?: string, workloads?: string): this {
    this.labels.set(name, {
      ...(label === undefined ? {} : { [LABEL]: label }),
      ...(workloads === undefined ? {} : { [WORKLOADS]: workloads }),
    });
    return this;
  }

  /** What the watch delivers, as the server would (a selector watch: leaving the set is DELETED). */
  emit(type: ObjectEventType, name: string): void {
    this.#handler?.event(type, { name, labels: this.labels.get(name) ?? {} });
  }

  release(): void {
    for (const go of this.#waiting.splice(0)) go();
  }

  readonly optedIn: ListerWatcher<NamespaceLabels> = (handler) => ({
    list: async (signal) => {
      const pages = handler.list();
      const { namespaces, resourceVersion } = await this.#list(signal);
      pages.page(namespaces);
      pages.end();
      return resourceVersion;
    },
    watch: (_resourceVersion, signal) => {
      this.#handler = handler;
      return new Promise<{ resourceVersion: string; expired: boolean }>((resolve) =>
        signal.addEventListener('abort', () => resolve({ resourceVersion: '1', expired: false })),
      );
    },
  });

  async #list(signal: AbortSignal) {
    if (this.holdList) {
      await new Promise<void>((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(new Error('stopped'))),
      );
    }
    const namespaces: NamespaceLabels[] = [...this.labels].map(([name, labels]) => ({
      name,
      labels,
    }));
    return { namespaces, resourceVersion: '1' };
  }

  async get(name: string): Promise<NamespaceRead> {
    this.gets.push(name);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    // What the namespace is when the GET is sent, not when it answers.
    const labels = this.labels.get(name);
    if (this.holdGets) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.inFlight--;
    if (this.failGets) return { status: 'failed', detail: this.failGets };
    return labels === undefined
      ? { status: 'absent' }
      : { status: 'found', namespace: { name, labels } };
  }
}

const started: NamespaceWatch[] = [];
afterEach(async () => {
  for (const check of started.splice(0)) await check.stop();
});

async function start(api: MemoryNamespaces, excluded: string[] = []): Promise<NamespaceWatch> {
  const check = startNamespaceCheck({ api, excluded });
  started.push(check);
  if (!api.holdList) await waitFor(() => check.synced);
  return check;
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(condition()).toBe(true);
}

describe('what the watch says', () => {
  it('an opted-in namespace (true or follow) costs no GET once synced', async () => {
    const api = new MemoryNamespaces().set('shop', 'true').set('ops', 'follow');
    const check = await start(api);
    expect(await check.check('shop', NEVER)).toEqual(ALL);
    expect(await check.check('ops', NEVER)).toEqual(ALL);
    expect(api.gets).toEqual([]);
  });

  it.each([
    ['annotated', 'true', 'annotated', ANNOTATED],
    ['annotated, in a follow namespace', 'follow', 'annotated', ANNOTATED],
    ['another value', 'true', 'some', ALL],
    ['an empty value', 'follow', '', ALL],
  ] as const)(
    'the workload mode comes with the list: %s',
    async (_n, label, workloads, verdict) => {
      const api = new MemoryNamespaces().set('team', label, workloads);
      const check = await start(api);
      expect(await check.check('team', NEVER)).toEqual(verdict);
      expect(api.gets).toEqual([]);
    },
  );

  it('the workloads label added, then removed (MODIFIED), changes the mode without a GET', async () => {
    const api = new MemoryNamespaces().set('shop', 'true');
    const check = await start(api);
    api.set('shop', 'true', 'annotated');
    api.emit('MODIFIED', 'shop');
    expect(await check.check('shop', NEVER)).toEqual(ANNOTATED);
    api.set('shop', 'true');
    api.emit('MODIFIED', 'shop');
    expect(await check.check('shop', NEVER)).toEqual(ALL);
    expect(api.gets).toEqual([]);
  });

  it('the workloads label alone opens no namespace', async () => {
    const api = new MemoryNamespaces().set('team', undefined, 'annotated');
    const check = await start(api);
    expect(await check.check('team', NEVER)).toEqual({
      status: 'not-opted-in',
      why: 'not labelled',
    });
  });

  it.each([
    ['kube-system', []],
    ['confighash-system', ['confighash-system']],
    ['monitoring', ['confighash-system', 'monitoring']],
  ])('%s is never opted in, whatever its label, and costs no GET', async (name, excluded) => {
    const api = new MemoryNamespaces().set(name, 'true');
    const check = await start(api, excluded);
    expect(await check.check(name, NEVER)).toEqual({ status: 'not-opted-in', why: 'excluded' });
    expect(api.gets).toEqual([]);
  });

  it('a label removed (DELETED from the selector watch) is no longer opted in', async () => {
    const api = new MemoryNamespaces().set('shop', 'true');
    const check = await start(api);
    api.set('shop');
    api.emit('DELETED', 'shop');
    expect(await check.check('shop', NEVER)).toEqual({
      status: 'not-opted-in',
      why: 'not labelled',
    });
  });
});

describe('when a live GET decides', () => {
  it.each([
    [
      'an unlabelled namespace',
      'plain',
      undefined,
      { status: 'not-opted-in', why: 'not labelled' },
    ],
    ['a namespace that does not exist', 'gone', null, { status: 'not-opted-in', why: 'not found' }],
    ['a namespace labelled since the list', 'fresh', 'true', ALL],
    ['one labelled since the list, annotated-only', 'fresh', ['true', 'annotated'], ANNOTATED],
    [
      'one labelled follow since the list, annotated-only',
      'fresh',
      ['follow', 'annotated'],
      ANNOTATED,
    ],
  ] as const)('%s: one GET', async (_name, namespace, label, verdict) => {
    const api = new MemoryNamespaces();
    const check = await start(api);
    if (typeof label === 'string' || label === undefined) api.set(namespace, label);
    else if (label !== null) api.set(namespace, ...label);
    expect(await check.check(namespace, NEVER)).toEqual(verdict);
    expect(api.gets).toEqual([namespace]);
  });

  it('before the watch has synced, the GET decides', async () => {
    const api = new MemoryNamespaces().set('shop', 'true', 'annotated');
    api.holdList = true;
    const check = await start(api);
    expect(check.synced).toBe(false);
    expect(await check.check('shop', NEVER)).toEqual(ANNOTATED);
    expect(api.gets).toEqual(['shop']);
  });

  it('a GET that fails is "unknown", with its reason', async () => {
    const api = new MemoryNamespaces();
    api.failGets = 'forbidden';
    const check = await start(api);
    expect(await check.check('plain', NEVER)).toEqual({ status: 'unknown', detail: 'forbidden' });
  });

  it('a caller whose deadline passes while its GET runs gets "unknown" then', async () => {
    const api = new MemoryNamespaces().set('plain');
    api.holdGets = true;
    const check = await start(api);
    const deadline = new AbortController();
    const verdict = check.check('plain', deadline.signal);
    deadline.abort();
    expect(await verdict).toEqual({ status: 'unknown', detail: 'deadline reached' });
    api.release();
  });
});

describe('a flood of forged reviews', () => {
  it('100 reviews at once for one unlabelled namespace cost one GET', async () => {
    const api = new MemoryNamespaces().set('plain');
    api.holdGets = true;
    const check = await start(api);
    const verdicts = Array.from({ length: 100 }, () => check.check('plain', NEVER));
    await waitFor(() => api.gets.length === 1);
    api.release();
    const all = await Promise.all(verdicts);
    expect(all.every((v) => v.status === 'not-opted-in')).toBe(true);
    expect(api.gets.length).toBe(1);
  });

  it('a review arriving while a GET runs waits for a newer one: a label added meanwhile is seen', async () => {
    const api = new MemoryNamespaces().set('fresh');
    api.holdGets = true;
    const check = await start(api);
    const early = check.check('fresh', NEVER);
    await waitFor(() => api.gets.length === 1);
    api.set('fresh', 'true'); // labelled after the running GET read it
    const late = Array.from({ length: 10 }, () => check.check('fresh', NEVER));
    api.release();
    await waitFor(() => api.gets.length === 2);
    api.release();
    expect(await early).toEqual({ status: 'not-opted-in', why: 'not labelled' });
    for (const verdict of await Promise.all(late)) expect(verdict).toEqual(ALL);
    expect(api.gets).toEqual(['fresh', 'fresh']);
  });

  it(`distinct names: at most ${MAX_NAMESPACE_READS} GETs in flight`, async () => {
    const api = new MemoryNamespaces();
    api.holdGets = true;
    const check = await start(api);
    const verdicts = Array.from({ length: 50 }, (_, i) => check.check(`forged-${i}`, NEVER));
    await waitFor(() => api.inFlight === MAX_NAMESPACE_READS);
    while (api.gets.length < 50 || api.inFlight > 0) {
      api.release();
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all(verdicts);
    expect(api.maxInFlight).toBe(MAX_NAMESPACE_READS);
  });
});
