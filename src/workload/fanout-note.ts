// The words of a halted fan-out and of one that awaits approval (docs/design.md §6): follow
// mode writes them into the Events on the source, and `confighash explain` reads them back to
// say why a workload is held. One owner for both, so they cannot drift apart.

import { APPROVED_CHANGE } from './annotations.js';
import { FANOUT_CONTROL } from './fanout-record.js';
import { warning } from './warning.js';

/** The reason of the Event; explain finds the halt by it. */
export const FANOUT_HALTED = 'FanoutHalted';

interface FanoutHalt {
  /** `configmap/app` or `secret/app`. */
  readonly source: string;
  readonly namespace: string;
  /** The digest of the content whose fan-out halted. */
  readonly change: string;
}

/** The Event note of a halt: which change, why, how many workloads it holds, how to release it. */
export function fanoutHaltedNote(halt: FanoutHalt, why: string, held: number): string {
  const { source, namespace, change } = halt;
  return warning(
    `fan-out of change ${change} of ${source} halted: ${why}; ${held} workloads held; release it with: confighash resume ${source} -n ${namespace} (or kubectl annotate ${source} -n ${namespace} --overwrite ${FANOUT_CONTROL}='resume ${change}')`,
  );
}

/** The reason of the Event on a source whose large fan-out waits for approval. */
export const FANOUT_AWAITS_APPROVAL = 'FanoutAwaitsApproval';

interface AwaitedChange {
  /** `configmap/app` or `secret/app`. */
  readonly source: string;
  readonly namespace: string;
  /** The source's resourceVersion when the change was found waiting. */
  readonly resourceVersion: string;
  /** The content's digest: what the approval names. */
  readonly digest: string;
}

/** The Event note of a change that waits: its digest, its size, and the command that approves it. */
export function awaitingApprovalNote(
  change: AwaitedChange,
  readers: number,
  maxFanout: number,
): string {
  const { source, namespace, resourceVersion, digest } = change;
  return warning(
    `change ${digest} of ${source} at resourceVersion ${resourceVersion} awaits approval: ${readers} workloads read it, more than --follow-max-fanout ${maxFanout}; approve it with: kubectl annotate ${source} -n ${namespace} --overwrite ${APPROVED_CHANGE}=${digest}`,
  );
}

const AWAITING =
  /^confighash: change ([0-9a-f]{16}) of (\S+) at resourceVersion (\S+) awaits approval: \d+ workloads read it, more than --follow-max-fanout \d+; approve it with: kubectl annotate \S+ -n (\S+) /s;

/** The waiting change a note names; undefined for any other note. */
export function readAwaitingApprovalNote(note: string): AwaitedChange | undefined {
  const match = AWAITING.exec(note);
  return match
    ? { digest: match[1]!, source: match[2]!, resourceVersion: match[3]!, namespace: match[4]! }
    : undefined;
}
