// The digest's keys (docs/design.md §3): each namespace hashes with a key of its own,
// derived from a hash key, so the same content in two namespaces never gives the
// same hash. The encoding's first line and the derivation's prefix name the
// format ("v2"); there is no other.

import { createHash, createHmac } from 'node:crypto';

/** The first line of the encoding. */
export const ENCODING_HEADER = 'confighash/v2\n';

/** What a namespace's key is derived from, before the namespace's name. */
const NAMESPACE_KEY_HEADER = 'confighash/v2 namespace\n';

declare const namespaceKey: unique symbol;
/** Only deriveNamespaceKey makes one, so the hash key itself can never key a digest. */
export type NamespaceKey = Buffer & { readonly [namespaceKey]: true };

/** `nsKey = HMAC-SHA256(key, "confighash/v2 namespace\n" + namespace)`. */
export function deriveNamespaceKey(hashKey: Uint8Array, namespace: string): NamespaceKey {
  return createHmac('sha256', hashKey)
    .update(NAMESPACE_KEY_HEADER + namespace, 'utf8')
    .digest() as NamespaceKey;
}

/**
 * A short name for a hash key, so that what is remembered of one key's digests is
 * never taken for another's. A digest of the key, never written anywhere.
 */
export function hashKeyId(hashKey: Uint8Array): string {
  return createHash('sha256')
    .update('confighash key id\n')
    .update(hashKey)
    .digest('hex')
    .slice(0, 16);
}

/**
 * One hash key's namespace keys for the namespaces hashed lately, so that a namespace's
 * key is derived once rather than on every hash (one HMAC of ~40 bytes, a few µs, against
 * 32 bytes plus the name kept per namespace). Bounded: the oldest is forgotten first.
 */
export class NamespaceKeys {
  readonly #keys = new Map<string, NamespaceKey>();
  /** hashKeyId of the hash key. */
  readonly id: string;

  constructor(
    private readonly hashKey: Uint8Array,
    readonly maxEntries = 1024,
  ) {
    this.id = hashKeyId(hashKey);
  }

  get(namespace: string): NamespaceKey {
    const known = this.#keys.get(namespace);
    if (known !== undefined) return known;
    const key = deriveNamespaceKey(this.hashKey, namespace);
    this.#keys.set(namespace, key);
    if (this.#keys.size > this.maxEntries) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    return key;
  }

  get size(): number {
    return this.#keys.size;
  }
}
