// "Is this fan-out large" (docs/design.md §6, approval above a size): with
// `--follow-max-fanout N`, a change of a source that more than N handled workloads read fans
// out only at content someone approved; N = 0 turns the approval off. One rule for follow
// mode (which holds such a change) and plan (which says it will wait).

/** Whether `--follow-max-fanout` is off: no change waits for approval, whatever its size. */
export function isFanoutLimitOff(maxFanout: number): boolean {
  return maxFanout === 0;
}

/** Whether a change read by `readers` handled workloads waits for approval under `maxFanout`. */
export function isLargeFanout(readers: number, maxFanout: number): boolean {
  return !isFanoutLimitOff(maxFanout) && readers > maxFanout;
}
