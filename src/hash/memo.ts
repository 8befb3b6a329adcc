// Remembers finished hashes by the identity of what went into them (each
// object's uid and resourceVersion plus the selected keys), so that a workload
// whose sources did not change since the last review is not hashed again.
// The lookups themselves are always live: this never answers for the API.
// An entry is one version's digest in one namespace: v2 keys each namespace
// differently, so the same objects (or the same absent names) in two namespaces
// never share a remembered hash.

import type { HashVersion } from './versions.js';

export class HashMemo {
  readonly #entries = new Map<string, string>();

  constructor(readonly maxEntries = 4096) {}

  get(version: HashVersion, namespace: string, identity: string): string | undefined {
    const key = entryKey(version, namespace, identity);
    const hash = this.#entries.get(key);
    if (hash !== undefined) {
      // Refresh recency: Map iterates in insertion order, oldest first.
      this.#entries.delete(key);
      this.#entries.set(key, hash);
    }
    return hash;
  }

  set(version: HashVersion, namespace: string, identity: string, hash: string): void {
    const key = entryKey(version, namespace, identity);
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

/** A namespace name is a DNS label: it holds no tab, so the three parts cannot run together. */
function entryKey(version: HashVersion, namespace: string, identity: string): string {
  return `${version}\t${namespace}\t${identity}`;
}
