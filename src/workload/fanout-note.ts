// The words of a halted fan-out (docs/design.md §6 "Canary-first fan-out"): follow mode
// writes them into the FanoutHalted Event on the source, and `confighash explain` reads them
// back to say why a workload is held. One owner for both, so they cannot drift apart.

import { warning } from './warning.js';

/** The reason of the Event; explain finds the halt by it. */
export const FANOUT_HALTED = 'FanoutHalted';

export interface FanoutHalt {
  /** `deployment/web`, as kubectl names it. */
  readonly canary: string;
  /** `configmap/app` or `secret/app`. */
  readonly source: string;
  /** The source's resourceVersion whose fan-out halted; `deleted` when it was deleted. */
  readonly resourceVersion: string;
}

/** The Event note of a halt: what failed, why, and how many workloads it holds. */
export function fanoutHaltedNote(halt: FanoutHalt, why: string, held: number): string {
  return warning(
    `fan-out halted: canary ${halt.canary} failed (${why}) for ${halt.source} at resourceVersion ${halt.resourceVersion}; ${held} workloads held`,
  );
}

const HALTED =
  /^confighash: fan-out halted: canary (\S+) failed \(.*\) for (\S+) at resourceVersion (\S+); \d+ workloads held$/s;

/** The halt a note names; undefined for any other note. */
export function readFanoutHaltedNote(note: string): FanoutHalt | undefined {
  const match = HALTED.exec(note);
  return match ? { canary: match[1]!, source: match[2]!, resourceVersion: match[3]! } : undefined;
}
