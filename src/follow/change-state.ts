// The state machine of one change of a source (docs/design.md §6 "The state of a change"):
// what a read of the source (its content's digest, the record follow mode keeps on it, the
// control people wrote) leads to, how a canary's verdict moves the record on, and the one
// answer every path that would touch a workload asks for — may it be touched now? Pure: the
// driver (fanout.ts) reads, writes and watches; this decides.

import {
  type FanoutControl,
  type FanoutRecord,
  formatFanoutControl,
  type RecordedWorkload,
  sameWorkload,
} from '../workload/index.js';

/** A read of the source, and what follow mode makes of its readers now. */
interface Observed {
  readonly digest: string;
  readonly record: FanoutRecord | undefined;
  readonly control: FanoutControl | undefined;
  /** More than one reader, with canaries on: a change of it goes canary-first. */
  readonly fansOut: boolean;
  /** RFC 3339: when this is decided. */
  readonly now: string;
}

type Step =
  /** Nothing new: the recorded phase carries on (a new leader picks it up here). */
  | { readonly to: 'keep'; readonly record: FanoutRecord }
  /** A new change, not canaried: every reader is touched at the rate limit. */
  | { readonly to: 'direct'; readonly record?: FanoutRecord }
  /** A new change (or a retried canary), canary-first: its canaries are chosen next. */
  | { readonly to: 'choose'; readonly base: ChangeBase }
  /** The record moves on as written. */
  | { readonly to: 'write'; readonly record: FanoutRecord };

/** What every record of one change carries over from the record before it. */
export interface ChangeBase {
  readonly change: string;
  readonly rolled?: string;
  readonly control?: string;
}

/** The last content that rolled to every reader. */
function lastRolled(record: FanoutRecord | undefined): string | undefined {
  return record?.phase === 'done' ? record.change : record?.rolled;
}

/** What a read of the source leads to (the table in design §6, row by row). */
export function decide(observed: Observed): Step {
  const { digest, record, control, fansOut, now } = observed;
  if (record === undefined)
    return fansOut ? { to: 'choose', base: { change: digest } } : { to: 'direct' };
  if (record.change !== digest) {
    const rolled = lastRolled(record);
    // Back to what rolled everywhere (a revert), or a change no canary needs: the halt of the
    // older change is over, and every reader is evaluated (only the canary rolls back).
    if (digest === rolled || !fansOut) {
      return { to: 'direct', record: done({ change: digest }, now) };
    }
    return { to: 'choose', base: { change: digest, ...(rolled ? { rolled } : {}) } };
  }
  const text = control && control.change === digest ? formatFanoutControl(control) : undefined;
  if (text === undefined || text === record.control) return { to: 'keep', record };
  const acted = { ...record, control: text };
  switch (control!.action) {
    case 'halt':
      return record.phase === 'canary' || record.phase === 'draining'
        ? { to: 'write', record: halted(acted, 'halted by hand', now) }
        : { to: 'write', record: acted };
    case 'resume':
      return record.phase === 'halted'
        ? { to: 'write', record: draining(acted, now) }
        : { to: 'write', record: acted };
    case 'retry-canary':
      return record.phase === 'halted'
        ? { to: 'choose', base: baseOf(acted) }
        : { to: 'write', record: acted };
  }
}

function baseOf(record: ChangeBase): ChangeBase {
  const { change, rolled, control } = record;
  return { change, ...(rolled ? { rolled } : {}), ...(control ? { control } : {}) };
}

/** Canaries chosen: the change is tested on them. */
export function testing(
  base: ChangeBase,
  canaries: readonly RecordedWorkload[],
  now: string,
): FanoutRecord {
  return { ...baseOf(base), phase: 'canary', canaries, since: now };
}

/** The canary's touch was sent at `sent`: its window runs from then. */
export function sent(record: FanoutRecord, canary: RecordedWorkload, at: string): FanoutRecord {
  const canaries = (record.canaries ?? []).map((one) =>
    sameWorkload(one, canary) && one.sent === undefined ? { ...one, sent: at } : one,
  );
  return { ...record, canaries };
}

export function halted(base: FanoutRecord | ChangeBase, why: string, now: string): FanoutRecord {
  const canaries = 'canaries' in base ? base.canaries : undefined;
  return { ...baseOf(base), phase: 'halted', since: now, why, ...(canaries ? { canaries } : {}) };
}

/** The canaries proved it (or someone resumed it): the rest are touched. */
export function draining(record: FanoutRecord, now: string): FanoutRecord {
  const { canaries } = record;
  return { ...baseOf(record), phase: 'draining', since: now, ...(canaries ? { canaries } : {}) };
}

/** Every reader has it: a change back to it rolls nothing more. */
export function done(base: ChangeBase, now: string): FanoutRecord {
  return { ...baseOf(base), phase: 'done', since: now, rolled: base.change };
}
