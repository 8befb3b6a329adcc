import { expect, it } from 'vitest';
import type { Evaluation } from '../../../src/evaluate/index.js';
import { decideReconcile } from '../../../src/follow/reconcile.js';
import type { SourceRef } from '../../../src/sources/index.js';
import { HANDLED_KINDS, readWorkload } from '../../../src/workload/index.js';
import { workload } from '../../support/workloads.js';

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
};

function hashed(hash: string, missingRequired: readonly SourceRef[] = []): Evaluation {
  return {
    status: 'hashed',
    hash,
    madeWithPreviousKey: (value) => hash === HASH_A && value === OLD_KEY_OF_A,
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
    hashed(HASH_B, [REF]),
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
