// The hash keys serve and follow start with (src/commands/cluster.ts): --hash-key-file and every
// --previous-hash-key-file, or the files self-managed mode wrote from the Secret; each at
// least MIN_HASH_KEY_BYTES, or a one-line UsageError naming the flag and the file.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MIN_HASH_KEY_BYTES, readHashKeys } from '../../src/commands/cluster.js';
import { UsageError } from '../../src/commands/errors.js';
import { named } from '../support/named.js';

let dir: string;
const path = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'confighash-keys-'));
  await writeFile(path('current'), Buffer.alloc(MIN_HASH_KEY_BYTES, 1));
  await writeFile(path('previous-a'), Buffer.alloc(MIN_HASH_KEY_BYTES, 2));
  await writeFile(path('previous-b'), Buffer.alloc(64, 3));
  await writeFile(path('short'), Buffer.alloc(MIN_HASH_KEY_BYTES - 1, 4));
});

describe('readHashKeys', () => {
  it.each(
    named([
      { name: 'the current key alone', flags: [], self: [], previous: [] },
      {
        name: 'previous keys from --previous-hash-key-file, in order',
        flags: ['previous-a', 'previous-b'],
        self: [],
        previous: [2, 3],
      },
      {
        name: 'previous keys self-managed mode wrote from the Secret',
        flags: [],
        self: ['previous-b'],
        previous: [3],
      },
    ]),
  )('%s', async (_name, row) => {
    const keys = await readHashKeys(
      { hashKeyFile: path('current'), previousHashKeyFiles: row.flags.map(path) },
      { stop() {}, previousHashKeyFiles: row.self.map(path) },
    );
    expect(keys.hashKey).toEqual(Buffer.alloc(MIN_HASH_KEY_BYTES, 1));
    expect(keys.previousHashKeys.map((key) => key[0])).toEqual(row.previous);
  });

  it.each(
    named([
      {
        name: 'a previous key shorter than MIN_HASH_KEY_BYTES',
        current: 'current',
        previous: ['previous-a', 'short'],
        error: '--previous-hash-key-file DIR/short has 31 bytes; at least 32 are required',
      },
      {
        name: 'a previous key file that does not exist',
        current: 'current',
        previous: ['gone'],
        error: 'cannot read --previous-hash-key-file DIR/gone: ENOENT',
      },
      {
        name: 'a current key shorter than MIN_HASH_KEY_BYTES',
        current: 'short',
        previous: ['previous-a'],
        error: '--hash-key-file DIR/short has 31 bytes; at least 32 are required',
      },
    ]),
  )('%s is a UsageError naming the flag and the file', async (_name, row) => {
    const reading = readHashKeys(
      { hashKeyFile: path(row.current), previousHashKeyFiles: row.previous.map(path) },
      undefined,
    );
    await expect(reading).rejects.toBeInstanceOf(UsageError);
    await expect(reading).rejects.toThrow(row.error.replace('DIR', dir));
  });
});
