// "The hash now" (src/evaluate.ts): one answer per workload, lookups in
// parallel, a memo that answers for sources it has already hashed, and the one
// definition of a current hash (v2, or the v1 a release before v2 wrote).

import { describe, expect, it } from 'vitest';
import {
  type ConfigSource,
  createEvaluator,
  type Digests,
  type Evaluation,
  isCurrentHash,
  type LookupResult,
} from '../../src/evaluate.js';
import { HashMemo, type HashVersion } from '../../src/hash/index.js';
import { HANDLED_KINDS, readWorkload } from '../../src/workload/index.js';
import { digestOf, MemorySource } from '../support/memory-source.js';
import { NAMESPACE, workload } from '../support/workloads.js';

const KEY = Buffer.alloc(32, 3);
const NO_DEADLINE = new AbortController().signal;
const DEPLOYMENT = HANDLED_KINDS[0]!;
const THREE = readWorkload(workload(), DEPLOYMENT);

function standard(): MemorySource {
  return new MemorySource()
    .configMap('app-config', { 'app.yaml': 'port: 8080' })
    .secret('db', { password: 'hunter2' })
    .configMap('flags', { mode: 'fast' });
}

/** A memo that counts the answers it gives, and the digests it is given by version. */
class CountingMemo extends HashMemo {
  answers = 0;
  readonly computed: HashVersion[] = [];
  override get(version: HashVersion, namespace: string, identity: string): string | undefined {
    const hash = super.get(version, namespace, identity);
    if (hash !== undefined) this.answers++;
    return hash;
  }
  override set(version: HashVersion, namespace: string, identity: string, hash: string): void {
    this.computed.push(version);
    super.set(version, namespace, identity, hash);
  }
}

/** The parts of an answer that are data (legacyHash is a function: compared by its value). */
function dataOf(evaluation: Evaluation) {
  if (evaluation.status !== 'hashed') return evaluation;
  const { legacyHash, ...data } = evaluation;
  return { ...data, legacyHash: legacyHash() };
}

describe('the answer', () => {
  it.each([
    [
      'no sources',
      () => new MemorySource(),
      workload({ podSpec: { containers: [{ name: 'a', image: 'x' }] } }),
      { status: 'no-sources' },
    ],
    [
      'unreadable: names each failed lookup',
      () => standard().fail('Secret', 'db', 'forbidden'),
      workload(),
      {
        status: 'unreadable',
        failures: [{ ref: expect.objectContaining({ name: 'db' }), failure: 'forbidden' }],
      },
    ],
    [
      'hashed, with the required sources that are absent',
      () => standard().delete('ConfigMap', 'flags'),
      workload(),
      {
        status: 'hashed',
        sources: 'configmap/app-config,configmap/flags,secret/db',
        missingRequired: [expect.objectContaining({ kind: 'ConfigMap', name: 'flags' })],
      },
    ],
  ])('%s', async (_name, source, object, expected) => {
    const evaluate = createEvaluator({ configSource: source(), hashKey: KEY });
    const result = await evaluate(readWorkload(object, DEPLOYMENT), NAMESPACE, NO_DEADLINE);
    expect(result).toMatchObject(expected as Partial<Evaluation>);
  });
});

describe('lookups', () => {
  it('are issued in parallel: all are in flight before any answers', async () => {
    const inner = standard();
    let inFlight = 0;
    let most = 0;
    const parallel: ConfigSource = {
      async get(kind, namespace, name): Promise<LookupResult> {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        return inner.get(kind, namespace, name);
      },
    };
    const evaluate = createEvaluator({ configSource: parallel, hashKey: KEY });
    const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    expect(result.status).toBe('hashed');
    expect(most).toBe(3);
  });
});

describe('the memo', () => {
  it('answers for sources whose uid and resourceVersion it has hashed', async () => {
    const memo = new CountingMemo();
    const source = standard();
    const evaluate = createEvaluator({ configSource: source, hashKey: KEY, memo });
    const first = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    expect(memo.answers).toBe(0);
    const second = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    expect(memo.answers).toBe(1);
    expect(dataOf(second)).toEqual(dataOf(first));
    expect(source.calls).toHaveLength(6); // the lookups themselves stay live
  });

  it('does not answer once an object has a new resourceVersion', async () => {
    const memo = new CountingMemo();
    const source = standard();
    const evaluate = createEvaluator({ configSource: source, hashKey: KEY, memo });
    const first = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    source.configMap('flags', { mode: 'slow' });
    const second = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    expect(memo.answers).toBe(0);
    expect(dataOf(second)).not.toEqual(dataOf(first));
  });

  it('never answers for the same objects in another namespace', async () => {
    const memo = new CountingMemo();
    // MemorySource gives the same uid and resourceVersion in every namespace.
    const evaluate = createEvaluator({ configSource: standard(), hashKey: KEY, memo });
    const a = await evaluate(THREE, 'team-a', NO_DEADLINE);
    const b = await evaluate(THREE, 'team-b', NO_DEADLINE);
    expect(memo.answers).toBe(0);
    expect(a.status === 'hashed' && b.status === 'hashed' && a.hash !== b.hash).toBe(true);
  });
});

describe('the digests', () => {
  it("hash is v2 in the workload's namespace; legacyHash is v1", async () => {
    const source = standard();
    const evaluate = createEvaluator({ configSource: source, hashKey: KEY });
    const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    if (result.status !== 'hashed') throw new Error(result.status);
    expect(result.hash).toBe(await digestOf(source, THREE, 'v2', KEY, NAMESPACE));
    expect(result.legacyHash()).toBe(await digestOf(source, THREE, 'v1', KEY, NAMESPACE));
    expect(result.legacyHash()).not.toBe(result.hash);
  });

  it('two namespaces with the same content get different hashes, and the same v1', async () => {
    const evaluate = createEvaluator({ configSource: standard(), hashKey: KEY });
    const [a, b] = await Promise.all(
      ['team-a', 'team-b'].map((ns) => evaluate(THREE, ns, NO_DEADLINE)),
    );
    if (a?.status !== 'hashed' || b?.status !== 'hashed') throw new Error('not hashed');
    expect(a.hash).not.toBe(b.hash);
    expect(a.legacyHash()).toBe(b.legacyHash());
  });

  it('the v1 digest is computed only when asked, once', async () => {
    const memo = new CountingMemo();
    const evaluate = createEvaluator({ configSource: standard(), hashKey: KEY, memo });
    const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    if (result.status !== 'hashed') throw new Error(result.status);
    expect(memo.computed).toEqual(['v2']);
    expect(isCurrentHash(result.hash, result)).toBe(true);
    expect(memo.computed).toEqual(['v2']);
    result.legacyHash();
    result.legacyHash();
    expect(memo.computed).toEqual(['v2', 'v1']);
  });
});

describe('isCurrentHash', () => {
  let asked = 0;
  const digests: Digests = {
    hash: 'v2'.padEnd(64, '2'),
    legacyHash: () => {
      asked++;
      return 'v1'.padEnd(64, '1');
    },
  };
  it.each([
    ['the v2 digest of the content now', digests.hash, true, 0],
    ['the v1 digest of the content now (written before v2)', 'v1'.padEnd(64, '1'), true, 1],
    ['a digest of other content', 'f'.repeat(64), false, 1],
    ['no value', undefined, false, 0],
  ] as const)('%s', (_name, value, current, legacyAsked) => {
    asked = 0;
    expect(isCurrentHash(value, digests)).toBe(current);
    expect(asked).toBe(legacyAsked);
  });
});
