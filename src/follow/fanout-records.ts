// The record of a fan-out (docs/design.md §6 "The state of a change"): the source is read
// (its content's digest, the record kept on it, the control people wrote), decided on by
// change-state.ts, and the record written back on the source before anything else moves.
// Each source does one such thing at a time, in order, in its chain.

import { sleep } from '../runtime/index.js';
import {
  type FanoutRecord,
  formatFanoutRecord,
  readFanoutControl,
  readFanoutRecord,
} from '../workload/index.js';
import { chooseCanaries } from './canary-choice.js';
import { decide } from './change-state.js';
import {
  canariesIn,
  type FanoutDependencies,
  fields,
  recordTime,
  sameRecord,
  type Tracked,
} from './fanout-tracked.js';
import type { Reader } from './reference-index.js';

/** What the records ask of the fan-out that holds the tracked sources. */
export interface RecordHooks {
  /** Starts the work of the record's phase (or stops tracking a source with no record). */
  carryOn(tracked: Tracked): void;
  /** The source is gone: nothing is held for it. */
  forget(tracked: Tracked): void;
  /** Whether `tracked` is still the one tracked for its source. */
  isTracked(tracked: Tracked): boolean;
  /** Asks for a touch of every reader, in the stable order. */
  requestAll(tracked: Tracked, readers: readonly Reader[]): void;
}

export class FanoutRecords {
  constructor(
    private readonly deps: FanoutDependencies,
    private readonly hooks: RecordHooks,
  ) {}

  /** Reads the source in its chain, once more if it changed while it was read. */
  readInTurn(tracked: Tracked): void {
    this.#then(tracked, () => this.#read(tracked));
  }

  /** Moves a record on from `from` (if it still stands) to `to`, in the source's chain. */
  move(tracked: Tracked, from: FanoutRecord, to: FanoutRecord): void {
    this.#then(tracked, async () => {
      if (!tracked.record || !sameRecord(tracked.record, from) || tracked.reading) return;
      if (!(await this.#write(tracked, to))) return;
      tracked.record = to;
      this.hooks.carryOn(tracked);
    });
  }

  async #read(tracked: Tracked): Promise<void> {
    await this.#decide(tracked);
    if (!tracked.again || this.deps.signal.aborted) return;
    tracked.reading = true;
    this.readInTurn(tracked);
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
    if (read.status === 'absent') return this.hooks.forget(tracked);
    tracked.uid = read.uid;
    tracked.version = read.resourceVersion;
    const readers = this.deps.index.readersOf(tracked.namespace, tracked.source);
    const step = decide({
      digest: read.digest,
      record: readFanoutRecord(read.fanout),
      control: readFanoutControl(read.fanoutControl),
      fansOut: readers.length > 1 && canariesIn(this.deps, tracked.namespace) > 0,
      now: recordTime(this.deps.clock),
    });
    const record =
      step.to === 'choose'
        ? await chooseCanaries(this.deps, tracked, step.base, readers, read)
        : step.record;
    if (signal.aborted) return;
    if (record === null) return this.#readAgainLater(tracked);
    // Nothing was recorded and nothing rolls: there is nothing to remember either.
    const write = step.to !== 'keep' && record && (read.fanout || record.phase !== 'done');
    if (write && !(await this.#write(tracked, record))) return;
    tracked.record = record;
    tracked.reading = false;
    if (step.to === 'direct') this.hooks.requestAll(tracked, readers);
    if (step.to === 'choose' || step.to === 'direct') tracked.seenAt = this.deps.clock.now();
    this.hooks.carryOn(tracked);
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
    } else this.readInTurn(tracked); // Changed since: read it again.
    return false;
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
      if (this.deps.signal.aborted || !this.hooks.isTracked(tracked)) return;
      this.readInTurn(tracked);
    });
  }
}
