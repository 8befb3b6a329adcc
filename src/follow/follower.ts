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
// when nothing changed. The parts: namespace-tracker.ts (which namespaces),
// resource-watches.ts (the watches), reference-index.ts (whom), change-router.ts (which way a
// change goes), touch-queue.ts (when), touch.ts (one touch). This file only composes them.

import type { Evaluator, SourceDigester } from '../evaluate/index.js';
import {
  type Clock,
  every,
  type ListWatchHandler,
  listAndWatch,
  systemClock,
} from '../runtime/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import { formatSource } from '../sources/index.js';
import {
  excludedNamespaceSet,
  HANDLED_KINDS,
  type WorkloadKind,
  workloadAnnotations,
} from '../workload/index.js';
import { Approvals } from './approval.js';
import { ChangeRouter } from './change-router.js';
import { Fanouts, heldTouch } from './fanout.js';
import { DEFAULT_FANOUT_OPTIONS, type FanoutOptions } from './fanout-options.js';
import type { FollowMetrics } from './metrics.js';
import { NamespaceTracker, type WatchScope } from './namespace-tracker.js';
import type { FollowApi, NamespaceInfo } from './ports.js';
import { ReferenceIndex } from './reference-index.js';
import { readReferences } from './references.js';
import { ResourceWatches, restartReporter } from './resource-watches.js';
import {
  createCanaryCheck,
  createRollCheck,
  createToucher,
  type IndexUpdates,
  RETRY_MS,
} from './touch.js';
import { TouchQueue, type TouchResult } from './touch-queue.js';

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
  readonly logger: LeveledLog;
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

class Follower {
  readonly #queue: TouchQueue;
  readonly #index = new ReferenceIndex();
  readonly #namespaces: NamespaceTracker;
  readonly #watches: ResourceWatches;
  readonly #fanouts: Fanouts;
  readonly #approvals: Approvals;
  readonly #router: ChangeRouter;

  constructor(
    private readonly deps: FollowerDependencies,
    private readonly signal: AbortSignal,
  ) {
    const kinds = deps.kinds ?? HANDLED_KINDS;
    const clock = deps.clock ?? systemClock;
    this.#queue = new TouchQueue(deps.options, deps.metrics, clock);
    this.#namespaces = this.#newNamespaceTracker();
    this.#watches = this.#newResourceWatches(kinds);
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
      namespaceAnnotations: (name) => this.#namespaces.annotations(name),
      kinds,
      options: deps.options,
      clock,
      signal,
    });
    this.#router = new ChangeRouter({
      logger: deps.logger,
      index: this.#index,
      approvals: this.#approvals,
      fanouts: this.#fanouts,
      queue: this.#queue,
      ready: () => this.#watches.listed && !signal.aborted,
    });
    this.#touchWhenDue(clock);
  }

  /** What the list-watch loop of the follow namespaces hands on. */
  followNamespaces(): ListWatchHandler<NamespaceInfo> {
    return this.#namespaces.handler();
  }

  /** Evaluates what moved since it was last evaluated (change-router.ts). */
  resync(): void {
    if (!this.#router.resync()) return;
    const clock = this.deps.clock ?? systemClock;
    this.deps.metrics.resynced(this.#index.counts(), clock.now());
  }

  stop(): void {
    this.#namespaces.stop();
    this.#fanouts.stop();
    this.#queue.stop();
  }

  /** Following a namespace starts its watches; no longer following it drops what is kept. */
  #newNamespaceTracker(): NamespaceTracker {
    return new NamespaceTracker({
      logger: this.deps.logger,
      excluded: excludedNamespaceSet(this.deps.excludedNamespaces),
      watchScope: this.deps.options.watchScope,
      signal: this.signal,
      watch: (namespace, watch, signal) => this.#watches.watch(namespace, watch, signal),
      dropped: (namespace) => {
        this.#index.dropNamespace(namespace);
        this.#fanouts.dropNamespace(namespace);
      },
    });
  }

  /** What the watches show goes into the index, and a source's change to the router. */
  #newResourceWatches(kinds: readonly WorkloadKind[]): ResourceWatches {
    const { deps } = this;
    return new ResourceWatches({
      ...deps,
      resources: {
        api: deps.api,
        index: this.#index,
        hashKeyId: deps.hashKeyId,
        isFollowed: (namespace) => this.#namespaces.isFollowed(namespace),
        handles: (namespace, annotations) => this.#namespaces.handles(namespace, annotations),
        onSourceChange: (event, readers) => this.#router.onSourceChange(event, readers),
      },
      kinds,
      retryMs: deps.options.retryMs,
      onListEnd: () => this.resync(),
    });
  }

  /** A due touch: none in a namespace no longer followed, none while a fan-out holds it. */
  #touchWhenDue(clock: Clock): void {
    const touch = this.#toucher(clock);
    this.#queue.onDue(async (due) => {
      if (!this.#namespaces.isFollowed(due.ref.namespace)) return NOT_NOW;
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
        if (!references || !this.#namespaces.isFollowed(ref.namespace)) return false;
        if (!this.#namespaces.handles(ref.namespace, workloadAnnotations(object))) {
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
      namespaceAnnotations: (name) => this.#namespaces.annotations(name),
      hold: (ref) => this.#fanouts.holdOf(ref),
      holdRetryMs: this.deps.options.resyncMs,
      retryMs: this.deps.options.retryMs,
      clock,
      signal: this.signal,
    });
  }
}
