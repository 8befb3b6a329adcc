// An in-memory SnapshotStore for unit tests of the core: the ConfigMaps a review created, what
// it asked, and failures to inject. Integration and e2e rows use the API adapter.

import { contentOfConfigMap } from '../../src/hash/index.js';
import type { FoundSnapshot, SnapshotStore, Written } from '../../src/snapshot/index.js';
import type { JsonObject } from '../../src/workload/index.js';

interface Stored {
  object: JsonObject;
  resourceVersion: number;
}

export class MemorySnapshots implements SnapshotStore {
  readonly objects = new Map<string, Stored>();
  readonly calls: string[] = [];
  /** A create answered with this failure instead (quota, the fence, RBAC). */
  createFailure: string | undefined;
  #version = 1;

  async read(namespace: string, name: string): Promise<FoundSnapshot> {
    this.calls.push(`read ${name}`);
    const stored = this.objects.get(`${namespace}/${name}`);
    if (!stored) return { status: 'absent' };
    const { object } = stored;
    const metadata = object.metadata as { ownerReferences?: { uid: string }[] };
    return {
      status: 'found',
      object,
      content: contentOfConfigMap(object as never),
      resourceVersion: String(stored.resourceVersion),
      owners: (metadata.ownerReferences ?? []).map(({ uid }) => uid),
    };
  }

  async create(body: JsonObject): Promise<Written | { readonly status: 'exists' }> {
    const { name, namespace } = body.metadata as { name: string; namespace: string };
    this.calls.push(`create ${name}`);
    if (this.createFailure) return { status: 'failed', detail: this.createFailure };
    if (this.objects.has(`${namespace}/${name}`)) return { status: 'exists' };
    this.objects.set(`${namespace}/${name}`, { object: body, resourceVersion: this.#version++ });
    return { status: 'done' };
  }

  async addOwner(
    { namespace, name }: { namespace: string; name: string },
    read: Extract<FoundSnapshot, { status: 'found' }>,
    owner: { uid: string },
  ): Promise<Written> {
    this.calls.push(`owner ${name} ${owner.uid}`);
    const stored = this.objects.get(`${namespace}/${name}`);
    if (!stored || String(stored.resourceVersion) !== read.resourceVersion) {
      return { status: 'failed', detail: 'HTTP 409' };
    }
    const metadata = stored.object.metadata as { ownerReferences?: unknown[] };
    const object = {
      ...stored.object,
      metadata: { ...metadata, ownerReferences: [...(metadata.ownerReferences ?? []), owner] },
    };
    this.objects.set(`${namespace}/${name}`, { object, resourceVersion: this.#version++ });
    return { status: 'done' };
  }

  /** Puts an object under a name, as someone else would (or a snapshot made earlier). */
  put(namespace: string, object: JsonObject): this {
    const { name } = object.metadata as { name: string };
    this.objects.set(`${namespace}/${name}`, { object, resourceVersion: this.#version++ });
    return this;
  }

  delete(namespace: string, name: string): this {
    this.objects.delete(`${namespace}/${name}`);
    return this;
  }

  names(): string[] {
    return [...this.objects.keys()].map((key) => key.split('/')[1]!).sort();
  }
}
