// Which readers of a changed source test it first (docs/design.md §6 "The state of a
// change"): the choice the state machine's `choose` step asks for.

import type { SourceDigest } from '../evaluate/index.js';
import {
  type FanoutRecord,
  formatWorkload,
  type RecordedWorkload,
  readFanoutRecord,
} from '../workload/index.js';
import { type ChangeBase, done, halted, testing } from './change-state.js';
import {
  type CanaryFitness,
  canariesIn,
  display,
  type FanoutDependencies,
  fields,
  recorded,
  recordTime,
  type Tracked,
  wasSent,
} from './fanout-tracked.js';
import type { Reader } from './reference-index.js';
import { inStableOrder } from './stable-order.js';
import type { WorkloadRef } from './workload-ref.js';

/** The order canaries are sought in: those annotated `confighash.dev/canary`, then the rest, each in the stable order. */
export function canaryCandidates(readers: readonly Reader[]): Reader[] {
  const ordered = inStableOrder(readers);
  return [...ordered.filter((r) => r.canary), ...ordered.filter((r) => !r.canary)];
}

/**
 * The canaries of a change, in order (canaryCandidates), each one that rolls, runs pods and
 * can be watched. None rolls: nothing to test (done). Some roll but none can test it:
 * halted, never released blind. A change made while an older one is held, that rolls only
 * the older one's canaries, takes them back to what the rest have (a revert): done, and
 * those are touched at once. null: a reader could not be read.
 */
export async function chooseCanaries(
  deps: FanoutDependencies,
  tracked: Tracked,
  base: ChangeBase,
  readers: readonly Reader[],
  read: Extract<SourceDigest, { status: 'found' }>,
): Promise<FanoutRecord | null> {
  const count = Math.max(1, canariesIn(deps, tracked.namespace));
  const before = readFanoutRecord(read.fanout);
  // Whether this undoes a held change is known only once every reader is evaluated.
  const everyReader = before?.phase === 'halted' || before?.phase === 'canary';
  const chosen: RecordedWorkload[] = [];
  const rolling: WorkloadRef[] = [];
  const unfit: string[] = [];
  for (const { ref } of canaryCandidates(readers)) {
    if ((chosen.length >= count && !everyReader) || deps.signal.aborted) break;
    let fitness: CanaryFitness;
    try {
      fitness = await deps.fitness(ref);
    } catch (error) {
      deps.logger.warn(
        { ...fields(tracked), err: (error as Error).message },
        'follow: canary candidate unread',
      );
      return null;
    }
    if (!fitness.fit && fitness.adopt) deps.request(ref, 'resync');
    if (fitness.fit || fitness.rolls) rolling.push(ref);
    if (fitness.fit && chosen.length < count) chosen.push(recorded(ref));
    else if (!fitness.fit && fitness.rolls) {
      unfit.push(`${formatWorkload(ref.kind, ref.name)}: ${fitness.why}`);
    }
  }
  const now = recordTime(deps.clock);
  if (rolling.length === 0) return done(base, now);
  if (everyReader && rolling.every((ref) => wasSent(before, ref))) {
    const change = { source: tracked.source, change: tracked.change };
    for (const ref of rolling) deps.request(ref, change);
    return done(base, now);
  }
  if (chosen.length === 0) {
    const why = `no workload can test it (${unfit.slice(0, 3).join('; ')})`;
    deps.metrics.fanoutHalted();
    return halted(base, why, now);
  }
  deps.logger.info(
    { ...fields(tracked), digest: read.digest, canaries: chosen.map(display) },
    'follow: fan-out starts with its canaries',
  );
  return testing(base, chosen, now);
}
