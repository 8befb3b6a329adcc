// The use case's part of the trust boundary (docs/design.md §4 "Namespace check",
// "Bounds"): a namespace not opted in costs no lookup; an unreadable namespace
// keeps the old values; a template with too many sources reads nothing; lookups
// in flight are bounded per review and per process.

import { describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import type { NamespaceCheck, NamespaceVerdict } from '../../src/admission/namespace-check.js';
import type { ConfigSource, LookupResult } from '../../src/evaluate/index.js';
import {
  createEvaluator,
  MAX_LOOKUPS_IN_FLIGHT,
  MAX_LOOKUPS_PER_EVALUATION,
  MAX_SOURCES,
} from '../../src/evaluate/index.js';
import { Slots } from '../../src/runtime/index.js';
import { HASH } from '../../src/workload/index.js';
import { MemorySource } from '../support/memory-source.js';
import { admissionRequest, workload } from '../support/workloads.js';

const KEY = Buffer.alloc(32, 9);
const NEVER = new AbortController().signal;

function verdict(answer: NamespaceVerdict): NamespaceCheck {
  return { check: async () => answer };
}

function threeSources(): MemorySource {
  return new MemorySource()
    .configMap('app-config', { a: '1' })
    .configMap('flags', { mode: 'x' })
    .secret('db', { password: 'p' });
}

/** A pod spec naming `count` ConfigMaps by envFrom. */
function manySources(count: number) {
  return {
    containers: [
      {
        name: 'app',
        image: 'app:1',
        envFrom: Array.from({ length: count }, (_, i) => ({ configMapRef: { name: `cm-${i}` } })),
      },
    ],
  };
}

/** A ConfigSource that answers after `ms`, counting what is in flight. */
class SlowSource implements ConfigSource {
  inFlight = 0;
  maxInFlight = 0;
  calls = 0;
  constructor(private readonly ms: number) {}
  async get(): Promise<LookupResult> {
    this.calls++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setTimeout(resolve, this.ms));
    this.inFlight--;
    return { status: 'absent' };
  }
}

describe('the namespace check comes before any lookup', () => {
  it.each([
    ['excluded', { status: 'not-opted-in', why: 'excluded' }],
    ['not labelled', { status: 'not-opted-in', why: 'not labelled' }],
    ['not found', { status: 'not-opted-in', why: 'not found' }],
  ] as const)('not opted in (%s): allowed, no patch, no lookup, skipped', async (_, answer) => {
    const source = threeSources();
    const mutator = createMutator({
      configSource: source,
      hashKey: KEY,
      namespaces: verdict(answer),
    });
    const result = await mutator.review(admissionRequest(), NEVER);
    expect(result).toMatchObject({
      outcome: 'skipped',
      patch: [],
      warnings: [],
      lookups: [],
      skipCode: 'namespace-not-opted-in',
    });
    expect(source.calls).toEqual([]);
  });

  it('namespace unreadable: keeps oldObject’s hash, warns, reads nothing', async () => {
    const source = threeSources();
    const optedIn = createMutator({
      configSource: source,
      hashKey: KEY,
      namespaces: verdict({ status: 'opted-in', workloads: 'all' }),
    });
    const hashed = await optedIn.review(admissionRequest(), NEVER);
    expect(hashed.outcome).toBe('patched');
    const old = workload({ templateAnnotations: { [HASH]: 'a'.repeat(64) } });
    source.calls.length = 0;
    const unknown = createMutator({
      configSource: source,
      hashKey: KEY,
      namespaces: verdict({ status: 'unknown', detail: 'timed out' }),
    });
    const result = await unknown.review(
      admissionRequest({ operation: 'UPDATE', object: workload(), oldObject: old }),
      NEVER,
    );
    expect(result.outcome).toBe('kept-old');
    expect(result.warnings).toEqual([
      'confighash: could not read namespace shop (timed out); kept the previous hash',
    ]);
    expect(result.patch).toContainEqual(expect.objectContaining({ value: expect.anything() }));
    expect(source.calls).toEqual([]);
  });
});

describe('more than MAX_SOURCES distinct sources', () => {
  it.each([
    ['CREATE', undefined, 'no hash written'],
    ['UPDATE', workload({ podSpec: manySources(3_000) }), 'kept the previous hash'],
  ] as const)(
    '%s of 3,000: no lookup, a warning, the old values',
    async (operation, old, consequence) => {
      const source = new SlowSource(0);
      const mutator = createMutator({
        configSource: source,
        hashKey: KEY,
        namespaces: verdict({ status: 'opted-in', workloads: 'all' }),
      });
      const object = workload({ podSpec: manySources(3_000) });
      const result = await mutator.review(
        admissionRequest({ operation, object, ...(old ? { oldObject: old } : {}) }),
        NEVER,
      );
      expect(source.calls).toBe(0);
      expect(result.outcome).toBe('kept-old');
      expect(result.patch).toEqual([]);
      expect(result.warnings).toEqual([
        `confighash: too many sources (3000, at most ${MAX_SOURCES}); none read, ${consequence}`,
      ]);
    },
  );

  it(`exactly ${MAX_SOURCES}: every one read, at most ${MAX_LOOKUPS_PER_EVALUATION} at once`, async () => {
    const source = new SlowSource(2);
    const evaluate = createEvaluator({ configSource: source, hashKey: KEY });
    const evaluation = await evaluate(
      { template: { spec: manySources(MAX_SOURCES) }, annotations: {} },
      'shop',
      NEVER,
    );
    expect(evaluation.status).toBe('hashed');
    expect(source.calls).toBe(MAX_SOURCES);
    expect(source.maxInFlight).toBe(MAX_LOOKUPS_PER_EVALUATION);
  });
});

describe('lookups in flight in the process', () => {
  it(`${MAX_LOOKUPS_IN_FLIGHT} at most, across reviews`, async () => {
    const source = new SlowSource(5);
    const evaluate = createEvaluator({ configSource: source, hashKey: KEY });
    const reviews = Array.from({ length: 40 }, () =>
      evaluate({ template: { spec: manySources(16) }, annotations: {} }, 'shop', NEVER),
    );
    await Promise.all(reviews);
    expect(source.calls).toBe(40 * 16);
    expect(source.maxInFlight).toBe(MAX_LOOKUPS_IN_FLIGHT);
  });

  it('a lookup still waiting for a slot at the deadline is a timeout and sends nothing', async () => {
    const slots = new Slots(1);
    expect(slots.tryTake()).toBe(true); // someone else's lookup holds the only slot
    const source = new SlowSource(0);
    const evaluate = createEvaluator({ configSource: source, hashKey: KEY, lookupSlots: slots });
    const deadline = new AbortController();
    const evaluation = evaluate(
      { template: { spec: manySources(2) }, annotations: {} },
      'shop',
      deadline.signal,
    );
    deadline.abort();
    const result = await evaluation;
    expect(result.status).toBe('unreadable');
    expect(result.lookups.map(({ result }) => result)).toEqual([
      { status: 'failed', failure: 'timeout', detail: 'deadline reached' },
      { status: 'failed', failure: 'timeout', detail: 'deadline reached' },
    ]);
    expect(source.calls).toBe(0);
  });
});
