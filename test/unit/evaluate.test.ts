// "The hash now" (src/evaluate/): one answer per workload, lookups in
// parallel, a memo that answers for sources it has already hashed, and the one
// definition of a current hash (the current key's digest, or a previous key's).

import { describe, expect, it } from 'vitest';
import {
  type ConfigSource,
  createEvaluator,
  type Digests,
  type Evaluation,
  isCurrentHash,
  type LookupResult,
} from '../../src/evaluate/index.js';
import { HashMemo, hashKeyId } from '../../src/hash/index.js';
import { formatSource } from '../../src/sources/index.js';
import { HANDLED_KINDS, readWorkload } from '../../src/workload/index.js';
import { digestOf, MemorySource } from '../support/memory-source.js';
import { named } from '../support/named.js';
import { type KeyReference, NAMESPACE, readingKeys, workload } from '../support/workloads.js';

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

/** A memo that counts the answers it gives, and the digests it is given by key id. */
class CountingMemo extends HashMemo {
  answers = 0;
  readonly computed: string[] = [];
  override get(keyId: string, namespace: string, identity: string): string | undefined {
    const hash = super.get(keyId, namespace, identity);
    if (hash !== undefined) this.answers++;
    return hash;
  }
  override set(keyId: string, namespace: string, identity: string, hash: string): void {
    this.computed.push(keyId);
    super.set(keyId, namespace, identity, hash);
  }
}

/** The parts of an answer that are data (madeWithPreviousKey is a function). */
function dataOf(evaluation: Evaluation) {
  if (evaluation.status !== 'hashed') return evaluation;
  const { madeWithPreviousKey: _, digestOne: __, ...data } = evaluation;
  return data;
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
        missingRequired: [{ ref: expect.objectContaining({ kind: 'ConfigMap', name: 'flags' }) }],
      },
    ],
  ])('%s', async (_name, source, object, expected) => {
    const evaluate = createEvaluator({ configSource: source(), hashKey: KEY });
    const result = await evaluate(readWorkload(object, DEPLOYMENT), NAMESPACE, NO_DEADLINE);
    expect(result).toMatchObject(expected as Partial<Evaluation>);
  });
});

// docs/design.md §3 "Required keys", §4: what new pods need and cannot find.
describe('missing required sources and keys', () => {
  const app = (by: KeyReference['by'], key: string, optional?: boolean): KeyReference => ({
    by,
    kind: 'ConfigMap',
    name: 'app',
    key,
    ...(optional === undefined ? {} : { optional }),
  });
  const creds = (by: KeyReference['by'], key: string, optional?: boolean): KeyReference => ({
    by,
    kind: 'Secret',
    name: 'creds',
    key,
    ...(optional === undefined ? {} : { optional }),
  });
  const source = () =>
    new MemorySource().configMap('app', { 'app.yaml': 'port: 1' }).secret('creds', { user: 'u' });

  interface Row {
    readonly name: string;
    readonly podSpec: Record<string, unknown>;
    readonly source?: () => MemorySource;
    readonly status?: Evaluation['status'];
    /** `configmap/NAME` and the key, or the object alone. */
    readonly missing: readonly { source: string; key?: string }[];
  }

  it.each(
    named<Row>([
      {
        name: 'a volume items key the ConfigMap lacks',
        podSpec: readingKeys(app('volume items', 'LOG_LEVEL')),
        missing: [{ source: 'configmap/app', key: 'LOG_LEVEL' }],
      },
      {
        name: 'a configMapKeyRef key the ConfigMap lacks',
        podSpec: readingKeys(app('env key ref', 'LOG_LEVEL')),
        missing: [{ source: 'configmap/app', key: 'LOG_LEVEL' }],
      },
      {
        name: 'a secretKeyRef key the Secret lacks, and a Secret volume items key',
        podSpec: readingKeys(creds('env key ref', 'token'), creds('volume items', 'ca.crt')),
        missing: [
          { source: 'secret/creds', key: 'ca.crt' },
          { source: 'secret/creds', key: 'token' },
        ],
      },
      {
        name: 'optional: false is required',
        podSpec: readingKeys(app('env key ref', 'LOG_LEVEL', false)),
        missing: [{ source: 'configmap/app', key: 'LOG_LEVEL' }],
      },
      {
        name: 'an optional key ref or optional volume items key is not missing: it counts as content',
        podSpec: readingKeys(app('env key ref', 'LOG_LEVEL', true), app('volume items', 'x', true)),
        missing: [],
      },
      {
        name: 'a key both an optional and a required reference name is required',
        podSpec: readingKeys(
          app('env key ref', 'LOG_LEVEL', true),
          app('volume items', 'LOG_LEVEL'),
        ),
        missing: [{ source: 'configmap/app', key: 'LOG_LEVEL' }],
      },
      {
        name: 'a whole reference beside a required key ref leaves the key required',
        podSpec: {
          containers: [
            {
              name: 'app',
              envFrom: [{ configMapRef: { name: 'app' } }],
              env: [
                {
                  name: 'L',
                  valueFrom: { configMapKeyRef: { name: 'app', key: 'LOG_LEVEL' } },
                },
              ],
            },
          ],
        },
        missing: [{ source: 'configmap/app', key: 'LOG_LEVEL' }],
      },
      {
        name: 'keys the object has are not missing',
        podSpec: readingKeys(app('volume items', 'app.yaml'), creds('env key ref', 'user')),
        missing: [],
      },
      {
        name: 'a key ref whose object is absent: the object is what is missing, once',
        podSpec: readingKeys(app('env key ref', 'LOG_LEVEL'), app('volume items', 'app.yaml')),
        source: () => new MemorySource(),
        missing: [{ source: 'configmap/app' }],
      },
      {
        name: 'an optional key ref whose object is absent: nothing is missing',
        podSpec: readingKeys(app('env key ref', 'LOG_LEVEL', true)),
        source: () => new MemorySource(),
        missing: [],
      },
      {
        name: 'unreadable: the keys other objects lack are named beside the failure',
        podSpec: readingKeys(app('env key ref', 'LOG_LEVEL'), creds('env key ref', 'user')),
        source: () => source().fail('Secret', 'creds', 'forbidden'),
        status: 'unreadable',
        missing: [{ source: 'configmap/app', key: 'LOG_LEVEL' }],
      },
    ]),
  )('%s', async (_name, row) => {
    const evaluate = createEvaluator({ configSource: (row.source ?? source)(), hashKey: KEY });
    const object = workload({ podSpec: row.podSpec });
    const result = await evaluate(readWorkload(object, DEPLOYMENT), NAMESPACE, NO_DEADLINE);
    expect(result.status).toBe(row.status ?? 'hashed');
    if (result.status === 'no-sources') throw new Error('no sources');
    const missing = result.missingRequired.map(({ ref, key }) => ({
      source: formatSource(ref),
      ...(key === undefined ? {} : { key }),
    }));
    expect(missing).toEqual(row.missing);
  });

  it('optionality changes no hash: a missing key is `missing` whether required or optional', async () => {
    const evaluate = createEvaluator({ configSource: source(), hashKey: KEY });
    const hashOf = async (optional: boolean | undefined) => {
      const podSpec = readingKeys(
        app('env key ref', 'LOG_LEVEL', optional),
        app('volume items', 'app.yaml', optional),
      );
      const result = await evaluate(
        readWorkload(workload({ podSpec }), DEPLOYMENT),
        NAMESPACE,
        NO_DEADLINE,
      );
      if (result.status !== 'hashed') throw new Error(result.status);
      return result.hash;
    };
    const required = await hashOf(undefined);
    expect(await hashOf(false)).toBe(required);
    expect(await hashOf(true)).toBe(required);
    const podSpec = readingKeys(app('env key ref', 'LOG_LEVEL'), app('volume items', 'app.yaml'));
    expect(required).toBe(
      await digestOf(source(), readWorkload(workload({ podSpec }), DEPLOYMENT), KEY, NAMESPACE),
    );
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

const OLD_KEY = Buffer.alloc(32, 4);
const OLDER_KEY = Buffer.alloc(40, 5);

describe('the digests', () => {
  it("hash is the current key's digest in the workload's namespace", async () => {
    const source = standard();
    const evaluate = createEvaluator({
      configSource: source,
      hashKey: KEY,
      previousHashKeys: [OLD_KEY],
    });
    const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    if (result.status !== 'hashed') throw new Error(result.status);
    expect(result.hash).toBe(await digestOf(source, THREE, KEY, NAMESPACE));
    expect(result.hash).not.toBe(await digestOf(source, THREE, OLD_KEY, NAMESPACE));
  });

  it('two namespaces with the same content get different hashes', async () => {
    const evaluate = createEvaluator({ configSource: standard(), hashKey: KEY });
    const [a, b] = await Promise.all(
      ['team-a', 'team-b'].map((ns) => evaluate(THREE, ns, NO_DEADLINE)),
    );
    if (a?.status !== 'hashed' || b?.status !== 'hashed') throw new Error('not hashed');
    expect(a.hash).not.toBe(b.hash);
  });

  it("a previous key's digest is computed only for a value other than hash, once per key", async () => {
    const memo = new CountingMemo();
    const source = standard();
    const evaluate = createEvaluator({
      configSource: source,
      hashKey: KEY,
      previousHashKeys: [OLD_KEY, OLDER_KEY],
      memo,
    });
    const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    if (result.status !== 'hashed') throw new Error(result.status);
    expect(memo.computed).toEqual([hashKeyId(KEY)]);
    expect(isCurrentHash(result.hash, result)).toBe('current-key');
    expect(memo.computed).toEqual([hashKeyId(KEY)]);
    const older = await digestOf(source, THREE, OLDER_KEY, NAMESPACE);
    expect(isCurrentHash(older, result)).toBe('previous-key');
    expect(isCurrentHash(older, result)).toBe('previous-key');
    expect(isCurrentHash('f'.repeat(64), result)).toBeUndefined();
    expect(memo.computed).toEqual([hashKeyId(KEY), hashKeyId(OLD_KEY), hashKeyId(OLDER_KEY)]);
  });

  it("the memo keeps each key's digest apart, and answers the next evaluation for both", async () => {
    const memo = new CountingMemo();
    const source = standard();
    const evaluate = createEvaluator({
      configSource: source,
      hashKey: KEY,
      previousHashKeys: [OLD_KEY],
      memo,
    });
    const old = await digestOf(source, THREE, OLD_KEY, NAMESPACE);
    for (let round = 0; round < 2; round++) {
      const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
      if (result.status !== 'hashed') throw new Error(result.status);
      expect(isCurrentHash(old, result)).toBe('previous-key');
    }
    expect(memo.computed).toEqual([hashKeyId(KEY), hashKeyId(OLD_KEY)]);
    expect(memo.answers).toBe(2);
  });

  it('a previous key equal to the current one, or given twice, is digested once', async () => {
    const memo = new CountingMemo();
    const evaluate = createEvaluator({
      configSource: standard(),
      hashKey: KEY,
      previousHashKeys: [KEY, OLD_KEY, Buffer.from(OLD_KEY)],
      memo,
    });
    const result = await evaluate(THREE, NAMESPACE, NO_DEADLINE);
    if (result.status !== 'hashed') throw new Error(result.status);
    expect(isCurrentHash('f'.repeat(64), result)).toBeUndefined();
    expect(memo.computed).toEqual([hashKeyId(KEY), hashKeyId(OLD_KEY)]);
  });
});

describe('isCurrentHash', () => {
  let asked = 0;
  const previous = 'b'.repeat(64);
  const digests: Digests = {
    hash: 'a'.repeat(64),
    keyId: 'current-key-id',
    digestOne: () => 'c'.repeat(64),
    madeWithPreviousKey: (value) => {
      asked++;
      return value === previous;
    },
  };
  it.each([
    ["the current key's digest of the content now", digests.hash, 'current-key', 0],
    ["a previous key's digest of the content now", previous, 'previous-key', 1],
    ['a digest of other content', 'f'.repeat(64), undefined, 1],
    ['no value', undefined, undefined, 0],
  ] as const)('%s', (_name, value, current, previousAsked) => {
    asked = 0;
    expect(isCurrentHash(value, digests)).toBe(current);
    expect(asked).toBe(previousAsked);
  });
});
