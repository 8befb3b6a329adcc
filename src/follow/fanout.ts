// Canary-first fan-out (docs/design.md §6): one change of a source that many workloads
// read is touched on the canaries first; the rest wait until each canary's rollout has
// finished, by its kind's own status, and are then touched at the rate limit. A canary
// that fails halts the fan-out of that change: the rest stay as they are, and people are
// told on the source and on the canary. The next change of the source starts anew.

import { type Clock, sleep } from '../runtime/index.js';
import {
  CANARIES,
  fanoutHaltedNote,
  formatWorkload,
  isObject,
  type RolloutProgress,
  rolloutProgress,
} from '../workload/index.js';
import { EVENT_ACTION, EVENT_REASON } from './events.js';
import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi, WorkloadEvent } from './ports.js';
import type { Reader } from './reference-index.js';
import type { SourceEvent } from './resources.js';
import { inStableOrder } from './stable-order.js';
import type { TouchReason, TouchResult } from './touch-queue.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

export interface FanoutOptions {
  /** Canaries a fan-out touches first (`--follow-canaries`); 0: none. */
  readonly canaries: number;
  /** A canary whose rollout has not finished by then has failed (`--follow-canary-timeout`). */
  readonly canaryTimeoutMs: number;
  /** How often a rolling canary is read (`--follow-canary-poll`). */
  readonly canaryPollMs: number;
}

export const DEFAULT_FANOUT_OPTIONS: FanoutOptions = {
  canaries: 1,
  canaryTimeoutMs: 15 * 60_000,
  canaryPollMs: 5_000,
};

export interface FanoutDependencies {
  readonly api: Pick<FollowApi, 'getWorkload' | 'recordEvent'>;
  readonly metrics: Pick<FollowMetrics, 'fanoutHalted' | 'workloadsHeld'>;
  readonly logger: FollowLogger;
  /** Asks for a touch of `ref` for a change seen at `seenAt` (the queue's request). */
  request(ref: WorkloadRef, reason: TouchReason, seenAt?: number): void;
  readonly options: FanoutOptions;
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

interface Fanout {
  readonly event: SourceEvent;
  /** When the change was seen: the rest's debounce ran out while the canaries rolled. */
  readonly seenAt: number;
  /** Canaries whose rollout has not finished, by workload key. */
  readonly rolling: Map<string, WorkloadRef>;
  /** Canaries being read now (a canary evaluated twice is read once). */
  readonly watching: Set<string>;
  /** The others, in the order they will be touched. */
  readonly rest: readonly WorkloadRef[];
  /** The same, by workload key: what the fan-out holds back. */
  readonly held: ReadonlySet<string>;
  /** Ends the canaries' reads when the fan-out is replaced or stops. */
  readonly stop: AbortController;
  halted: boolean;
}

/** The fan-outs in flight or halted, one per source at most. */
export class Fanouts {
  readonly #bySource = new Map<string, Fanout>();

  constructor(private readonly deps: FanoutDependencies) {}

  /** A source changed: its readers are touched canary-first, or all at once when none can be one. */
  start(event: SourceEvent, readers: readonly Reader[], canaries: number): void {
    const key = sourceKey(event);
    this.#end(this.#bySource.get(key));
    const change = { source: event.source, change: event.change };
    const chosen = chooseCanaries(readers, canaries);
    if (chosen.length === 0 || chosen.length === readers.length) {
      for (const reader of inStableOrder(readers)) this.deps.request(reader.ref, change);
      return;
    }
    const canaryKeys = new Set(chosen.map(({ ref }) => workloadKey(ref)));
    const rest = inStableOrder(readers)
      .map(({ ref }) => ref)
      .filter((ref) => !canaryKeys.has(workloadKey(ref)));
    const fanout: Fanout = {
      event,
      seenAt: this.deps.clock.now(),
      rolling: new Map(chosen.map(({ ref }) => [workloadKey(ref), ref])),
      watching: new Set(),
      rest,
      held: new Set(rest.map(workloadKey)),
      stop: new AbortController(),
      halted: false,
    };
    this.#bySource.set(key, fanout);
    this.#countHeld();
    this.deps.logger.info(
      {
        ...sourceFields(event),
        canaries: chosen.map(({ ref }) => formatWorkload(ref.kind, ref.name)),
      },
      'follow: fan-out starts with its canaries',
    );
    for (const { ref } of chosen) this.deps.request(ref, change);
  }

  /** A touch ran: a canary's touch done (or not needed) starts the watch of its rollout. */
  settled(ref: WorkloadRef, result: TouchResult): void {
    if (result.status === 'retry') return;
    const key = workloadKey(ref);
    for (const fanout of this.#bySource.values()) {
      if (fanout.halted || !fanout.rolling.has(key) || fanout.watching.has(key)) continue;
      fanout.watching.add(key);
      void this.#watchCanary(fanout, ref);
    }
  }

  /** Whether a fan-out holds `ref` back: the resync must not touch it. */
  holds(ref: WorkloadRef): boolean {
    const key = workloadKey(ref);
    for (const fanout of this.#bySource.values()) if (fanout.held.has(key)) return true;
    return false;
  }

  stop(): void {
    for (const fanout of this.#bySource.values()) fanout.stop.abort();
    this.#bySource.clear();
    this.#countHeld();
  }

  /** Reads the canary until its rollout finishes, fails or outlives the timeout. */
  async #watchCanary(fanout: Fanout, canary: WorkloadRef): Promise<void> {
    const { options, clock } = this.deps;
    // Aborted when the fan-out is replaced or halts, and by stop() when the lead is lost.
    const { signal } = fanout.stop;
    const deadline = clock.now() + options.canaryTimeoutMs;
    let uid = '';
    for (;;) {
      await sleep(options.canaryPollMs, signal, clock);
      if (signal.aborted) return;
      const read = await this.#read(canary, signal);
      if (signal.aborted) return;
      uid = read.uid ?? uid;
      const { progress } = read;
      if (progress.state === 'complete') return this.#finished(fanout, canary);
      if (progress.state === 'failed') return this.#halt(fanout, { canary, uid }, progress.detail);
      if (clock.now() >= deadline) {
        const why = `not finished within ${spoken(options.canaryTimeoutMs)}: ${progress.detail}`;
        return this.#halt(fanout, { canary, uid }, why);
      }
    }
  }

  /** The canary's rollout now; a read that fails counts as still progressing (the timeout decides). */
  async #read(
    ref: WorkloadRef,
    signal: AbortSignal,
  ): Promise<{ progress: RolloutProgress; uid?: string }> {
    try {
      const object = await this.deps.api.getWorkload(ref.namespace, ref.kind, ref.name, signal);
      // A canary deleted meanwhile has nothing left to prove.
      if (!isObject(object)) return { progress: { state: 'complete' } };
      const uid = isObject(object.metadata) ? object.metadata.uid : undefined;
      return {
        progress: rolloutProgress(object, ref.kind),
        ...(typeof uid === 'string' ? { uid } : {}),
      };
    } catch (error) {
      return {
        progress: { state: 'progressing', detail: `not read: ${(error as Error).message}` },
      };
    }
  }

  #finished(fanout: Fanout, canary: WorkloadRef): void {
    fanout.rolling.delete(workloadKey(canary));
    if (fanout.rolling.size > 0 || this.#bySource.get(sourceKey(fanout.event)) !== fanout) return;
    this.#bySource.delete(sourceKey(fanout.event));
    this.#countHeld();
    this.deps.logger.info(
      { ...sourceFields(fanout.event), rest: fanout.rest.length },
      'follow: canaries finished; fanning out',
    );
    const change = { source: fanout.event.source, change: fanout.event.change };
    for (const ref of fanout.rest) this.deps.request(ref, change, fanout.seenAt);
  }

  async #halt(
    fanout: Fanout,
    { canary, uid }: { canary: WorkloadRef; uid: string },
    why: string,
  ): Promise<void> {
    const { metrics, logger, api, signal } = this.deps;
    fanout.halted = true;
    fanout.stop.abort();
    metrics.fanoutHalted();
    const { event } = fanout;
    const halt = {
      canary: formatWorkload(canary.kind, canary.name),
      source: event.source,
      resourceVersion: event.resourceVersion ?? 'deleted',
    };
    const note = fanoutHaltedNote(halt, why, fanout.rest.length);
    logger.warn(
      { ...sourceFields(event), canary: formatWorkload(canary.kind, canary.name), why },
      'follow: fan-out halted',
    );
    for (const halted of haltedEvents(fanout.event, { canary, uid }, note)) {
      await api
        .recordEvent(halted, signal)
        .catch((error: Error) =>
          logger.warn({ ...sourceFields(event), err: error.message }, 'follow: event not recorded'),
        );
    }
  }

  #end(fanout: Fanout | undefined): void {
    if (!fanout) return;
    fanout.stop.abort();
    this.#bySource.delete(sourceKey(fanout.event));
    this.#countHeld();
  }

  #countHeld(): void {
    let held = 0;
    for (const fanout of this.#bySource.values()) held += fanout.held.size;
    this.deps.metrics.workloadsHeld(held);
  }
}

/**
 * How many canaries a fan-out in a namespace touches first: its `confighash.dev/canaries`
 * annotation (a whole number; 0 turns them off), else `fallback` (`--follow-canaries`).
 */
export function canaryCount(
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
  fallback: number,
): number {
  const text = namespaceAnnotations?.[CANARIES];
  return text !== undefined && /^\d{1,4}$/.test(text) ? Number(text) : fallback;
}

/** The annotated canaries among `readers` that can be watched, else the first in stable order. */
export function chooseCanaries(readers: readonly Reader[], count: number): Reader[] {
  if (count <= 0 || readers.length <= 1) return [];
  const observable = inStableOrder(readers).filter((reader) => reader.observable);
  const annotated = observable.filter((reader) => reader.canary);
  return (annotated.length > 0 ? annotated : observable).slice(0, count);
}

/** The Warning on the source object and on the canary. */
function haltedEvents(
  event: SourceEvent,
  { canary, uid }: { canary: WorkloadRef; uid: string },
  note: string,
): WorkloadEvent[] {
  const common = {
    type: 'Warning',
    reason: EVENT_REASON.halted,
    action: EVENT_ACTION.fanout,
    note,
  } as const;
  return [
    {
      ...common,
      kind: { group: '', version: 'v1', kind: event.object.kind },
      namespace: event.namespace,
      name: event.object.name,
      uid: event.uid ?? '',
    },
    { ...common, kind: canary.kind, namespace: canary.namespace, name: canary.name, uid },
  ];
}

/** `15 min`, or `20 s` for what is not whole minutes. */
function spoken(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

function sourceKey(event: Pick<SourceEvent, 'namespace' | 'source'>): string {
  return `${event.namespace}/${event.source}`;
}

function sourceFields(event: SourceEvent) {
  return {
    namespace: event.namespace,
    source: event.source,
    resourceVersion: event.resourceVersion,
  };
}
