// Canary-first fan-out (docs/design.md §6 "The state of a change"): the driver of the state
// machine in change-state.ts. A change of a source read by more than one workload is read
// (its content's digest, the record kept on it, the control people wrote), decided on, and
// the record written back on the source before anything else moves, so a new leader, a
// restarted pod or a second replica continues where this one stopped. Each phase's work —
// sending the canaries' touches, watching their pods and status for the canary window,
// draining the rest, saying a halt again while it lasts — runs while its record stands.
// Every touch of every path asks `holdOf` first: the one answer to "may it be touched now?".

import type { SourceDigest, SourceDigester } from '../evaluate/index.js';
import { type Clock, sleep } from '../runtime/index.js';
import { type NamedSource, parseSourceList } from '../sources/index.js';
import {
  CANARIES,
  CANARY_WINDOW,
  type FanoutRecord,
  fanoutHaltedNote,
  fanoutHoldOf,
  formatFanoutRecord,
  formatWorkload,
  isObject,
  podFailure,
  podSelectorOf,
  type RecordedWorkload,
  readFanoutControl,
  readFanoutRecord,
  rolloutProgress,
  sameWorkload,
  type WorkloadKind,
} from '../workload/index.js';
import type { Approvals } from './approval.js';
import { type ChangeBase, decide, done, draining, halted, sent, testing } from './change-state.js';
import { EVENT_ACTION, EVENT_REASON } from './events.js';
import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi, WorkloadEvent } from './ports.js';
import type { Reader, ReferenceIndex } from './reference-index.js';
import { inStableOrder } from './stable-order.js';
import type { SourceChange, TouchReason, TouchResult } from './touch-queue.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

export interface FanoutOptions {
  /** Canaries a fan-out touches first (`--follow-canaries`); 0: none. */
  readonly canaries: number;
  /**
   * How long a canary is watched from its touch, and how long its touch may wait to be sent
   * (`--follow-canary-window`; a namespace's `confighash.dev/canary-window` says otherwise).
   */
  readonly canaryWindowMs: number;
  /** How often a rolling canary is read (`--follow-canary-poll`). */
  readonly canaryPollMs: number;
}

export const DEFAULT_FANOUT_OPTIONS: FanoutOptions = {
  canaries: 1,
  canaryWindowMs: 5 * 60_000,
  canaryPollMs: 5_000,
};

/** A halt is said again this often while it lasts, within the Event TTL (1 h by default). */
export const HALT_REPEAT_MS = 30 * 60_000;
/** Pods created this long before the canary's touch was sent still count as its new revision. */
const CLOCK_SKEW_MS = 5_000;

/** Why a workload may not be touched now, and when to ask again. */
export interface Hold {
  readonly why: string;
  /** `read`: in a moment, once a source is read; `released`: the fan-out asks again itself. */
  readonly until: 'read' | 'released';
}

/** A touch held by a source being read is asked again after this. */
const READ_RETRY_MS = 1_000;

/**
 * What a held touch comes to: tried again in a moment when a source is only being read; else
 * nothing now, since what holds it asks again when it ends (a drain, an approval, the resync).
 */
export function heldTouch(hold: Hold, now: number): TouchResult {
  return hold.until === 'read'
    ? { status: 'retry', at: now + READ_RETRY_MS, reason: 'source-read' }
    : { status: 'done' };
}

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

interface FanoutDependencies {
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
  readonly logger: FollowLogger;
  readonly options: FanoutOptions & { readonly retryMs: number };
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

/** One source whose change goes, or went, canary-first. */
interface Tracked {
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

export class Fanouts {
  readonly #tracked = new Map<string, Tracked>();

  constructor(private readonly deps: FanoutDependencies) {}

  /** Whether a change of a source with these readers is read here before any is touched. */
  takes(namespace: string, source: string, readers: number): boolean {
    if (this.#tracked.has(sourceKey(namespace, source))) return true;
    if (this.deps.index.recordOf(namespace, source) !== undefined) return true;
    return readers > 1 && this.#canaryCount(namespace) > 0;
  }

  /**
   * Whether the resync must read a source that moved before evaluating its readers: one this
   * leader has not read at its version now (a change no event carried, or taking the lead).
   */
  unread(namespace: string, source: string, readers: number): boolean {
    const tracked = this.#tracked.get(sourceKey(namespace, source));
    if (!tracked) return this.takes(namespace, source, readers);
    return tracked.reading || tracked.version !== this.deps.index.versionOf(namespace, source);
  }

  /** A source changed (or its record must be read again): its readers wait for the read. */
  observe(change: {
    readonly namespace: string;
    readonly object: NamedSource;
    readonly source: string;
    readonly change?: SourceChange;
  }): void {
    const tracked = this.#track(change);
    if (change.change) tracked.change = change.change;
    if (tracked.reading) {
      tracked.again = true; // What the read in flight has not seen: read once more after it.
      return;
    }
    tracked.reading = true;
    this.#count();
    this.#then(tracked, () => this.#read(tracked));
  }

  /** Taking the lead: every record of a change not yet done is read and carried on. */
  observeRecorded(recorded: readonly { namespace: string; source: string }[]): void {
    for (const { namespace, source } of recorded) {
      if (this.#tracked.has(sourceKey(namespace, source))) continue;
      if (!unfinished(this.deps.index.recordOf(namespace, source))) continue;
      const object = namedSource(source);
      if (object) this.observe({ namespace, object, source });
    }
  }

  /**
   * The one answer to "may `ref` be touched now?": undefined, or why not — a halt, a canary it
   * waits behind, an approval (the fan-out asks again once that ends), or a source being read
   * for its fan-out (asked again in a moment).
   */
  holdOf(ref: WorkloadRef): Hold | undefined {
    if (this.deps.approvals.holding(ref).length > 0) {
      return { why: 'awaiting approval', until: 'released' };
    }
    const reader = recorded(ref);
    for (const source of this.deps.index.sourcesOf(ref)) {
      const tracked = this.#tracked.get(sourceKey(ref.namespace, source));
      // A record no read of this leader has confirmed yet (taking the lead) holds as if read.
      const raw = tracked ? undefined : this.deps.index.recordOf(ref.namespace, source);
      if (tracked?.reading) return { why: `${source} being read`, until: 'read' };
      const hold = fanoutHoldOf(tracked ? tracked.record : readFanoutRecord(raw), reader);
      if (hold) return { why: `${hold} ${source}`, until: tracked ? 'released' : 'read' };
    }
    return undefined;
  }

  /** A touch came back: a canary's touch sent starts its window; a drain counts its touches. */
  settled(ref: WorkloadRef, result: TouchResult): void {
    const key = workloadKey(ref);
    for (const tracked of this.#tracked.values()) {
      const { record } = tracked;
      if (record?.phase === 'canary') this.#canarySettled(tracked, record, ref, result);
      if (tracked.draining?.has(key) && result.status !== 'retry') {
        tracked.draining.delete(key);
        if (tracked.draining.size === 0) this.#move(tracked, record!, done(record!, this.#now()));
      }
    }
  }

  /** A namespace no longer followed: nothing of it is held, watched or counted. */
  dropNamespace(namespace: string): void {
    for (const [key, tracked] of this.#tracked) {
      if (tracked.namespace !== namespace) continue;
      tracked.activity?.stop.abort();
      this.#tracked.delete(key);
    }
    this.#count();
  }

  stop(): void {
    for (const tracked of this.#tracked.values()) tracked.activity?.stop.abort();
    this.#tracked.clear();
    this.#count();
  }

  // --- reading and deciding ------------------------------------------------------

  async #read(tracked: Tracked): Promise<void> {
    await this.#decide(tracked);
    if (!tracked.again || this.deps.signal.aborted) return;
    tracked.reading = true;
    this.#then(tracked, () => this.#read(tracked));
  }

  /** One read of the source and what it leads to: a record written, its phase carried on. */
  async #decide(tracked: Tracked): Promise<void> {
    tracked.again = false;
    const { digestSource, logger, signal } = this.deps;
    const read = await digestSource(tracked.object, tracked.namespace, signal);
    if (signal.aborted) return;
    if (read.status === 'failed') {
      logger.warn({ ...fields(tracked), err: read.detail }, 'follow: source unread; readers held');
      return this.#readAgainLater(tracked);
    }
    if (read.status === 'absent') return this.#forget(tracked);
    tracked.uid = read.uid;
    tracked.version = read.resourceVersion;
    const readers = this.deps.index.readersOf(tracked.namespace, tracked.source);
    const step = decide({
      digest: read.digest,
      record: readFanoutRecord(read.fanout),
      control: readFanoutControl(read.fanoutControl),
      fansOut: readers.length > 1 && this.#canaryCount(tracked.namespace) > 0,
      now: this.#now(),
    });
    const record =
      step.to === 'choose' ? await this.#choose(tracked, step.base, readers, read) : step.record;
    if (signal.aborted) return;
    if (record === null) return this.#readAgainLater(tracked);
    // Nothing was recorded and nothing rolls: there is nothing to remember either.
    const write = step.to !== 'keep' && record && (read.fanout || record.phase !== 'done');
    if (write && !(await this.#write(tracked, record))) return;
    tracked.record = record;
    tracked.reading = false;
    if (step.to === 'direct') this.#requestAll(tracked, readers);
    if (step.to === 'choose' || step.to === 'direct') tracked.seenAt = this.deps.clock.now();
    this.#carryOn(tracked);
  }

  /**
   * The canaries of a change, in order (canaryCandidates), each one that rolls, runs pods and
   * can be watched. None rolls: nothing to test (done). Some roll but none can test it:
   * halted, never released blind. A change made while an older one is held, that rolls only
   * the older one's canaries, takes them back to what the rest have (a revert): done, and
   * those are touched at once. null: a reader could not be read.
   */
  async #choose(
    tracked: Tracked,
    base: ChangeBase,
    readers: readonly Reader[],
    read: Extract<SourceDigest, { status: 'found' }>,
  ): Promise<FanoutRecord | null> {
    const count = Math.max(1, this.#canaryCount(tracked.namespace));
    const before = readFanoutRecord(read.fanout);
    // Whether this undoes a held change is known only once every reader is evaluated.
    const everyReader = before?.phase === 'halted' || before?.phase === 'canary';
    const chosen: RecordedWorkload[] = [];
    const rolling: WorkloadRef[] = [];
    const unfit: string[] = [];
    for (const { ref } of canaryCandidates(readers)) {
      if ((chosen.length >= count && !everyReader) || this.deps.signal.aborted) break;
      let fitness: CanaryFitness;
      try {
        fitness = await this.deps.fitness(ref);
      } catch (error) {
        this.deps.logger.warn(
          { ...fields(tracked), err: (error as Error).message },
          'follow: canary candidate unread',
        );
        return null;
      }
      if (!fitness.fit && fitness.adopt) this.deps.request(ref, 'resync');
      if (fitness.fit || fitness.rolls) rolling.push(ref);
      if (fitness.fit && chosen.length < count) chosen.push(recorded(ref));
      else if (!fitness.fit && fitness.rolls) {
        unfit.push(`${formatWorkload(ref.kind, ref.name)}: ${fitness.why}`);
      }
    }
    const now = this.#now();
    if (rolling.length === 0) return done(base, now);
    if (everyReader && rolling.every((ref) => wasSent(before, ref))) {
      const change = { source: tracked.source, change: tracked.change };
      for (const ref of rolling) this.deps.request(ref, change);
      return done(base, now);
    }
    if (chosen.length === 0) {
      const why = `no workload can test it (${unfit.slice(0, 3).join('; ')})`;
      this.deps.metrics.fanoutHalted();
      return halted(base, why, now);
    }
    this.deps.logger.info(
      { ...fields(tracked), digest: read.digest, canaries: chosen.map(display) },
      'follow: fan-out starts with its canaries',
    );
    return testing(base, chosen, now);
  }

  /** Writes `record` on the source; false when it must be read again (or later). */
  async #write(tracked: Tracked, record: FanoutRecord): Promise<boolean> {
    const { api, index, logger, signal } = this.deps;
    const text = formatFanoutRecord(record);
    const { namespace, object, source } = tracked;
    let written: Awaited<ReturnType<typeof api.writeFanoutRecord>>;
    try {
      written = await api.writeFanoutRecord(namespace, object, text, tracked.version, signal);
    } catch (error) {
      logger.warn(
        { ...fields(tracked), err: (error as Error).message },
        'follow: record unwritten',
      );
      this.#readAgainLater(tracked);
      return false;
    }
    if (written.status === 'written') {
      index.advanceSource(namespace, source, tracked.version, written.resourceVersion, text);
      tracked.version = written.resourceVersion;
      logger.info({ ...fields(tracked), phase: record.phase, why: record.why }, 'follow: fan-out');
      return true;
    }
    if (written.status === 'denied') {
      logger.warn(
        { ...fields(tracked), err: written.reason },
        'follow: record denied; readers held',
      );
      this.#readAgainLater(tracked);
    } else this.#then(tracked, () => this.#read(tracked)); // Changed since: read it again.
    return false;
  }

  /** Moves a record on from `from` (if it still stands) to `to`, in the source's chain. */
  #move(tracked: Tracked, from: FanoutRecord, to: FanoutRecord): void {
    this.#then(tracked, async () => {
      if (!tracked.record || !sameRecord(tracked.record, from) || tracked.reading) return;
      if (!(await this.#write(tracked, to))) return;
      tracked.record = to;
      this.#carryOn(tracked);
    });
  }

  // --- each phase's work ---------------------------------------------------------

  /** Starts the work of the record's phase, unless it runs already for this record. */
  #carryOn(tracked: Tracked): void {
    const { record } = tracked;
    if (record && tracked.activity && sameRecord(tracked.activity.record, record)) return;
    tracked.activity?.stop.abort();
    tracked.activity = undefined;
    tracked.draining = undefined;
    this.#count();
    if (!record || record.phase === 'done') {
      if (!record) this.#tracked.delete(sourceKey(tracked.namespace, tracked.source));
      return;
    }
    const stop = new AbortController();
    tracked.activity = { record, stop };
    const signal = AbortSignal.any([this.deps.signal, stop.signal]);
    if (record.phase === 'canary') this.#test(tracked, record, signal);
    else if (record.phase === 'halted') void this.#sayHalted(tracked, record, signal);
    else this.#drain(tracked, record);
  }

  /** Sends each canary's touch (within the window) and watches each one sent. */
  #test(tracked: Tracked, record: FanoutRecord, signal: AbortSignal): void {
    const windowMs = this.#windowMs(tracked.namespace);
    const change = { source: tracked.source, change: tracked.change };
    for (const canary of record.canaries ?? []) {
      const ref = this.#refOf(tracked.namespace, canary);
      if (!ref) {
        this.#move(
          tracked,
          record,
          halted(record, `${display(canary)}: kind not followed`, this.#now()),
        );
        return;
      }
      if (canary.sent) {
        void this.#watch(tracked, record, ref, Date.parse(canary.sent) + windowMs, signal);
        continue;
      }
      this.deps.request(ref, change);
      const left = Date.parse(record.since) + windowMs - this.deps.clock.now();
      void sleep(Math.max(0, left), signal, this.deps.clock).then(() => {
        if (signal.aborted) return;
        const why = `the touch of canary ${display(canary)} could not be sent within ${spoken(windowMs)} (${tracked.deferral ?? 'waiting'})`;
        this.#halt(tracked, record, why);
      });
    }
  }

  #canarySettled(tracked: Tracked, record: FanoutRecord, ref: WorkloadRef, result: TouchResult) {
    const canary = (record.canaries ?? []).find(
      (one) => sameWorkload(one, recorded(ref)) && one.sent === undefined,
    );
    if (!canary) return;
    if (result.status === 'touched') this.#move(tracked, record, sent(record, canary, this.#now()));
    else if (result.status === 'retry') tracked.deferral = result.reason;
    else tracked.deferral = 'its touch rolled nothing';
  }

  /** Reads the canary until its window ends: a failing pod or status halts the change at once. */
  async #watch(
    tracked: Tracked,
    record: FanoutRecord,
    canary: WorkloadRef,
    end: number,
    signal: AbortSignal,
  ): Promise<void> {
    const { clock, options } = this.deps;
    const key = workloadKey(canary);
    const sentAt = end - this.#windowMs(tracked.namespace);
    for (;;) {
      await sleep(Math.min(options.canaryPollMs, Math.max(0, end - clock.now())), signal, clock);
      if (signal.aborted) return;
      const verdict = await this.#judge(canary, sentAt, signal);
      if (signal.aborted) return;
      const name = formatWorkload(canary.kind, canary.name);
      if (verdict.failed)
        return this.#halt(tracked, record, `canary ${name} failed: ${verdict.failed}`);
      if (clock.now() < end) continue;
      if (!verdict.complete) {
        const why = `canary ${name} failed: not Ready and available within ${spoken(end - sentAt)} of its touch (${verdict.detail})`;
        return this.#halt(tracked, record, why);
      }
      tracked.passed.add(key);
      const all = (record.canaries ?? []).every((one) =>
        tracked.passed.has(workloadKey(this.#refOf(tracked.namespace, one) ?? canary)),
      );
      if (all) this.#move(tracked, record, draining(record, this.#now()));
      return;
    }
  }

  /** The canary now: failed (why), or whether its rollout is complete. A read that fails says neither. */
  async #judge(
    ref: WorkloadRef,
    sentAt: number,
    signal: AbortSignal,
  ): Promise<{ failed?: string; complete: boolean; detail: string }> {
    try {
      const object = await this.deps.api.getWorkload(ref.namespace, ref.kind, ref.name, signal);
      if (!isObject(object)) return { failed: 'it was deleted', complete: false, detail: '' };
      const progress = rolloutProgress(object, ref.kind);
      if (progress.state === 'failed')
        return { failed: progress.detail, complete: false, detail: '' };
      const selector = podSelectorOf(object);
      if (selector) {
        const pods = await this.deps.api.listPods(ref.namespace, selector, signal);
        const failed = podFailure(pods, sentAt - CLOCK_SKEW_MS);
        if (failed) return { failed, complete: false, detail: '' };
      }
      return progress.state === 'complete'
        ? { complete: true, detail: 'complete' }
        : { complete: false, detail: progress.detail };
    } catch (error) {
      return { complete: false, detail: `not read: ${(error as Error).message}` };
    }
  }

  #halt(tracked: Tracked, record: FanoutRecord, why: string): void {
    if (!tracked.record || !sameRecord(tracked.record, record)) return;
    this.deps.metrics.fanoutHalted();
    this.#move(tracked, record, halted(record, why, this.#now()));
  }

  /** The Warning on the source and the canaries, now and again while the halt lasts. */
  async #sayHalted(tracked: Tracked, record: FanoutRecord, signal: AbortSignal): Promise<void> {
    const { logger, api, clock } = this.deps;
    logger.warn({ ...fields(tracked), why: record.why }, 'follow: fan-out halted');
    while (!signal.aborted) {
      const held = this.deps.index.readersOf(tracked.namespace, tracked.source).length;
      const note = fanoutHaltedNote(
        { source: tracked.source, namespace: tracked.namespace, change: record.change },
        record.why ?? 'halted',
        held,
      );
      for (const event of this.#haltedEvents(tracked, record, note)) {
        await api
          .recordEvent(event, signal)
          .catch((error: Error) =>
            logger.warn({ ...fields(tracked), err: error.message }, 'follow: event not recorded'),
          );
      }
      await sleep(HALT_REPEAT_MS, signal, clock);
    }
  }

  #haltedEvents(tracked: Tracked, record: FanoutRecord, note: string): WorkloadEvent[] {
    const common = {
      type: 'Warning',
      reason: EVENT_REASON.halted,
      action: EVENT_ACTION.fanout,
      note,
    } as const;
    const kind = { group: '', version: 'v1', kind: tracked.object.kind };
    const onSource = { ...common, kind, namespace: tracked.namespace, name: tracked.object.name };
    const onCanaries = (record.canaries ?? []).flatMap((canary) => {
      const ref = this.#refOf(tracked.namespace, canary);
      return ref
        ? [{ ...common, kind: ref.kind, namespace: ref.namespace, name: ref.name, uid: '' }]
        : [];
    });
    return [{ ...onSource, uid: tracked.uid }, ...onCanaries];
  }

  /**
   * The canaries proved the change (or someone said so): the rest — and a canary whose touch
   * was never sent — are touched in the stable order, at the rate limit.
   */
  #drain(tracked: Tracked, record: FanoutRecord): void {
    const canaries = new Set(
      (record.canaries ?? []).flatMap((one) => {
        if (!one.sent) return [];
        const ref = this.#refOf(tracked.namespace, one);
        return ref ? [workloadKey(ref)] : [];
      }),
    );
    const rest = inStableOrder(this.deps.index.readersOf(tracked.namespace, tracked.source))
      .map(({ ref }) => ref)
      .filter((ref) => !canaries.has(workloadKey(ref)));
    this.deps.logger.info(
      { ...fields(tracked), rest: rest.length },
      'follow: canaries passed; fanning out',
    );
    tracked.draining = new Set(rest.map(workloadKey));
    if (rest.length === 0) {
      this.#move(tracked, record, done(record, this.#now()));
      return;
    }
    const change = { source: tracked.source, change: tracked.change };
    for (const ref of rest) this.deps.request(ref, change, tracked.seenAt);
  }

  #requestAll(tracked: Tracked, readers: readonly Reader[]): void {
    const change = { source: tracked.source, change: tracked.change };
    for (const { ref } of inStableOrder(readers)) this.deps.request(ref, change, tracked.seenAt);
  }

  // --- bookkeeping -----------------------------------------------------------------

  #track(change: { namespace: string; object: NamedSource; source: string }): Tracked {
    const key = sourceKey(change.namespace, change.source);
    let tracked = this.#tracked.get(key);
    if (!tracked) {
      tracked = {
        namespace: change.namespace,
        object: change.object,
        source: change.source,
        uid: '',
        version: '',
        record: undefined,
        reading: false,
        again: false,
        change: 'changed',
        seenAt: this.deps.clock.now(),
        chain: Promise.resolve(),
        activity: undefined,
        passed: new Set(),
        draining: undefined,
        deferral: undefined,
      };
      this.#tracked.set(key, tracked);
    }
    return tracked;
  }

  /** Runs `step` after whatever the source's chain holds; a step that throws is logged. */
  #then(tracked: Tracked, step: () => Promise<void>): void {
    tracked.chain = tracked.chain.then(step).catch((error: Error) => {
      this.deps.logger.error(
        { ...fields(tracked), err: error.message },
        'follow: fan-out step failed',
      );
      this.#readAgainLater(tracked);
    });
  }

  #readAgainLater(tracked: Tracked): void {
    tracked.reading = true;
    void sleep(this.deps.options.retryMs, this.deps.signal, this.deps.clock).then(() => {
      if (
        this.deps.signal.aborted ||
        this.#tracked.get(sourceKey(tracked.namespace, tracked.source)) !== tracked
      )
        return;
      this.#then(tracked, () => this.#read(tracked));
    });
  }

  /** The source is gone: nothing is held for it, and its readers are told. */
  #forget(tracked: Tracked): void {
    tracked.activity?.stop.abort();
    this.#tracked.delete(sourceKey(tracked.namespace, tracked.source));
    this.#requestAll(tracked, this.deps.index.readersOf(tracked.namespace, tracked.source));
    this.#count();
  }

  #refOf(namespace: string, workload: RecordedWorkload): WorkloadRef | undefined {
    const kind = this.deps.kinds.find(
      (one) => one.group === workload.group && one.kind === workload.kind,
    );
    return kind ? { kind, namespace, name: workload.name } : undefined;
  }

  #canaryCount(namespace: string): number {
    return canaryCount(this.deps.namespaceAnnotations(namespace), this.deps.options.canaries);
  }

  #windowMs(namespace: string): number {
    return canaryWindowOf(
      this.deps.namespaceAnnotations(namespace),
      this.deps.options.canaryWindowMs,
    );
  }

  #now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  #count(): void {
    let held = 0;
    let behind = 0;
    let haltedNow = 0;
    for (const tracked of this.#tracked.values()) {
      const readers = this.deps.index.readersOf(tracked.namespace, tracked.source).length;
      const phase = tracked.record?.phase;
      if (phase === 'halted') {
        haltedNow++;
        held += readers;
      } else if (phase === 'canary' || tracked.reading) {
        behind += Math.max(0, readers - (tracked.record?.canaries?.length ?? 0));
      }
    }
    this.deps.metrics.workloadsHeld(held);
    this.deps.metrics.workloadsBehindCanary(behind);
    this.deps.metrics.fanoutsHaltedNow(haltedNow);
  }
}

/**
 * How many canaries a fan-out in a namespace touches first: its `confighash.dev/canaries`
 * annotation (a whole number; 0 turns them off), else `fallback` (`--follow-canaries`).
 */
function canaryCount(
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
  fallback: number,
): number {
  const text = namespaceAnnotations?.[CANARIES];
  return text !== undefined && /^\d{1,4}$/.test(text) ? Number(text) : fallback;
}

/** The order canaries are sought in: those annotated `confighash.dev/canary`, then the rest, each in the stable order. */
export function canaryCandidates(readers: readonly Reader[]): Reader[] {
  const ordered = inStableOrder(readers);
  return [...ordered.filter((r) => r.canary), ...ordered.filter((r) => !r.canary)];
}

/** A namespace's `confighash.dev/canary-window` (`90s`, `5m`), else `fallback`. */
export function canaryWindowOf(
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
  fallback: number,
): number {
  const match = /^(\d{1,5})(s|m)$/.exec(namespaceAnnotations?.[CANARY_WINDOW] ?? '');
  return match ? Number(match[1]) * (match[2] === 'm' ? 60_000 : 1000) : fallback;
}

function sameRecord(a: FanoutRecord, b: FanoutRecord): boolean {
  return formatFanoutRecord(a) === formatFanoutRecord(b);
}

/** Whether a record (as an annotation holds it) is of a change not yet rolled everywhere. */
function unfinished(raw: string | undefined): boolean {
  const phase = readFanoutRecord(raw)?.phase;
  return phase === 'canary' || phase === 'halted' || phase === 'draining';
}

/** Whether `ref` is a canary of `record` whose touch was sent: it has that change. */
function wasSent(record: FanoutRecord | undefined, ref: WorkloadRef): boolean {
  return (record?.canaries ?? []).some((one) => one.sent && sameWorkload(one, recorded(ref)));
}

function recorded(ref: WorkloadRef): RecordedWorkload {
  return { group: ref.kind.group, kind: ref.kind.kind, name: ref.name };
}

function display(workload: RecordedWorkload): string {
  return formatWorkload(workload, workload.name);
}

function namedSource(source: string): NamedSource | undefined {
  return parseSourceList(source).refs[0];
}

/** `15 min`, or `20 s` for what is not whole minutes. */
function spoken(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

function sourceKey(namespace: string, source: string): string {
  return `${namespace}/${source}`;
}

function fields(tracked: Tracked) {
  return { namespace: tracked.namespace, source: tracked.source, resourceVersion: tracked.version };
}
