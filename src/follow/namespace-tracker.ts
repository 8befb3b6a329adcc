// Which namespaces follow mode follows now (docs/design.md §6): the follow namespaces as
// their list-watch shows them, less the excluded ones. Following one starts its watches
// (per namespace) or a one-off list of it (cluster-wide watches dropped its events until
// then); no longer following one stops them and drops what is kept of it.

import type { ListWatchHandler } from '../runtime/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import { decideHandled, standingOf, workloadsModeOf } from '../workload/index.js';
import type { NamespaceInfo, WatchNamespace } from './ports.js';

/** `cluster`: one watch per resource; `namespace`: one per resource and followed namespace. */
export type WatchScope = 'cluster' | 'namespace';

interface Followed {
  info: NamespaceInfo;
  readonly stop: AbortController;
}

export interface NamespaceTrackerDependencies {
  readonly logger: LeveledLog;
  /** Never followed, whatever their label. */
  readonly excluded: ReadonlySet<string>;
  readonly watchScope: WatchScope;
  readonly signal: AbortSignal;
  /** Lists (and with `watch`, watches) every resource in `namespace` (undefined: all of them). */
  watch(namespace: WatchNamespace, watch: boolean, signal: AbortSignal): void;
  /** A namespace no longer followed: nothing of it is kept. */
  dropped(namespace: string): void;
}

export class NamespaceTracker {
  readonly #namespaces = new Map<string, Followed>();
  #clusterWatching = false;

  constructor(private readonly deps: NamespaceTrackerDependencies) {}

  /** What the list-watch loop of the follow namespaces hands on. */
  handler(): ListWatchHandler<NamespaceInfo> {
    return {
      list: () => {
        const listed: NamespaceInfo[] = [];
        return { page: (infos) => listed.push(...infos), end: () => this.followOnly(listed) };
      },
      event: (type, info) => (type === 'DELETED' ? this.unfollow(info.name) : this.follow(info)),
    };
  }

  isFollowed(namespace: string): boolean {
    return this.#namespaces.has(namespace);
  }

  /** The follow namespace's annotations, as last seen. */
  annotations(namespace: string): Readonly<Record<string, string>> {
    return this.#namespaces.get(namespace)?.info.annotations ?? {};
  }

  /**
   * Whether the index keeps a workload: the decision table (workload/handled.ts) under the
   * namespace's labels as last seen. A namespace followed is a follow namespace (the port
   * lists only those) and not excluded (`follow` leaves them out). An opted-out workload is
   * not kept: it is no reader of its sources, so it neither counts toward a large fan-out
   * ("more than N handled workloads", docs/design.md §6) nor is held, as plan counts it.
   */
  handles(namespace: string, annotations: Readonly<Record<string, string>>): boolean {
    const info = this.#namespaces.get(namespace)?.info;
    const standing =
      info === undefined
        ? 'not-opted-in'
        : standingOf('follow', 'follow', workloadsModeOf(info.labels));
    const handled = decideHandled(annotations, standing);
    return handled.handled;
  }

  /** The listed namespaces are exactly the followed ones. */
  followOnly(namespaces: readonly NamespaceInfo[]): void {
    const names = new Set(namespaces.map((info) => info.name));
    for (const name of [...this.#namespaces.keys()]) if (!names.has(name)) this.unfollow(name);
    for (const info of namespaces) this.follow(info);
    if (this.deps.watchScope === 'cluster' && !this.#clusterWatching) {
      // After the first namespace list, so that the cluster-wide lists know what to keep.
      this.#clusterWatching = true;
      this.deps.watch(undefined, true, this.deps.signal);
    }
  }

  follow(info: NamespaceInfo): void {
    if (this.deps.excluded.has(info.name)) return;
    const known = this.#namespaces.get(info.name);
    if (known) {
      const before = workloadsModeOf(known.info.labels);
      known.info = info; // Its rollout window may have changed.
      if (workloadsModeOf(info.labels) === before) return;
      // Which workloads it hands over changed: its part of the index is built again.
      this.unfollow(info.name);
    }
    const stop = new AbortController();
    const signal = AbortSignal.any([this.deps.signal, stop.signal]);
    this.#namespaces.set(info.name, { info, stop });
    this.deps.logger.info({ namespace: info.name }, 'follow: following namespace');
    // Cluster-wide watches dropped its events until now: a one-off list fills it in.
    if (this.deps.watchScope === 'namespace') this.deps.watch(info.name, true, signal);
    else if (this.#clusterWatching) this.deps.watch(info.name, false, signal);
  }

  unfollow(name: string): void {
    const known = this.#namespaces.get(name);
    if (!known) return;
    known.stop.abort();
    this.#namespaces.delete(name);
    this.deps.dropped(name);
    this.deps.logger.info({ namespace: name }, 'follow: stopped following namespace');
  }

  /** Follows nothing any more. */
  stop(): void {
    for (const name of [...this.#namespaces.keys()]) this.unfollow(name);
  }
}
