// The hash key Secret (`--hash-key-secret`): the first replica to start creates it with
// 32 random bytes, every other replica adopts it, and each writes the current key and the
// previous ones to its own files. Nothing here ever overwrites the hash key: rotating it is
// a person's edit of the Secret (docs/security.md).

import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SecretStore, SelfManagedPorts } from '../certs/ports.js';
import { writeFileAtomically } from '../runtime/files.js';

/** Where the hash key comes from and where its file goes. */
export interface HashKeySecret {
  readonly secretName: string;
  readonly file: string;
}

/** The hash key Secret's current key: every hash is written with it. */
export const HASH_KEY_KEY = 'hash.key';
/**
 * The hash key Secret's previous keys, `previous-<any name>` (docs/security.md "Rotate the
 * hash key"): hashes they made stay current. Any other entry is ignored.
 */
export const PREVIOUS_HASH_KEY_PREFIX = 'previous-';

const HASH_KEY_BYTES = 32;
const OPAQUE_SECRET_TYPE = 'Opaque';

/** A previous hash key, by its entry in the Secret (`previous-…`). */
interface PreviousHashKey {
  readonly entry: string;
  readonly key: Buffer;
}

/**
 * Reads the hash key Secret, creating it with 32 random bytes when absent. Never replaces
 * it: rotating the key is a person's edit of the Secret (docs/security.md).
 */
export async function ensureHashKey(
  store: SecretStore,
  name: string,
  generate: () => Buffer = () => randomBytes(HASH_KEY_BYTES),
): Promise<{ key: Buffer; previous: readonly PreviousHashKey[]; created: boolean }> {
  let stored = await store.read(name);
  let created = false;
  if (stored === undefined) {
    created =
      (await store.create(name, OPAQUE_SECRET_TYPE, { [HASH_KEY_KEY]: generate() })) === 'created';
    stored = await store.read(name);
    if (stored === undefined) {
      throw new Error(`Secret ${store.namespace}/${name} disappeared right after it was created`);
    }
  }
  const entries = [HASH_KEY_KEY, ...previousHashKeyEntries(stored.data)];
  for (const entry of entries) {
    const problem = checkHashKey(stored.data[entry], HASH_KEY_BYTES, entry);
    if (problem) {
      throw new Error(`Secret ${store.namespace}/${name} ${problem} (it is never overwritten)`);
    }
  }
  const previous = entries.slice(1).map((entry) => ({ entry, key: stored.data[entry]! }));
  return { key: stored.data[HASH_KEY_KEY]!, previous, created };
}

/** The hash key is created once and never replaced: a short one is an error to fix by hand. */
export function checkHashKey(
  key: Buffer | undefined,
  minBytes: number,
  entry: string = HASH_KEY_KEY,
): string | undefined {
  if (key === undefined) return `has no ${entry}`;
  if (key.length < minBytes) {
    return `${entry} has ${key.length} bytes; at least ${minBytes} are required`;
  }
  return undefined;
}

/** The entries of a hash key Secret that hold previous keys, in name order. */
export function previousHashKeyEntries(data: Readonly<Record<string, Buffer>>): string[] {
  return Object.keys(data)
    .filter((entry) => entry.startsWith(PREVIOUS_HASH_KEY_PREFIX))
    .sort();
}

/**
 * The current key to its file, each previous key to a file named as its entry beside it
 * (the layout a Secret volume would give); returns the previous keys' files. A previous
 * key's file whose entry is gone from the Secret is removed: a container restarted in
 * the same pod keeps its runtime directory, and a dropped key should not outlive the drop.
 */
export async function writeHashKeyFiles(
  namespace: string,
  hashKey: HashKeySecret,
  { secrets, log }: Pick<SelfManagedPorts, 'secrets' | 'log'>,
): Promise<string[]> {
  const { key, previous, created } = await ensureHashKey(secrets, hashKey.secretName);
  await writeFileAtomically(hashKey.file, key);
  const dir = dirname(hashKey.file);
  const entries = new Set(previous.map(({ entry }) => entry));
  for (const name of await readdir(dir)) {
    if (name.startsWith(PREVIOUS_HASH_KEY_PREFIX) && !entries.has(name)) {
      await rm(join(dir, name), { force: true });
    }
  }
  const files = previous.map(({ entry }) => join(dir, entry));
  for (const [index, { key: previousKey }] of previous.entries()) {
    await writeFileAtomically(files[index]!, previousKey);
  }
  log.info(
    {
      secret: `${namespace}/${hashKey.secretName}`,
      created,
      previousKeys: previous.map(({ entry }) => entry),
    },
    created ? 'hash key created' : 'hash key loaded',
  );
  return files;
}
