// The drain of a fan-out (docs/design.md §6 "The state of a change"): the canaries proved the
// change (or someone said so), so the rest of its readers are touched in the stable order, at
// the rate limit; the change is done when every one of those touches has come back.

import type { FanoutRecord } from '../workload/index.js';
import { done } from './change-state.js';
import {
  type FanoutDependencies,
  fields,
  type MoveRecord,
  recordTime,
  refOf,
  type Tracked,
} from './fanout-tracked.js';
import type { Reader } from './reference-index.js';
import { inStableOrder } from './stable-order.js';
import type { TouchResult } from './touch-queue.js';
import { workloadKey } from './workload-ref.js';

export class Drain {
  constructor(
    private readonly deps: FanoutDependencies,
    private readonly move: MoveRecord,
  ) {}

  /** Touches the rest — and a canary whose touch was never sent. */
  start(tracked: Tracked, record: FanoutRecord): void {
    const canaries = new Set(
      (record.canaries ?? []).flatMap((one) => {
        if (!one.sent) return [];
        const ref = refOf(this.deps.kinds, tracked.namespace, one);
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
      this.move(tracked, record, done(record, recordTime(this.deps.clock)));
      return;
    }
    const change = { source: tracked.source, change: tracked.change };
    for (const ref of rest) this.deps.request(ref, change, tracked.seenAt);
  }

  /** A touch of the drain came back (`key`: its workload): the last one ends the change. */
  settled(tracked: Tracked, record: FanoutRecord | undefined, key: string, result: TouchResult) {
    if (!tracked.draining?.has(key) || result.status === 'retry') return;
    tracked.draining.delete(key);
    if (tracked.draining.size === 0) {
      this.move(tracked, record!, done(record!, recordTime(this.deps.clock)));
    }
  }

  /** Asks for a touch of every reader, in the stable order, debounced from the change seen. */
  requestAll(tracked: Tracked, readers: readonly Reader[]): void {
    const change = { source: tracked.source, change: tracked.change };
    for (const { ref } of inStableOrder(readers)) this.deps.request(ref, change, tracked.seenAt);
  }
}
