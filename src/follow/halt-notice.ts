// The halt of a fan-out said (docs/design.md §6 "The state of a change"): a Warning Event on
// the source and on each canary, and again while the halt lasts, so that it outlives the
// Events' TTL.

import { sleep } from '../runtime/index.js';
import { type FanoutRecord, fanoutHaltedNote } from '../workload/index.js';
import { EVENT_ACTION, EVENT_REASON } from './events.js';
import { type FanoutDependencies, fields, refOf, type Tracked } from './fanout-tracked.js';
import type { WorkloadEvent } from './ports.js';

/** A halt is said again this often while it lasts, within the Event TTL (1 h by default). */
export const HALT_REPEAT_MS = 30 * 60_000;

/** The Warning on the source and the canaries, now and again until `signal` aborts. */
export async function sayHalted(
  deps: FanoutDependencies,
  tracked: Tracked,
  record: FanoutRecord,
  signal: AbortSignal,
): Promise<void> {
  const { logger, api, clock } = deps;
  logger.warn({ ...fields(tracked), why: record.why }, 'follow: fan-out halted');
  while (!signal.aborted) {
    const held = deps.index.readersOf(tracked.namespace, tracked.source).length;
    const note = fanoutHaltedNote(
      { source: tracked.source, namespace: tracked.namespace, change: record.change },
      record.why ?? 'halted',
      held,
    );
    for (const event of haltedEvents(deps, tracked, record, note)) {
      await api
        .recordEvent(event, signal)
        .catch((error: Error) =>
          logger.warn({ ...fields(tracked), err: error.message }, 'follow: event not recorded'),
        );
    }
    await sleep(HALT_REPEAT_MS, signal, clock);
  }
}

function haltedEvents(
  deps: FanoutDependencies,
  tracked: Tracked,
  record: FanoutRecord,
  note: string,
): WorkloadEvent[] {
  const common = {
    type: 'Warning',
    reason: EVENT_REASON.halted,
    action: EVENT_ACTION.fanout,
    note,
  } as const;
  const kind = { group: '', version: 'v1', kind: tracked.object.kind };
  const onSource = { ...common, kind, namespace: tracked.namespace, name: tracked.object.name };
  const onCanaries = (record.canaries ?? []).flatMap((canary) => {
    const ref = refOf(deps.kinds, tracked.namespace, canary);
    return ref
      ? [{ ...common, kind: ref.kind, namespace: ref.namespace, name: ref.name, uid: '' }]
      : [];
  });
  return [{ ...onSource, uid: tracked.uid }, ...onCanaries];
}
