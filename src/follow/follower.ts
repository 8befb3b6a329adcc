// Follow mode while this replica leads (docs/design.md §6): one list-then-watch per
// resource — metadata-only ConfigMaps and Secrets, each workload kind, and the follow
// namespaces — cluster-wide (`--watch-scope=cluster`, a handful of watches whatever
// the number of namespaces) or per followed namespace (`namespace`, for RBAC granted
// per namespace). Events of namespaces not followed are dropped here. What they show
// goes into the reference index (which workload reads which source, at which
// version), never a cache of objects: a source event asks the index whom to touch,
// with no LIST. The resync is level-based against the index: it asks for an
// evaluation of every workload whose sources moved since this leader last evaluated
// it, or that it never evaluated — everything once after taking the lead, nothing
// when nothing changed. The parts: runtime's listAndWatch (the watches), reference-index.ts
// (whom), touch-queue.ts (when), touch.ts (one touch). This file only composes them.

import type { Evaluator, SourceDigester } from '../evaluate/index.js';
import {
  type Clock,
  every,
  type ListWatchHandler,
  listAndWatch,
  Slots,
  systemClock,
  type WatchRestart,
} from '../runtime/index.js';
import { formatSource, parseSourceList } from '../sources/index.js';
import {
  decideHandled,
  excludedNamespaceSet,
  HANDLED_KINDS,
  standingOf,
  type WorkloadKind,
  workloadAnnotations,
  workloadsModeOf,
} from '../workload/index.js';
import { Approvals, type ApprovalVerdict } from './approval.js';
import { Fanouts, heldTouch } from './fanout.js';
import { DEFAULT_FANOUT_OPTIONS, type FanoutOptions } from './fanout-options.js';
import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi, NamespaceInfo, WatchNamespace } from './ports.js';
import { type Reader, ReferenceIndex } from './reference-index.js';
import { readReferences } from './references.js';
import {
  configResource,
  type ResourceContext,
  type SourceEvent,
  workloadResource,
} from './resources.js';
import {
  createCanaryCheck,
  createRollCheck,
  createToucher,
  type IndexUpdates,
  RETRY_MS,
} from './touch.js';
import { TouchQueue, type TouchResult } from './touch-queue.js';

/** `cluster`: one watch per resource; `namespace`: one per resource and followed namespace. */
type WatchScope = 'cluster' | 'namespace';

export interface FollowOptions extends FanoutOptions {
  readonly resyncMs: number;
  readonly debounceMs: number;
  readonly minIntervalMs: number;
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Evaluations per second of a resync (all of them once after taking the lead). */
  readonly evaluatePerSecond: number;
  readonly watchScope: WatchScope;
  /** A touch or listing that failed (a request timed out, say) is tried again after this. */
  readonly retryMs: number;
  /** A change read by more workloads waits for approval (`--follow-max-fanout`); 0: never. */
  readonly maxFanout: number;
}

export const DEFAULT_FOLLOW_OPTIONS: FollowOptions = {
  resyncMs: 10 * 60_000,
  debounceMs: 10_000,
  minIntervalMs: 60_000,
  ratePerSecond: 5,
  burst: 20,
  evaluatePerSecond: 20,
  watchScope: 'cluster',
  retryMs: RETRY_MS,
  maxFanout: 0,
  ...DEFAULT_FANOUT_OPTIONS,
};

export interface FollowerDependencies {
  readonly api: FollowApi;
  readonly evaluate: Evaluator;
  /** Names a source's content for approval above a size (the same hash key as `evaluate`). */
  readonly digestSource: SourceDigester;
  /**
   * hashKeyId of the key `evaluate` hashes with: a workload's `hashed-versions` count as
   * evaluated only when a hash of that key wrote them (docs/design.md §6).
   */
  readonly hashKeyId: string;
  readonly metrics: FollowMetrics;
  readonly logger: FollowLogger;
  readonly options: FollowOptions;
  /** The kinds listed and touched (default: the apps/v1 ones; `--kind` adds more). */
  readonly kinds?: readonly WorkloadKind[];
  /** Besides ALWAYS_EXCLUDED: never followed, whatever their label (the webhook never hashes there). */
  readonly excludedNamespaces?: readonly string[];
  /** Every timer of follow mode runs on it (default: the system's). */
  readonly clock?: Clock;
}

/** A touch due in a namespace no longer followed, or held for approval: nothing to do now. */
const NOT_NOW: TouchResult = { status: 'done' };

/** Runs until `signal` aborts (leadership lost or shutdown); then stops at once. */
export async function runFollower(deps: FollowerDependencies, signal: AbortSignal): Promise<void> {
  const follower = new Follower(deps, signal);
  deps.logger.info({ ...deps.options }, 'follow: started');
  const stopResync = every(deps.clock ?? systemClock, deps.options.resyncMs, () =>
    follower.resync(),
  );
  void listAndWatch(
    deps.api.followNamespaces(follower.followNamespaces()),
    {
      onRestart: restartReporter(deps, {}, 'follow: namespace watch failed; retrying'),
      ...(deps.clock ? { clock: deps.clock } : {}),
    },
    signal,
  );
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  stopResync();
  follower.stop();
  deps.logger.info({}, 'follow: stopped');
}

/** Counts each watch restart; says why one failed. */
function restartReporter(
  { metrics, logger }: Pick<FollowerDependencies, 'metrics' | 'logger'>,
  what: Readonly<Record<string, string>>,
  message: string,
): (reason: WatchRestart, error?: Error) => void {
  return (reason, error) => {
    metrics.watchRestart(reason);
    if (error) logger.warn({ ...what, err: error.message }, message);
  };
}

/** Lists in flight at once (docs/design.md §6): a start or a relist of many resources queues. */
const LIST_SLOTS = 4;

interface Followed {
  info: NamespaceInfo;
  readonly stop: AbortController;
}

class Follower {
  readonly #queue: TouchQueue;
  readonly #index = new ReferenceIndex();
  readonly #namespaces = new Map<string, Followed>();
  readonly #listSlots = new Slots(LIST_SLOTS);
  readonly #kinds: readonly WorkloadKind[];
  readonly #excluded: ReadonlySet<string>;
  /**
   * Resources whose first list has neither completed nor failed: the resync waits for a
   * whole index, but not for a list that fails (a 403, say) — that one would hold every
   * other namespace's evaluations back for as long as it keeps failing.
   */
  #unlisted = 0;
  #clusterWatching = false;
  readonly #resources: ResourceContext;
  readonly #fanouts: Fanouts;
  readonly #approvals: Approvals;

  constructor(
    private readonly deps: FollowerDependencies,
    private readonly signal: AbortSignal,
  ) {
    this.#kinds = deps.kinds ?? HANDLED_KINDS;
    this.#excluded = excludedNamespaceSet(deps.excludedNamespaces);
    const clock = deps.clock ?? systemClock;
    this.#queue = new TouchQueue(deps.options, deps.metrics, clock);
    this.#resources = {
      api: deps.api,
      index: this.#index,
      hashKeyId: deps.hashKeyId,
      isFollowed: (namespace) => this.#namespaces.has(namespace),
      handles: (namespace, annotations) => this.#handles(namespace, annotations),
      onSourceChange: (event, readers) => this.#onSourceChange(event, readers),
    };
    const evaluation = {
      ...deps,
      pacing: this.#queue.pacing,
      index: this.#indexUpdates(),
      clock,
      signal,
    };
    this.#approvals = new Approvals({
      ...deps,
      maxFanout: deps.options.maxFanout,
      wouldRoll: createRollCheck(evaluation),
      index: this.#index,
      signal,
    });
    this.#fanouts = new Fanouts({
      ...deps,
      index: this.#index,
      approvals: this.#approvals,
      fitness: createCanaryCheck(evaluation),
      request: (ref, reason, seenAt) => this.#queue.request(ref, reason, seenAt),
      namespaceAnnotations: (name) => this.#namespaces.get(name)?.info.annotations ?? {},
      kinds: this.#kinds,
      options: deps.options,
      clock,
      signal,
    });
    const touch = this.#toucher(clock);
    this.#queue.onDue(async (due) => {
      if (!this.#namespaces.has(due.ref.namespace)) return NOT_NOW;
      const hold = this.#fanouts.holdOf(due.ref);
      if (hold) return heldTouch(hold, clock.now());
      const result = await touch(due);
      this.#fanouts.settled(due.ref, result);
      return result;
    });
  }

  /** What a workload read for an evaluation tells the index. */
  #indexUpdates(): IndexUpdates {
    return {
      read: (ref, object) => {
        const references = readReferences(object, ref.kind, this.deps.hashKeyId);
        if (!references || !this.#namespaces.has(ref.namespace)) return false;
        if (!this.#handles(ref.namespace, workloadAnnotations(object))) {
          this.#index.deleteWorkload(ref);
          return false;
        }
        this.#index.putWorkload(references);
        this.#index.evaluated(ref);
        return true;
      },
      gone: (ref) => this.#index.deleteWorkload(ref),
      ahead: (namespace, evaluation) =>
        evaluation.lookups.some(
          ({ ref, result }) =>
            result.status === 'found' &&
            !this.#index.shows(namespace, formatSource(ref), result.resourceVersion),
        ),
    };
  }

  /** One due touch; what it reads corrects the index. */
  #toucher(clock: Clock): ReturnType<typeof createToucher> {
    return createToucher({
      ...this.deps,
      pacing: this.#queue.pacing,
      index: this.#indexUpdates(),
      namespaceAnnotations: (name) => this.#namespaces.get(name)?.info.annotations ?? {},
      hold: (ref) => this.#fanouts.holdOf(ref),
      holdRetryMs: this.deps.options.resyncMs,
      retryMs: this.deps.options.retryMs,
      clock,
      signal: this.signal,
    });
  }

  /** A source changed: its readers are touched, canary-first (fanout.ts), once approved when many. */
  #onSourceChange(event: SourceEvent, readers: readonly Reader[]): void {
    for (const { ref } of readers) {
      const workload = `${ref.kind.kind}/${ref.name}`;
      this.deps.logger.debug(
        { namespace: ref.namespace, workload, source: event.source },
        'follow: change seen',
      );
    }
    if (readers.length === 0) return;
    if (this.#approvals.isLarge(readers.length)) this.#checkApproval(event);
    else if (this.#fanouts.takes(event.namespace, event.source, readers.length)) {
      this.#fanouts.observe(event);
    } else {
      const change = { source: event.source, change: event.change };
      for (const { ref } of readers) this.#queue.request(ref, change);
    }
  }

  /** A large source's content is checked (approval.ts) before any of its readers is touched. */
  #checkApproval(event: SourceEvent): void {
    this.#approvals.check(event, (verdict: ApprovalVerdict) => {
      if (verdict === 'fan-out') this.#fanouts.observe(event);
      else if (verdict === 'nothing-rolls') this.resync(); // What it held meanwhile.
    });
  }

  /** What the list-watch loop of the follow namespaces hands on. */
  followNamespaces(): ListWatchHandler<NamespaceInfo> {
    return {
      list: () => {
        const listed: NamespaceInfo[] = [];
        return { page: (infos) => listed.push(...infos), end: () => this.followOnly(listed) };
      },
      event: (type, info) => (type === 'DELETED' ? this.unfollow(info.name) : this.follow(info)),
    };
  }

  /** The listed namespaces are exactly the followed ones. */
  followOnly(namespaces: readonly NamespaceInfo[]): void {
    const names = new Set(namespaces.map((info) => info.name));
    for (const name of [...this.#namespaces.keys()]) if (!names.has(name)) this.unfollow(name);
    for (const info of namespaces) this.follow(info);
    if (this.deps.options.watchScope === 'cluster' && !this.#clusterWatching) {
      // After the first namespace list, so that the cluster-wide lists know what to keep.
      this.#clusterWatching = true;
      this.#watch(undefined, true, this.signal);
    }
  }

  follow(info: NamespaceInfo): void {
    if (this.#excluded.has(info.name)) return;
    const known = this.#namespaces.get(info.name);
    if (known) {
      const before = workloadsModeOf(known.info.labels);
      known.info = info; // Its rollout window may have changed.
      if (workloadsModeOf(info.labels) === before) return;
      // Which workloads it hands over changed: its part of the index is built again.
      this.unfollow(info.name);
    }
    const stop = new AbortController();
    const signal = AbortSignal.any([this.signal, stop.signal]);
    this.#namespaces.set(info.name, { info, stop });
    this.deps.logger.info({ namespace: info.name }, 'follow: following namespace');
    // Cluster-wide watches dropped its events until now: a one-off list fills it in.
    if (this.deps.options.watchScope === 'namespace') this.#watch(info.name, true, signal);
    else if (this.#clusterWatching) this.#watch(info.name, false, signal);
  }

  unfollow(name: string): void {
    const known = this.#namespaces.get(name);
    if (!known) return;
    known.stop.abort();
    this.#namespaces.delete(name);
    this.#index.dropNamespace(name);
    this.#fanouts.dropNamespace(name);
    this.deps.logger.info({ namespace: name }, 'follow: stopped following namespace');
  }

  /**
   * Whether the index keeps a workload: the decision table (workload/handled.ts) under the
   * namespace's labels as last seen. A namespace followed is a follow namespace (the port
   * lists only those) and not excluded (`follow` leaves them out). An opted-out workload is
   * kept: a touch of it decides nothing to do (reconcile.ts), and it counts among its
   * sources' readers.
   */
  #handles(namespace: string, annotations: Readonly<Record<string, string>>): boolean {
    const info = this.#namespaces.get(namespace)?.info;
    const standing =
      info === undefined
        ? 'not-opted-in'
        : standingOf('follow', 'follow', workloadsModeOf(info.labels));
    const handled = decideHandled(annotations, standing);
    return handled.handled || handled.reason === 'opted-out';
  }

  /**
   * An evaluation of every workload whose sources moved since its last one, or never
   * evaluated; a moved source that more than one of them reads is read first, as if its
   * watch event came now (a change no leader saw goes canary-first too).
   */
  resync(): void {
    if (this.#unlisted > 0 || this.signal.aborted) return;
    this.#fanouts.observeRecorded(this.#index.recordedSources());
    const stale = this.#index.stale();
    for (const ref of stale) {
      const held = this.#approvals.holding(ref);
      // A change no leader saw, of a large source: checked as if its watch event came now.
      for (const source of held) this.#checkApproval(this.#resyncEvent(ref.namespace, source));
      if (held.length > 0) continue;
      const unread = this.#index.movedSources(ref).filter((source) => {
        const readers = this.#index.readerCount(ref.namespace, source);
        return this.#fanouts.unread(ref.namespace, source, readers);
      });
      for (const source of unread) this.#fanouts.observe(this.#resyncEvent(ref.namespace, source));
      if (unread.length === 0 && !this.#fanouts.holdOf(ref)) {
        this.#queue.request(ref, 'resync');
      }
    }
    this.deps.logger.debug({ stale: stale.length, ...this.#index.counts() }, 'follow: resync');
  }

  #resyncEvent(namespace: string, source: string): SourceEvent {
    const object = parseSourceList(source).refs[0]!; // The index holds formatted sources only.
    const resourceVersion = this.#index.versionOf(namespace, source);
    return { namespace, object, source, change: 'changed', resourceVersion };
  }

  stop(): void {
    for (const name of [...this.#namespaces.keys()]) this.unfollow(name);
    this.#fanouts.stop();
    this.#queue.stop();
  }

  /** Lists (and with `watch`, watches) every resource in `namespace` (undefined: all of them). */
  #watch(namespace: WatchNamespace, watch: boolean, signal: AbortSignal): void {
    const resources = [
      ...(['configmaps', 'secrets'] as const).map((resource) =>
        configResource(this.#resources, namespace, resource),
      ),
      ...this.#kinds.map((kind) => workloadResource(this.#resources, namespace, kind)),
    ];
    for (const resource of resources) {
      this.#unlisted++;
      let first = true;
      const listed = () => {
        if (first) this.#unlisted--;
        first = false;
      };
      // A CRD installed after the start is noticed within a retry, not a resync period.
      const options = {
        watch,
        absentRetryMs: this.deps.options.retryMs,
        listSlots: this.#listSlots,
        onListEnd: () => {
          listed();
          this.resync();
        },
        onRestart: restartReporter(this.deps, resource.what, 'follow: watch failed; retrying'),
        ...(this.deps.clock ? { clock: this.deps.clock } : {}),
      };
      void listAndWatch(resource, options, signal).finally(listed);
    }
  }
}
