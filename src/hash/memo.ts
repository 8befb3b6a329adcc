// Remembers finished hashes by the identity of what went into them (each
// object's uid and resourceVersion plus the selected keys), so that a workload
// whose sources did not change since the last review is not hashed again.
// The lookups themselves are always live: this never answers for the API.
// An entry is one hash key's digest in one namespace: each namespace hashes with a
// key of its own, so the same objects (or the same absent names) in two namespaces
// never share a remembered hash, and neither do the current and a previous key.

export class HashMemo {
  readonly #entries = new Map<string, string>();

  constructor(readonly maxEntries = 4096) {}

  get(keyId: string, namespace: string, identity: string): string | undefined {
    const key = entryKey(keyId, namespace, identity);
    const hash = this.#entries.get(key);
    if (hash !== undefined) {
      // Refresh recency: Map iterates in insertion order, oldest first.
      this.#entries.delete(key);
      this.#entries.set(key, hash);
    }
    return hash;
  }

  set(keyId: string, namespace: string, identity: string, hash: string): void {
    const key = entryKey(keyId, namespace, identity);
    this.#entries.delete(key);
    this.#entries.set(key, hash);
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** A key id is hex and a namespace name a DNS label: neither holds a tab, so the parts cannot run together. */
function entryKey(keyId: string, namespace: string, identity: string): string {
  return `${keyId}\t${namespace}\t${identity}`;
}
