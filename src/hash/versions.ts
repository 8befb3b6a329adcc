// The hash versions of docs/design.md §3 and the key each one is computed with. v2 is
// what is written; v1 stays computable because a template written by a v1 release
// is current while its content is (no rollout on upgrade, src/evaluate.ts).

import { createHmac } from 'node:crypto';

export type HashVersion = 'v1' | 'v2';

/** The first line of each version's encoding. */
export const ENCODING_HEADERS: Readonly<Record<HashVersion, string>> = {
  v1: 'confighash/v1\n',
  v2: 'confighash/v2\n',
};

/** What v2's per-namespace key is derived from, before the namespace's name. */
export const NAMESPACE_KEY_HEADER = 'confighash/v2 namespace\n';

declare const namespaceKey: unique symbol;
/** Only deriveNamespaceKey makes one, so the hash key itself can never key a v2 digest. */
export type NamespaceKey = Buffer & { readonly [namespaceKey]: true };

/**
 * The HMAC key of one version's digest: v1 is keyed by the hash key itself (the same
 * content gives the same digest in every namespace), v2 by the namespace's own key.
 */
export type DigestKey =
  | { readonly version: 'v1'; readonly key: Uint8Array }
  | { readonly version: 'v2'; readonly key: NamespaceKey };

/** `nsKey = HMAC-SHA256(key, "confighash/v2 namespace\n" + namespace)`. */
export function deriveNamespaceKey(hashKey: Uint8Array, namespace: string): NamespaceKey {
  return createHmac('sha256', hashKey)
    .update(NAMESPACE_KEY_HEADER + namespace, 'utf8')
    .digest() as NamespaceKey;
}

export function v1DigestKey(hashKey: Uint8Array): DigestKey {
  return { version: 'v1', key: hashKey };
}

export function v2DigestKey(hashKey: Uint8Array, namespace: string): DigestKey {
  return { version: 'v2', key: deriveNamespaceKey(hashKey, namespace) };
}

/**
 * The v2 keys of the namespaces hashed lately, so that a namespace's key is derived
 * once rather than on every hash (one HMAC of ~40 bytes, a few µs, against 32 bytes
 * plus the name kept per namespace). Bounded: the oldest is forgotten first.
 */
export class NamespaceKeys {
  readonly #keys = new Map<string, DigestKey>();

  constructor(
    private readonly hashKey: Uint8Array,
    readonly maxEntries = 1024,
  ) {}

  get(namespace: string): DigestKey {
    const known = this.#keys.get(namespace);
    if (known !== undefined) return known;
    const key = v2DigestKey(this.hashKey, namespace);
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
