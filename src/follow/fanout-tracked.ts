// One source whose change goes, or went, canary-first (docs/design.md §6 "The state of a
// change"): what the parts of a fan-out (fanout.ts) keep of it and share, and the small
// readings of it they all make.

import type { SourceDigester } from '../evaluate/index.js';
import type { Clock } from '../runtime/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import { type NamedSource, parseSourceList } from '../sources/index.js';
import {
  type FanoutRecord,
  formatFanoutRecord,
  formatWorkload,
  type RecordedWorkload,
  readFanoutRecord,
  sameWorkload,
  type WorkloadKind,
} from '../workload/index.js';
import type { Approvals } from './approval.js';
import { canaryCount, canaryWindowOf, type FanoutOptions } from './fanout-options.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi } from './ports.js';
import type { ReferenceIndex } from './reference-index.js';
import type { SourceChange, TouchReason } from './touch-queue.js';
import type { WorkloadRef } from './workload-ref.js';

/** Whether a reader can test a change: it is touched, rolls, and its rollout can be watched. */
export type CanaryFitness =
  | { readonly fit: true }
  | {
      readonly fit: false;
      /** It would roll, but cannot tell whether the change works (no pods, no status). */
      readonly rolls: boolean;
      readonly why: string;
      /** Never hashed: its touch adopts it without a restart, so it needs no canary. */
      readonly adopt?: boolean;
    };

export interface FanoutDependencies {
  readonly api: Pick<FollowApi, 'getWorkload' | 'recordEvent' | 'writeFanoutRecord' | 'listPods'>;
  readonly digestSource: SourceDigester;
  readonly index: Pick<
    ReferenceIndex,
    'readersOf' | 'sourcesOf' | 'recordOf' | 'advanceSource' | 'versionOf'
  >;
  readonly approvals: Pick<Approvals, 'holding'>;
  /** Reads and evaluates `ref`, never touching it; throws when it cannot be read. */
  fitness(ref: WorkloadRef): Promise<CanaryFitness>;
  /** Asks for a touch of `ref` for a change seen at `seenAt` (the queue's request). */
  request(ref: WorkloadRef, reason: TouchReason, seenAt?: number): void;
  /** The follow namespace's annotations, as last seen. */
  namespaceAnnotations(namespace: string): Readonly<Record<string, string>>;
  readonly kinds: readonly WorkloadKind[];
  readonly metrics: Pick<
    FollowMetrics,
    'fanoutHalted' | 'workloadsHeld' | 'workloadsBehindCanary' | 'fanoutsHaltedNow'
  >;
  readonly logger: LeveledLog;
  readonly options: FanoutOptions & { readonly retryMs: number };
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

/** Moves a record on from `from` (if it still stands) to `to`, in the source's chain. */
export type MoveRecord = (tracked: Tracked, from: FanoutRecord, to: FanoutRecord) => void;

/** One source whose change goes, or went, canary-first. */
export interface Tracked {
  readonly namespace: string;
  readonly object: NamedSource;
  readonly source: string;
  uid: string;
  /** Its resourceVersion as last read or written: a write is made against it. */
  version: string;
  record: FanoutRecord | undefined;
  /** A read is due or running: until it decides, every reader is held. */
  reading: boolean;
  /** The source changed again while it was being read. */
  again: boolean;
  /** What its last event said happened, for the readers' touches. */
  change: SourceChange;
  /** When this leader first saw the change: the rest's debounce runs from then. */
  seenAt: number;
  /** The one thing it does at a time (read, decide, write), in order. */
  chain: Promise<void>;
  /** The running phase's work, and the record it runs for. */
  activity: { readonly record: FanoutRecord; readonly stop: AbortController } | undefined;
  /** Canaries whose window passed, by workload key. */
  readonly passed: Set<string>;
  /** Readers whose touch of the drain has not come back, by workload key. */
  draining: Set<string> | undefined;
  /** Why a canary's touch last waited (a denial, the window, the minimum interval). */
  deferral: string | undefined;
}

export function newTracked(
  change: { namespace: string; object: NamedSource; source: string },
  seenAt: number,
): Tracked {
  return {
    namespace: change.namespace,
    object: change.object,
    source: change.source,
    uid: '',
    version: '',
    record: undefined,
    reading: false,
    again: false,
    change: 'changed',
    seenAt,
    chain: Promise.resolve(),
    activity: undefined,
    passed: new Set(),
    draining: undefined,
    deferral: undefined,
  };
}

/** Sets the gauges of what fan-outs hold now: held by a halt, behind a canary, halted. */
export function countFanouts(
  all: Iterable<Tracked>,
  { index, metrics }: Pick<FanoutDependencies, 'index' | 'metrics'>,
): void {
  let held = 0;
  let behind = 0;
  let haltedNow = 0;
  for (const tracked of all) {
    const readers = index.readersOf(tracked.namespace, tracked.source).length;
    const phase = tracked.record?.phase;
    if (phase === 'halted') {
      haltedNow++;
      held += readers;
    } else if (phase === 'canary' || tracked.reading) {
      behind += Math.max(0, readers - (tracked.record?.canaries?.length ?? 0));
    }
  }
  metrics.workloadsHeld(held);
  metrics.workloadsBehindCanary(behind);
  metrics.fanoutsHaltedNow(haltedNow);
}

/** The workload a record names, when its kind is followed here. */
export function refOf(
  kinds: readonly WorkloadKind[],
  namespace: string,
  workload: RecordedWorkload,
): WorkloadRef | undefined {
  const kind = kinds.find((one) => one.group === workload.group && one.kind === workload.kind);
  return kind ? { kind, namespace, name: workload.name } : undefined;
}

export function canariesIn(deps: FanoutDependencies, namespace: string): number {
  return canaryCount(deps.namespaceAnnotations(namespace), deps.options.canaries);
}

export function canaryWindowIn(deps: FanoutDependencies, namespace: string): number {
  return canaryWindowOf(deps.namespaceAnnotations(namespace), deps.options.canaryWindowMs);
}

/** Now, as a record writes it. */
export function recordTime(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

export function sameRecord(a: FanoutRecord, b: FanoutRecord): boolean {
  return formatFanoutRecord(a) === formatFanoutRecord(b);
}

/** Whether a record (as an annotation holds it) is of a change not yet rolled everywhere. */
export function unfinished(raw: string | undefined): boolean {
  const phase = readFanoutRecord(raw)?.phase;
  return phase === 'canary' || phase === 'halted' || phase === 'draining';
}

/** Whether `ref` is a canary of `record` whose touch was sent: it has that change. */
export function wasSent(record: FanoutRecord | undefined, ref: WorkloadRef): boolean {
  return (record?.canaries ?? []).some((one) => one.sent && sameWorkload(one, recorded(ref)));
}

export function recorded(ref: WorkloadRef): RecordedWorkload {
  return { group: ref.kind.group, kind: ref.kind.kind, name: ref.name };
}

export function display(workload: RecordedWorkload): string {
  return formatWorkload(workload, workload.name);
}

export function namedSource(source: string): NamedSource | undefined {
  return parseSourceList(source).refs[0];
}

/** `15 min`, or `20 s` for what is not whole minutes. */
export function spoken(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

export function sourceKey(namespace: string, source: string): string {
  return `${namespace}/${source}`;
}

export function fields(tracked: Tracked) {
  return { namespace: tracked.namespace, source: tracked.source, resourceVersion: tracked.version };
}
