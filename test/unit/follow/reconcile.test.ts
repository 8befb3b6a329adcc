import { expect, it } from 'vitest';
import { decideReconcile } from '../../../src/follow/reconcile.js';
import type { SourceRef } from '../../../src/hash/index.js';
import type { LookupResult } from '../../../src/kube/index.js';
import type { WorkloadEvaluation } from '../../../src/mutate.js';
import { HANDLED_KINDS } from '../../../src/workload/index.js';
import { workload } from '../../support/workloads.js';

const DEPLOYMENT = HANDLED_KINDS[0]!;
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const REF: SourceRef = {
  kind: 'ConfigMap',
  name: 'app',
  selection: { all: true },
  optional: false,
};
const FOUND: LookupResult = { status: 'found', uid: 'u', resourceVersion: '1', content: new Map() };

function evaluation(
  hash: string | undefined,
  result: LookupResult = FOUND,
  ref = REF,
): WorkloadEvaluation {
  return { lookups: [{ ref, result }], problems: [], hash, sources: 'configmap/app' };
}

it.each([
  [
    'template hash equals the hash now',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    evaluation(HASH_A),
    { touch: false, why: 'up-to-date' },
  ],
  [
    'template hash differs',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    evaluation(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
  [
    'adopted hash equals the hash now',
    workload({ annotations: { 'confighash.dev/adopted-hash': HASH_A } }),
    evaluation(HASH_A),
    { touch: false, why: 'up-to-date' },
  ],
  [
    'adopted hash differs',
    workload({ annotations: { 'confighash.dev/adopted-hash': HASH_A } }),
    evaluation(HASH_B),
    { touch: true, why: 'config-changed' },
  ],
  [
    'neither annotation: adopt by touching',
    workload(),
    evaluation(HASH_A),
    { touch: true, why: 'not-yet-hashed' },
  ],
  [
    'no sources',
    workload(),
    { lookups: [], problems: [], hash: undefined, sources: undefined },
    { touch: false, why: 'no-sources' },
  ],
  [
    'opted out',
    workload({ annotations: { 'confighash.dev/enabled': 'false' } }),
    evaluation(HASH_B),
    { touch: false, why: 'opted-out' },
  ],
  [
    'a lookup failed',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    evaluation(undefined, { status: 'failed', failure: 'timeout', detail: 'timed out' }),
    { touch: false, why: 'lookup-failed' },
  ],
  [
    'a required source is missing',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    evaluation(HASH_B, { status: 'absent' }),
    { touch: false, why: 'source-missing' },
  ],
  [
    'an optional source disappeared',
    workload({ templateAnnotations: { 'confighash.dev/hash': HASH_A } }),
    evaluation(HASH_B, { status: 'absent' }, { ...REF, optional: true }),
    { touch: true, why: 'config-changed' },
  ],
])('%s', (_name, object, given, expected) => {
  expect(decideReconcile(object, DEPLOYMENT, given)).toEqual(expected);
});
