import { describe, expect, it } from 'vitest';
import {
  createEvaluator,
  type Evaluation,
  type MissingRequired,
} from '../../../src/evaluate/index.js';
import { decideReconcile } from '../../../src/follow/reconcile.js';
import type { SourceRef } from '../../../src/sources/index.js';
import { HANDLED_KINDS, HASH, readWorkload } from '../../../src/workload/index.js';
import { digestOf, MemorySource } from '../../support/memory-source.js';
import { named } from '../../support/named.js';
import { type KeyReference, NAMESPACE, readingKeys, workload } from '../../support/workloads.js';

const DEPLOYMENT = HANDLED_KINDS[0]!;
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
/** A previous key's digest of the content whose current-key digest is HASH_A. */
const OLD_KEY_OF_A = '1'.repeat(64);
const REF: SourceRef = {
  kind: 'ConfigMap',
  name: 'app',
  selection: { all: true },
  optional: false,
  requiredKeys: new Set(),
};

function hashed(hash: string, missingRequired: readonly MissingRequired[] = []): Evaluation {
  return {
    status: 'hashed',
    hash,
    keyId: 'current-key-id',
    madeWithPreviousKey: (value) => hash === HASH_A && value === OLD_KEY_OF_A,
    digestOne: () => 'c'.repeat(64),
    sources: 'configmap/app',
    missingRequired,
    lookups: [],
    problems: [],
  };
}

const UNREADABLE: Evaluation = {
  status: 'unreadable',
  failures: [{ ref: REF, failure: 'timeout', detail: 'timed out' }],
  missingRequired: [],
  lookups: [],
  problems: [],
};

it.each([
  [
    'template hash equals the hash now',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    hashed(HASH_A),
    { touch: false, why: 'up-to-date' },
  ],
  [
    'template hash differs',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    hashed(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
  [
    'adopted hash equals the hash now',
    workload({ annotations: { 'confighash.dev/adopted-hash': HASH_A } }),
    hashed(HASH_A),
    { touch: false, why: 'up-to-date' },
  ],
  [
    'adopted hash differs',
    workload({ annotations: { 'confighash.dev/adopted-hash': HASH_A } }),
    hashed(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
  [
    "template hash is a previous key's digest of the content now: no touch",
    workload({ templateAnnotations: { 'confighash.dev/hash': OLD_KEY_OF_A } }),
    hashed(HASH_A),
    { touch: false, why: 'up-to-date-previous-key' },
  ],
  [
    "template hash is a previous key's digest of other content: touch",
    workload({ templateAnnotations: { 'confighash.dev/hash': OLD_KEY_OF_A } }),
    hashed(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
  [
    "adopted hash is a previous key's digest of the content now: no touch",
    workload({ annotations: { 'confighash.dev/adopted-hash': OLD_KEY_OF_A } }),
    hashed(HASH_A),
    { touch: false, why: 'up-to-date-previous-key' },
  ],
  [
    "adopted hash is a previous key's digest of other content: touch",
    workload({ annotations: { 'confighash.dev/adopted-hash': OLD_KEY_OF_A } }),
    hashed(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
  [
    'neither annotation: adopt by touching',
    workload(),
    hashed(HASH_A),
    { touch: true, why: 'not-yet-hashed' },
  ],
  [
    'no sources',
    workload(),
    { status: 'no-sources', lookups: [], problems: [] },
    { touch: false, why: 'no-sources' },
  ],
  [
    'opted out',
    workload({ annotations: { 'confighash.dev/enabled': 'false' } }),
    hashed(HASH_B),
    { touch: false, why: 'opted-out' },
  ],
  [
    'a lookup failed',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    UNREADABLE,
    { touch: false, why: 'lookup-failed' },
  ],
  [
    'a required source is missing',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    hashed(HASH_B, [{ ref: REF }]),
    { touch: false, why: 'source-missing' },
  ],
  [
    'a required key is missing from an object that exists',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    hashed(HASH_B, [{ ref: REF, key: 'LOG_LEVEL' }]),
    { touch: false, why: 'source-missing' },
  ],
  [
    'an optional source disappeared (hashed as absent, nothing missing)',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    hashed(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
] as [string, Record<string, unknown>, Evaluation, unknown][])(
  '%s',
  (_name, object, given, expected) => {
    expect(decideReconcile(readWorkload(object, DEPLOYMENT), given)).toEqual(expected);
  },
);

// The same decision from the evaluator itself: removing a key that pods need from a ConfigMap
// touches nothing (docs/design.md §6), an optional one rolls.
describe('a key removed from the config, as follow mode evaluates it', () => {
  const KEY = Buffer.alloc(32, 3);
  const NO_DEADLINE = new AbortController().signal;
  const ref = (by: KeyReference['by'], kind: KeyReference['kind'], optional?: boolean) =>
    ({
      by,
      kind,
      name: 'app',
      key: 'LOG_LEVEL',
      ...(optional === undefined ? {} : { optional }),
    }) satisfies KeyReference;
  const full = () =>
    new MemorySource()
      .configMap('app', { LOG_LEVEL: 'info', other: 'x' })
      .secret('app', { LOG_LEVEL: 'info', other: 'x' });
  const without = () =>
    new MemorySource().configMap('app', { other: 'x' }).secret('app', { other: 'x' });

  interface Row {
    readonly name: string;
    readonly reference: KeyReference;
    readonly after: () => MemorySource;
    readonly expected: ReturnType<typeof decideReconcile>;
  }

  it.each(
    named<Row>([
      {
        name: 'a required configMapKeyRef key removed: no touch',
        reference: ref('env key ref', 'ConfigMap'),
        after: without,
        expected: { touch: false, why: 'source-missing' },
      },
      {
        name: 'a required secretKeyRef key removed: no touch',
        reference: ref('env key ref', 'Secret'),
        after: without,
        expected: { touch: false, why: 'source-missing' },
      },
      {
        name: 'a required volume items key removed: no touch',
        reference: ref('volume items', 'ConfigMap'),
        after: without,
        expected: { touch: false, why: 'source-missing' },
      },
      {
        name: 'an optional key ref key removed: a change like any other, touched',
        reference: ref('env key ref', 'ConfigMap', true),
        after: without,
        expected: { touch: true, why: 'config-changed' },
      },
      {
        name: 'an optional volume items key removed: touched',
        reference: ref('volume items', 'Secret', true),
        after: without,
        expected: { touch: true, why: 'config-changed' },
      },
      {
        name: 'the object of a required key ref deleted: the object rule, no touch',
        reference: ref('env key ref', 'ConfigMap'),
        after: () => new MemorySource(),
        expected: { touch: false, why: 'source-missing' },
      },
    ]),
  )('%s', async (_name, row) => {
    const podSpec = readingKeys(row.reference);
    const before = readWorkload(workload({ podSpec }), DEPLOYMENT);
    const stored = await digestOf(full(), before, KEY, NAMESPACE);
    const hashed = readWorkload(
      workload({ podSpec, templateAnnotations: { [HASH]: stored } }),
      DEPLOYMENT,
    );
    const evaluate = createEvaluator({ configSource: row.after(), hashKey: KEY });
    const evaluation = await evaluate(hashed, NAMESPACE, NO_DEADLINE);
    expect(evaluation.status).toBe('hashed');
    expect(decideReconcile(hashed, evaluation)).toEqual(row.expected);
  });
});
