// An in-memory FollowApi (src/follow/ports.ts): follow namespaces, workloads,
// ConfigMap/Secret watches the test drives by hand, and a touch that runs the
// real admission use case on the stored workload — the webhook as the single
// judge, as in a cluster. Records touches, Events and list calls.

import type {
  ConfigChange,
  ConfigResource,
  FollowApi,
  NamespaceInfo,
  WatchEnd,
  WorkloadEvent,
} from '../../src/follow/ports.js';
import type { Mutator } from '../../src/review.js';
import type { WorkloadKind } from '../../src/workload/index.js';
import { applyPatch } from './json-patch.js';

export interface OpenWatch {
  readonly namespace: string;
  readonly resource: ConfigResource;
  readonly resourceVersion: string;
  readonly onChange: (change: ConfigChange) => void;
  end(outcome: { expired?: boolean; error?: Error }): void;
}

export interface Touch {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly at: number;
}

export class MemoryFollowApi implements FollowApi {
  readonly namespaces = new Map<string, NamespaceInfo>();
  readonly workloads = new Map<string, Record<string, unknown>>();
  readonly watches: OpenWatch[] = [];
  readonly touches: Touch[] = [];
  readonly events: WorkloadEvent[] = [];
  readonly configLists: { namespace: string; resource: ConfigResource }[] = [];
  /** How many workload listings were made (resyncs and change lookups). */
  workloadLists = 0;
  #version = 100;

  constructor(private readonly webhook: Mutator) {}

  followNamespace(name: string, annotations: Record<string, string> = {}): this {
    this.namespaces.set(name, { name, annotations });
    return this;
  }

  putWorkload(namespace: string, object: Record<string, unknown>): this {
    const kind = String(object.kind);
    const name = String((object.metadata as { name: string }).name);
    this.workloads.set(`${kind}/${namespace}/${name}`, structuredClone(object));
    return this;
  }

  workload(kind: string, namespace: string, name: string): Record<string, unknown> | undefined {
    return this.workloads.get(`${kind}/${namespace}/${name}`);
  }

  /** Delivers a change to every open watch of that namespace and resource. */
  change(namespace: string, resource: ConfigResource, name: string, type: ConfigChange['type']) {
    for (const watch of this.watches) {
      if (watch.namespace === namespace && watch.resource === resource)
        watch.onChange({ type, name });
    }
  }

  /** Ends the open watches of `resource` (all namespaces), as the server would. */
  endWatches(resource: ConfigResource, outcome: { expired?: boolean; error?: Error }): void {
    for (const watch of this.watches.filter((w) => w.resource === resource)) watch.end(outcome);
  }

  // --- FollowApi -------------------------------------------------------------

  async listFollowNamespaces() {
    return { namespaces: [...this.namespaces.values()], resourceVersion: String(this.#version) };
  }

  watchFollowNamespaces(
    resourceVersion: string,
    _onEvent: unknown,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    return untilAborted(signal, { resourceVersion, expired: false });
  }

  async listConfigVersion(namespace: string, resource: ConfigResource) {
    this.configLists.push({ namespace, resource });
    return String(++this.#version);
  }

  watchConfig(
    namespace: string,
    resource: ConfigResource,
    resourceVersion: string,
    onChange: (change: ConfigChange) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    return new Promise((resolve, reject) => {
      const watch: OpenWatch = {
        namespace,
        resource,
        resourceVersion,
        onChange,
        end: ({ expired = false, error }) => {
          this.watches.splice(this.watches.indexOf(watch), 1);
          if (error) reject(error);
          else resolve({ resourceVersion: String(++this.#version), expired });
        },
      };
      this.watches.push(watch);
      signal.addEventListener('abort', () => watch.end({}), { once: true });
    });
  }

  async listWorkloads(namespace: string, kind: WorkloadKind) {
    this.workloadLists++;
    return [...this.workloads.entries()]
      .filter(([key]) => key.startsWith(`${kind.kind}/${namespace}/`))
      .map(([, object]) => structuredClone(object));
  }

  async getWorkload(namespace: string, kind: WorkloadKind, name: string) {
    const object = this.workload(kind.kind, namespace, name);
    return object === undefined ? undefined : structuredClone(object);
  }

  /** The `{}` patch: the stored object goes through the webhook, which writes the hash. */
  async touch(namespace: string, kind: WorkloadKind, name: string, signal: AbortSignal) {
    this.touches.push({ kind: kind.kind, namespace, name, at: Date.now() });
    const object = this.workload(kind.kind, namespace, name);
    if (!object) throw new Error(`no ${kind.kind} ${namespace}/${name}`);
    const result = await this.webhook.review(
      {
        uid: `touch-${this.touches.length}`,
        kind: { group: kind.group, version: kind.version, kind: kind.kind },
        name,
        namespace,
        operation: 'UPDATE',
        dryRun: false,
        object,
        oldObject: object,
      },
      signal,
    );
    this.putWorkload(namespace, applyPatch(object, result.patch as never));
  }

  async recordEvent(event: WorkloadEvent) {
    this.events.push(event);
  }
}

function untilAborted<T>(signal: AbortSignal, value: T): Promise<T> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(value);
    else signal.addEventListener('abort', () => resolve(value), { once: true });
  });
}
