// The canary phase of a fan-out (docs/design.md §6 "The state of a change"): each canary's
// touch is sent within the canary window, and each one sent is watched — its pods and its
// rollout status — until its window ends. A failure halts the change at once; every canary
// passed moves it on to the drain.

import { sleep } from '../runtime/index.js';
import {
  type FanoutRecord,
  formatWorkload,
  isObject,
  podFailure,
  podSelectorOf,
  rolloutProgress,
  sameWorkload,
} from '../workload/index.js';
import { draining, halted, sent } from './change-state.js';
import {
  canaryWindowIn,
  display,
  type FanoutDependencies,
  type MoveRecord,
  recorded,
  recordTime,
  refOf,
  sameRecord,
  spoken,
  type Tracked,
} from './fanout-tracked.js';
import type { TouchResult } from './touch-queue.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

/** Pods created this long before the canary's touch was sent still count as its new revision. */
const CLOCK_SKEW_MS = 5_000;

export class CanaryWatch {
  constructor(
    private readonly deps: FanoutDependencies,
    private readonly move: MoveRecord,
  ) {}

  /** Sends each canary's touch (within the window) and watches each one sent. */
  test(tracked: Tracked, record: FanoutRecord, signal: AbortSignal): void {
    const windowMs = canaryWindowIn(this.deps, tracked.namespace);
    const change = { source: tracked.source, change: tracked.change };
    for (const canary of record.canaries ?? []) {
      const ref = refOf(this.deps.kinds, tracked.namespace, canary);
      if (!ref) {
        this.move(
          tracked,
          record,
          halted(record, `${display(canary)}: kind not followed`, recordTime(this.deps.clock)),
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

  /** A touch came back: a canary's touch sent starts its window; one not sent says why. */
  settled(tracked: Tracked, record: FanoutRecord, ref: WorkloadRef, result: TouchResult): void {
    const canary = (record.canaries ?? []).find(
      (one) => sameWorkload(one, recorded(ref)) && one.sent === undefined,
    );
    if (!canary) return;
    if (result.status === 'touched') {
      this.move(tracked, record, sent(record, canary, recordTime(this.deps.clock)));
    } else if (result.status === 'retry') tracked.deferral = result.reason;
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
    const sentAt = end - canaryWindowIn(this.deps, tracked.namespace);
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
        tracked.passed.has(workloadKey(refOf(this.deps.kinds, tracked.namespace, one) ?? canary)),
      );
      if (all) this.move(tracked, record, draining(record, recordTime(clock)));
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
    this.move(tracked, record, halted(record, why, recordTime(this.deps.clock)));
  }
}
