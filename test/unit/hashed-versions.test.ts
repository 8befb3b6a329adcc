// hashed-versions (docs/design.md §2, §6): what a hash was computed from, bound to the hash
// and to what the template selects, so that follow mode trusts it only for the template
// and hash the webhook wrote it with.

import { describe, expect, it } from 'vitest';
import type { SourceRef } from '../../src/sources/index.js';
import { formatHashedVersions, readHashedVersions } from '../../src/workload/index.js';

const HASH = 'a'.repeat(64);
const KEY_ID = 'current-key-id';
const MADE = { keyId: KEY_ID, hash: HASH };

function ref(kind: SourceRef['kind'], name: string, options: Partial<SourceRef> = {}): SourceRef {
  return {
    kind,
    name,
    selection: { all: true },
    optional: false,
    requiredKeys: new Set(),
    ...options,
  };
}

const APP = ref('ConfigMap', 'app');
const DB = ref('Secret', 'db');
const FLAGS = ref('ConfigMap', 'flags', { optional: true });

describe('hashed-versions', () => {
  it('reads back the versions it was written with, in the order of the refs asked for', () => {
    const value = formatHashedVersions(MADE, [
      { ref: DB, version: '12' },
      { ref: APP, version: '7' },
      { ref: FLAGS, version: undefined },
    ]);
    expect(value).toMatch(/^[0-9a-f]{16} configmap\/app=7,configmap\/flags=-,secret\/db=12$/);
    expect(readHashedVersions(value, MADE, [APP, FLAGS, DB])).toEqual(['7', undefined, '12']);
    expect(readHashedVersions(value, MADE, [DB, APP, FLAGS])).toEqual(['12', '7', undefined]);
  });

  const written = formatHashedVersions(MADE, [
    { ref: APP, version: '7' },
    { ref: DB, version: '12' },
  ]);

  it.each([
    [
      'another hash (the template hash dropped or replaced by a write it never saw)',
      'b'.repeat(64),
      [APP, DB],
    ],
    ['no hash', undefined, [APP, DB]],
    ['a source more', HASH, [APP, DB, FLAGS]],
    ['a source fewer', HASH, [APP]],
    [
      'other keys selected',
      HASH,
      [ref('ConfigMap', 'app', { selection: { all: false, keys: new Set(['a']) } }), DB],
    ],
    ['a key now required', HASH, [ref('ConfigMap', 'app', { requiredKeys: new Set(['a']) }), DB]],
    ['optional now', HASH, [ref('ConfigMap', 'app', { optional: true }), DB]],
  ] as const)('counts for nothing with %s', (_name, hash, refs) => {
    expect(readHashedVersions(written, { keyId: KEY_ID, hash }, refs)).toBeUndefined();
  });

  it('counts for nothing for a reader that hashes with another key', () => {
    expect(readHashedVersions(written, { keyId: 'another-key-id', hash: HASH }, [APP, DB])).toBe(
      undefined,
    );
  });

  it.each([
    ['nothing', undefined],
    ['no binding', 'configmap/app=7,secret/db=12'],
    ['a forged binding', `${'0'.repeat(16)} configmap/app=7,secret/db=12`],
    ['a source renamed under the right binding', written?.replace('app=', 'other=')],
    ['an entry without a version', written?.replace('app=7', 'app')],
  ])('counts for nothing with %s', (_name, value) => {
    expect(readHashedVersions(value, MADE, [APP, DB])).toBeUndefined();
  });

  it('writes nothing for a version it could not read back plainly', () => {
    for (const version of ['-', '1,2', 'a=b', 'a b', '']) {
      expect(formatHashedVersions(MADE, [{ ref: APP, version }])).toBeUndefined();
    }
  });
});
