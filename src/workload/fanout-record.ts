// The state of a source's fan-out as the cluster keeps it (docs/design.md §6 "The state of a
// change"): follow mode writes `confighash.dev/fanout` on the ConfigMap or Secret, so that a new
// leader, a restarted pod and `confighash explain` read the same state; people write
// `confighash.dev/fanout-control` (`confighash halt`/`resume`, or `kubectl annotate`) to stop
// or release one. Both name the change by its digest (the approval's, §6), never by a
// resourceVersion: writing either changes the source's version and no digest. Pure.

import { isObject } from './object.js';

/** On a ConfigMap or Secret, written by follow mode only: its fan-out's state (FanoutRecord). */
export const FANOUT_STATE = 'confighash.dev/fanout';
/** On a ConfigMap or Secret, written by people: `halt D`, `resume D` or `retry-canary D`. */
export const FANOUT_CONTROL = 'confighash.dev/fanout-control';

/** Where a change of a source stands; design §6 has the table of how each is left. */
type FanoutPhase = 'canary' | 'halted' | 'draining' | 'done';

/** A workload named in a record: enough to read it again after a change of leader. */
export interface RecordedWorkload {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  /** A canary's: when its touch was sent (RFC 3339); its window runs from then. */
  readonly sent?: string;
}

export interface FanoutRecord {
  /** The digest of the content this record is about. */
  readonly change: string;
  readonly phase: FanoutPhase;
  /** The canaries testing it (canary), that proved it (draining), or that failed it (halted). */
  readonly canaries?: readonly RecordedWorkload[];
  /** When this phase began (RFC 3339). */
  readonly since: string;
  /** Why it halted. */
  readonly why?: string;
  /** The last content that rolled to every reader: a change back to it rolls nothing more. */
  readonly rolled?: string;
  /** The last fanout-control value acted on: each is acted on once. */
  readonly control?: string;
}

const PHASES: readonly FanoutPhase[] = ['canary', 'halted', 'draining', 'done'];
const DIGEST = /^[0-9a-f]{16}$/;

/** The annotation's text, its keys in one order: two equal records are one text. */
export function formatFanoutRecord(record: FanoutRecord): string {
  const { change, phase, since, canaries, why, rolled, control } = record;
  return JSON.stringify({
    change,
    phase,
    since,
    ...(canaries
      ? {
          canaries: canaries.map(({ group, kind, name, sent }) => ({
            group,
            kind,
            name,
            ...(sent ? { sent } : {}),
          })),
        }
      : {}),
    ...(why === undefined ? {} : { why }),
    ...(rolled === undefined ? {} : { rolled }),
    ...(control === undefined ? {} : { control }),
  });
}

/** The record an annotation holds; undefined when absent or not one (then it is written anew). */
export function readFanoutRecord(text: string | undefined): FanoutRecord | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const { change, phase, since } = value;
  if (typeof change !== 'string' || !DIGEST.test(change)) return undefined;
  if (!PHASES.includes(phase as FanoutPhase) || typeof since !== 'string') return undefined;
  const canaries = Array.isArray(value.canaries)
    ? value.canaries.flatMap(readRecordedWorkload)
    : undefined;
  return {
    change,
    phase: phase as FanoutPhase,
    since,
    ...(canaries ? { canaries } : {}),
    ...optionalText(value, 'why'),
    ...(typeof value.rolled === 'string' && DIGEST.test(value.rolled)
      ? { rolled: value.rolled }
      : {}),
    ...optionalText(value, 'control'),
  };
}

export type FanoutAction = 'halt' | 'resume' | 'retry-canary';

export interface FanoutControl {
  readonly action: FanoutAction;
  /** The change it is about: a control of another change does nothing. */
  readonly change: string;
}

const CONTROL = /^(halt|resume|retry-canary) ([0-9a-f]{16})$/;

export function formatFanoutControl(control: FanoutControl): string {
  return `${control.action} ${control.change}`;
}

export function readFanoutControl(text: string | undefined): FanoutControl | undefined {
  const match = text === undefined ? null : CONTROL.exec(text.trim());
  return match ? { action: match[1] as FanoutAction, change: match[2]! } : undefined;
}

/** Why a record holds a reader back from every touch; undefined: it does not. */
export type FanoutHold = 'halted' | 'behind-canary';

export function fanoutHoldOf(
  record: FanoutRecord | undefined,
  reader: RecordedWorkload,
): FanoutHold | undefined {
  if (record?.phase === 'halted') return 'halted';
  if (record?.phase !== 'canary') return undefined;
  return (record.canaries ?? []).some((canary) => sameWorkload(canary, reader))
    ? undefined
    : 'behind-canary';
}

export function sameWorkload(a: RecordedWorkload, b: RecordedWorkload): boolean {
  return a.name === b.name && a.kind === b.kind && a.group === b.group;
}

/** What `confighash halt`/`resume` asks of a source, given its record: the control to write, or why none. */
type ControlAsk =
  | { readonly ok: true; readonly control: string; readonly said: string }
  | { readonly ok: false; readonly said: string };

export function askFanout(
  action: FanoutAction,
  record: FanoutRecord | undefined,
  source: string,
): ControlAsk {
  if (!record)
    return {
      ok: false,
      said: `${source} has no fan-out: follow mode never fanned out a change of it`,
    };
  const control = formatFanoutControl({ action, change: record.change });
  const change = `change ${record.change} of ${source}`;
  const canaries = (record.canaries ?? [])
    .map((one) => `${one.kind.toLowerCase()}/${one.name}`)
    .join(', ');
  if (action === 'halt') {
    if (record.phase === 'canary' || record.phase === 'draining') {
      const where =
        record.phase === 'canary'
          ? `being tested on canary ${canaries}`
          : 'rolling out to the rest';
      return {
        ok: true,
        control,
        said: `halting ${change}, ${where}: follow mode touches nothing more for it once it reads this`,
      };
    }
    return {
      ok: false,
      said:
        record.phase === 'halted'
          ? `${change} is halted already: ${record.why ?? 'halted'}`
          : `nothing to halt: ${change} rolled out to every reader`,
    };
  }
  if (record.phase !== 'halted') {
    return {
      ok: false,
      said: `nothing to resume: ${change} is ${record.phase === 'done' ? 'rolled out to every reader' : record.phase === 'canary' ? `being tested on canary ${canaries}` : 'rolling out to the rest'}`,
    };
  }
  return action === 'resume'
    ? {
        ok: true,
        control,
        said: `releasing ${change} (halted: ${record.why ?? 'halted'}): follow mode rolls the rest once it reads this`,
      }
    : {
        ok: true,
        control,
        said: `testing ${change} again on a canary (halted: ${record.why ?? 'halted'}): follow mode chooses one once it reads this`,
      };
}

function readRecordedWorkload(value: unknown): RecordedWorkload[] {
  if (!isObject(value)) return [];
  const { group, kind, name } = value;
  if (typeof group !== 'string' || typeof kind !== 'string' || typeof name !== 'string') return [];
  return [{ group, kind, name, ...optionalText(value, 'sent') }];
}

function optionalText(value: Record<string, unknown>, key: string): Record<string, string> {
  const text = value[key];
  return typeof text === 'string' ? { [key]: text } : {};
}
