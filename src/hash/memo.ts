// Remembers finished hashes by the identity of what went into them (each
// object's uid and resourceVersion plus the selected keys), so that a workload
// whose sources did not change since the last review is not hashed again.
// The lookups themselves are always live: this never answers for the API.

export class HashMemo {
  readonly #entries = new Map<string, string>();

  constructor(readonly maxEntries = 4096) {}

  get(identity: string): string | undefined {
    const hash = this.#entries.get(identity);
    if (hash !== undefined) {
      // Refresh recency: Map iterates in insertion order, oldest first.
      this.#entries.delete(identity);
      this.#entries.set(identity, hash);
    }
    return hash;
  }

  set(identity: string, hash: string): void {
    this.#entries.delete(identity);
    this.#entries.set(identity, hash);
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
