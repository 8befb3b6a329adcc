// "The hash now" (src/evaluate.ts): one answer per workload, lookups in
// parallel, and a memo that answers for sources it has already hashed.

import { describe, expect, it } from 'vitest';
import {
  type ConfigSource,
  createEvaluator,
  type Evaluation,
  type LookupResult,
} from '../../src/evaluate.js';
import { HashMemo } from '../../src/hash/index.js';
import { HANDLED_KINDS, readWorkload } from '../../src/workload/index.js';
import { MemorySource } from '../support/memory-source.js';
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

/** A memo that counts the answers it gives. */
class CountingMemo extends HashMemo {
  answers = 0;
  override get(identity: string): string | undefined {
    const hash = super.get(identity);
    if (hash !== undefined) this.answers++;
    return hash;
  }
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
    expect(second).toEqual(first);
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
    expect(second).not.toEqual(first);
  });
});
