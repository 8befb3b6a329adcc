// An in-memory ConfigSource for unit tests of the core. Integration tests use
// the real API adapter against a real HTTP server instead.

import type { ConfigSource, LookupFailure, LookupResult } from '../../src/evaluate/index.js';
import {
  computeHash,
  contentOfConfigMap,
  contentOfSecret,
  deriveNamespaceKey,
} from '../../src/hash/index.js';
import type { SourceKind } from '../../src/sources/index.js';
import { findSources, type Workload } from '../../src/workload/index.js';
import { sleep } from '../../tools/lib/poll.js';

interface Entry {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  resourceVersion: number;
  /** Its `confighash.dev/approved-change` annotation. */
  approvedChange?: string;
  /** Its `confighash.dev/fanout` annotation (follow mode's record). */
  fanout?: string;
}

export class MemorySource implements ConfigSource {
  readonly #objects = new Map<string, Entry>();
  readonly #failures = new Map<string, LookupFailure>();
  #version = 1;
  readonly calls: string[] = [];
  /** How long each read takes (on the test's clock); 0: at once. */
  latencyMs = 0;

  configMap(name: string, data: Record<string, string>, binaryData?: Record<string, string>): this {
    this.#objects.set(`ConfigMap/${name}`, { data, binaryData, resourceVersion: this.#version++ });
    return this;
  }

  /** `data` values are plain text here; stored base64-encoded as the API does. */
  secret(name: string, data: Record<string, string>): this {
    const encoded = Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    );
    this.#objects.set(`Secret/${name}`, { data: encoded, resourceVersion: this.#version++ });
    return this;
  }

  /** Writes the `confighash.dev/approved-change` annotation: metadata, the content stays. */
  approve(kind: SourceKind, name: string, digest: string): this {
    const entry = this.#objects.get(`${kind}/${name}`);
    if (!entry) throw new Error(`${kind}/${name} does not exist`);
    this.#objects.set(`${kind}/${name}`, {
      ...entry,
      approvedChange: digest,
      resourceVersion: this.#version++,
    });
    return this;
  }

  /** Writes the `confighash.dev/fanout` record, as follow mode does: metadata, the content stays. */
  record(kind: SourceKind, name: string, fanout: string): this {
    const entry = this.#objects.get(`${kind}/${name}`);
    if (!entry) throw new Error(`${kind}/${name} does not exist`);
    this.#objects.set(`${kind}/${name}`, { ...entry, fanout, resourceVersion: this.#version++ });
    return this;
  }

  delete(kind: SourceKind, name: string): this {
    this.#objects.delete(`${kind}/${name}`);
    return this;
  }

  fail(kind: SourceKind, name: string, failure: LookupFailure): this {
    this.#failures.set(`${kind}/${name}`, failure);
    return this;
  }

  /** Reads of it succeed again. */
  heal(kind: SourceKind, name: string): this {
    this.#failures.delete(`${kind}/${name}`);
    return this;
  }

  async get(kind: SourceKind, _namespace: string, name: string): Promise<LookupResult> {
    const id = `${kind}/${name}`;
    this.calls.push(id);
    if (this.latencyMs > 0) await sleep(this.latencyMs);
    const failure = this.#failures.get(id);
    if (failure) return { status: 'failed', failure, detail: failure };
    const entry = this.#objects.get(id);
    if (!entry) return { status: 'absent' };
    return {
      status: 'found',
      uid: `uid-${id}`,
      resourceVersion: String(entry.resourceVersion),
      content: kind === 'ConfigMap' ? contentOfConfigMap(entry) : contentOfSecret(entry),
      ...(entry.approvedChange ? { approvedChange: entry.approvedChange } : {}),
      ...(entry.fanout ? { fanout: entry.fanout } : {}),
    };
  }
}

/**
 * A workload's digest with one hash key from `source`'s objects, by the hash module alone
 * (pinned by the golden vectors): what a webhook with that key wrote for it.
 */
export async function digestOf(
  source: MemorySource,
  workload: Pick<Workload, 'template' | 'annotations'>,
  hashKey: Uint8Array,
  namespace: string,
): Promise<string> {
  const { sources } = findSources(workload.template?.spec, workload.annotations);
  const inputs = await Promise.all(
    sources.map(async (ref) => {
      const result = await source.get(ref.kind, namespace, ref.name);
      const content = result.status === 'found' ? result.content : undefined;
      return { kind: ref.kind, name: ref.name, selection: ref.selection, content };
    }),
  );
  return computeHash(deriveNamespaceKey(hashKey, namespace), inputs);
}
