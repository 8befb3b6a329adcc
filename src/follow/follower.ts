// Follow mode while this replica leads (docs/design.md §6): metadata-only watches of
// ConfigMaps and Secrets in follow namespaces request touches of the workloads
// that reference the changed object; a full resync at start and periodically
// catches whatever happened while nobody watched. The parts: touch-queue.ts
// (when), touch.ts (one touch), references.ts (which workloads), watch-loop.ts
// (the watches). This file only composes them.

import type { Evaluator } from '../evaluate.js';
import { formatSource, sourceOfResource } from '../sources.js';
import type { WorkloadKind } from '../workload/index.js';
import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type { ConfigChange, ConfigResource, FollowApi, NamespaceInfo } from './ports.js';
import { listReferencing, type Referencing } from './references.js';
import { sleep } from './sleep.js';
import { createToucher, RETRY_MS } from './touch.js';
import { mergeChange, type SourceChange, TouchQueue } from './touch-queue.js';
import { watchConfig, watchNamespaces } from './watch-loop.js';

export interface FollowOptions {
  readonly resyncMs: number;
  readonly debounceMs: number;
  readonly minIntervalMs: number;
  readonly ratePerSecond: number;
  readonly burst: number;
  /** A touch or listing that failed (a request timed out, say) is tried again after this. */
  readonly retryMs: number;
}

export const DEFAULT_FOLLOW_OPTIONS: FollowOptions = {
  resyncMs: 10 * 60_000,
  debounceMs: 10_000,
  minIntervalMs: 60_000,
  ratePerSecond: 5,
  burst: 20,
  retryMs: RETRY_MS,
};

export interface FollowerDependencies {
  readonly api: FollowApi;
  readonly evaluate: Evaluator;
  readonly metrics: FollowMetrics;
  readonly logger: FollowLogger;
  readonly options: FollowOptions;
  /** The kinds listed and touched (default: the apps/v1 ones; `--kind` adds more). */
  readonly kinds?: readonly WorkloadKind[];
}

/** Runs until `signal` aborts (leadership lost or shutdown); then stops at once. */
export async function runFollower(deps: FollowerDependencies, signal: AbortSignal): Promise<void> {
  const follower = new Follower(deps, signal);
  deps.logger.info({ ...deps.options }, 'follow: started');
  const resync = setInterval(() => follower.resyncAll(), deps.options.resyncMs);
  void watchNamespaces(
    deps,
    {
      onListed: (namespaces) => follower.followOnly(namespaces),
      onEvent: (event) =>
        event.type === 'DELETED'
          ? follower.unfollow(event.namespace.name)
          : follower.follow(event.namespace),
    },
    signal,
  );
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearInterval(resync);
  follower.stop();
  deps.logger.info({}, 'follow: stopped');
}

const CHANGE: Readonly<Record<ConfigChange['type'], SourceChange>> = {
  ADDED: 'created',
  MODIFIED: 'changed',
  DELETED: 'deleted',
};

interface Followed {
  info: NamespaceInfo;
  readonly stop: AbortController;
}

class Follower {
  readonly #queue: TouchQueue;
  readonly #namespaces = new Map<string, Followed>();
  /** Changes not yet looked up, per namespace: one listing serves a burst of events. */
  readonly #changed = new Map<string, Map<string, SourceChange>>();
  readonly #draining = new Set<string>();

  constructor(
    private readonly deps: FollowerDependencies,
    private readonly signal: AbortSignal,
  ) {
    this.#queue = new TouchQueue(deps.options, deps.metrics);
    this.#queue.onDue(
      createToucher({
        ...deps,
        queue: this.#queue,
        namespaceAnnotations: (name) => this.#namespaces.get(name)?.info.annotations ?? {},
        holdRetryMs: deps.options.resyncMs,
        retryMs: deps.options.retryMs,
        signal,
      }),
    );
  }

  /** The listed namespaces are exactly the followed ones. */
  followOnly(namespaces: readonly NamespaceInfo[]): void {
    const names = new Set(namespaces.map((info) => info.name));
    for (const name of [...this.#namespaces.keys()]) if (!names.has(name)) this.unfollow(name);
    for (const info of namespaces) this.follow(info);
  }

  follow(info: NamespaceInfo): void {
    const known = this.#namespaces.get(info.name);
    if (known) {
      known.info = info; // Its rollout window may have changed.
      return;
    }
    const stop = new AbortController();
    const signal = AbortSignal.any([this.signal, stop.signal]);
    this.#namespaces.set(info.name, { info, stop });
    this.deps.logger.info({ namespace: info.name }, 'follow: watching namespace');
    for (const resource of ['configmaps', 'secrets'] as const) {
      void watchConfig(
        this.deps,
        info.name,
        resource,
        {
          onChange: (change) => this.#onChange(info.name, resource, change),
          onRelisted: () => void this.#resync(info.name),
        },
        signal,
      );
    }
    void this.#resync(info.name);
  }

  unfollow(name: string): void {
    const known = this.#namespaces.get(name);
    if (!known) return;
    known.stop.abort();
    this.#namespaces.delete(name);
    this.deps.logger.info({ namespace: name }, 'follow: stopped watching namespace');
  }

  resyncAll(): void {
    for (const name of this.#namespaces.keys()) void this.#resync(name);
  }

  stop(): void {
    for (const name of [...this.#namespaces.keys()]) this.unfollow(name);
    this.#queue.stop();
  }

  /** Every workload with sources gets a touch request; the touch decides whether it rolls. */
  async #resync(namespace: string): Promise<void> {
    try {
      const workloads = await listReferencing(
        this.deps.api,
        namespace,
        this.deps.kinds,
        this.signal,
      );
      for (const { ref } of workloads) this.#queue.request(ref, 'resync');
      this.deps.logger.debug({ namespace, workloads: workloads.length }, 'follow: resync');
    } catch (error) {
      if (this.signal.aborted) return;
      this.deps.metrics.reconcileError();
      this.deps.logger.warn({ namespace, err: (error as Error).message }, 'follow: resync failed');
    }
  }

  #onChange(namespace: string, resource: ConfigResource, change: ConfigChange): void {
    const changes = this.#changed.get(namespace) ?? new Map<string, SourceChange>();
    this.#changed.set(namespace, changes);
    mergeChange(
      changes,
      formatSource(sourceOfResource(resource, change.name)),
      CHANGE[change.type],
    );
    if (!this.#draining.has(namespace)) void this.#drain(namespace);
  }

  async #drain(namespace: string): Promise<void> {
    this.#draining.add(namespace);
    try {
      while (!this.signal.aborted) {
        const changes = this.#changed.get(namespace);
        if (!changes || changes.size === 0) return;
        this.#changed.delete(namespace);
        await this.#requestReferencing(namespace, changes);
      }
    } finally {
      this.#draining.delete(namespace);
    }
  }

  async #requestReferencing(
    namespace: string,
    changes: ReadonlyMap<string, SourceChange>,
  ): Promise<void> {
    let workloads: Referencing[];
    try {
      workloads = await listReferencing(this.deps.api, namespace, this.deps.kinds, this.signal);
    } catch (error) {
      if (this.signal.aborted) return;
      this.deps.metrics.reconcileError();
      this.deps.logger.warn(
        { namespace, err: (error as Error).message },
        'follow: listing workloads failed; resyncing later',
      );
      await sleep(this.deps.options.retryMs, this.signal);
      void this.#resync(namespace);
      return;
    }
    for (const { ref, sources } of workloads) {
      for (const source of sources) {
        const change = changes.get(source);
        if (change === undefined) continue;
        this.deps.logger.debug(
          { namespace, workload: `${ref.kind.kind}/${ref.name}`, source },
          'follow: change seen',
        );
        this.#queue.request(ref, { source, change });
      }
    }
  }
}
