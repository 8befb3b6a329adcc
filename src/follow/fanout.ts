// Canary-first fan-out (docs/design.md §6 "The state of a change"): the driver of the state
// machine in change-state.ts. A change of a source read by more than one workload is read
// (its content's digest, the record kept on it, the control people wrote), decided on, and
// the record written back on the source before anything else moves, so a new leader, a
// restarted pod or a second replica continues where this one stopped. Each phase's work —
// sending the canaries' touches, watching their pods and status for the canary window,
// draining the rest, saying a halt again while it lasts — runs while its record stands.
// Every touch of every path asks `holdOf` first: the one answer to "may it be touched now?".
// The parts: fanout-records.ts (read, decide, write), canary-watch.ts (the canaries),
// fanout-drain.ts (the rest), halt-notice.ts (the halt said). This file composes them.

import type { NamedSource } from '../sources/index.js';
import { fanoutHoldOf, readFanoutRecord } from '../workload/index.js';
import { CanaryWatch } from './canary-watch.js';
import { Drain } from './fanout-drain.js';
import { FanoutRecords } from './fanout-records.js';
import {
  canariesIn,
  countFanouts,
  type FanoutDependencies,
  namedSource,
  newTracked,
  recorded,
  sameRecord,
  sourceKey,
  type Tracked,
  unfinished,
} from './fanout-tracked.js';
import { sayHalted } from './halt-notice.js';
import type { SourceChange, TouchResult } from './touch-queue.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

export { canaryCandidates } from './canary-choice.js';

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

export class Fanouts {
  readonly #tracked = new Map<string, Tracked>();
  readonly #records: FanoutRecords;
  readonly #canaries: CanaryWatch;
  readonly #drain: Drain;

  constructor(private readonly deps: FanoutDependencies) {
    this.#records = new FanoutRecords(deps, {
      carryOn: (tracked) => this.#carryOn(tracked),
      forget: (tracked) => this.#forget(tracked),
      isTracked: (tracked) =>
        this.#tracked.get(sourceKey(tracked.namespace, tracked.source)) === tracked,
      requestAll: (tracked, readers) => this.#drain.requestAll(tracked, readers),
    });
    const move = this.#records.move.bind(this.#records);
    this.#canaries = new CanaryWatch(deps, move);
    this.#drain = new Drain(deps, move);
  }

  /** Whether a change of a source with these readers is read here before any is touched. */
  takes(namespace: string, source: string, readers: number): boolean {
    if (this.#tracked.has(sourceKey(namespace, source))) return true;
    if (this.deps.index.recordOf(namespace, source) !== undefined) return true;
    return readers > 1 && canariesIn(this.deps, namespace) > 0;
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
    this.#records.readInTurn(tracked);
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
      if (record?.phase === 'canary') this.#canaries.settled(tracked, record, ref, result);
      this.#drain.settled(tracked, record, key, result);
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
    if (record.phase === 'canary') this.#canaries.test(tracked, record, signal);
    else if (record.phase === 'halted') void sayHalted(this.deps, tracked, record, signal);
    else this.#drain.start(tracked, record);
  }

  #track(change: { namespace: string; object: NamedSource; source: string }): Tracked {
    const key = sourceKey(change.namespace, change.source);
    let tracked = this.#tracked.get(key);
    if (!tracked) {
      tracked = newTracked(change, this.deps.clock.now());
      this.#tracked.set(key, tracked);
    }
    return tracked;
  }

  /** The source is gone: nothing is held for it, and its readers are told. */
  #forget(tracked: Tracked): void {
    tracked.activity?.stop.abort();
    this.#tracked.delete(sourceKey(tracked.namespace, tracked.source));
    this.#drain.requestAll(tracked, this.deps.index.readersOf(tracked.namespace, tracked.source));
    this.#count();
  }

  #count(): void {
    countFanouts(this.#tracked.values(), this.deps);
  }
}
