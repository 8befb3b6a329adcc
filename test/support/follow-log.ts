// Follow mode's own account of what it judged, read from its JSON log lines (debug level:
// `follow: change seen` for each change of a workload's sources, then its verdict after the
// debounce). A test that must know nothing is left to roll waits for these, not for a fixed time.

export interface FollowLogEntry {
  /** Milliseconds since the epoch, from the line's ISO 8601 `time`. */
  readonly time: number;
  readonly msg: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly workload?: string;
}

/** What follow mode decided about a change it saw: a touch, or nothing to roll. */
export const FOLLOW_VERDICTS: readonly string[] = ['follow: touched', 'follow: nothing to roll'];

/** The JSON lines of a follower's log: the runtime's own warnings may share it. */
export function followLogEntries(text: string): FollowLogEntry[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      const entry = JSON.parse(line) as Omit<FollowLogEntry, 'time'> & { time: string };
      return { ...entry, time: Date.parse(entry.time) };
    });
}

export interface JudgedChanges {
  readonly namespace: string;
  /** The Deployment whose changes are asked about. */
  readonly deployment: string;
  /** Only changes seen from this time on. */
  readonly since?: number;
  /** The debounce, less the time between a change's log line and its timer. */
  readonly verdictNotBeforeMs: number;
}

export interface Judged {
  /** How many changes of its sources follow mode saw. */
  readonly changesSeen: number;
  /** Its verdicts, in the log's order. */
  readonly verdicts: readonly string[];
}

/**
 * What follow mode judged of a Deployment, once every change of its sources the log has seen
 * has a verdict made at least a debounce after it (a change seen and not judged yet may still
 * roll it); undefined until then.
 */
export function judgedEveryChange(
  entries: readonly FollowLogEntry[],
  { namespace, deployment, since = 0, verdictNotBeforeMs }: JudgedChanges,
): Judged | undefined {
  const ours = entries.filter((entry) => entry.namespace === namespace && entry.time >= since);
  const verdicts = ours.filter(
    (entry) => FOLLOW_VERDICTS.includes(entry.msg) && entry.name === deployment,
  );
  const seen = ours.filter(
    (entry) => entry.msg === 'follow: change seen' && entry.workload === `Deployment/${deployment}`,
  );
  const judged = seen.every((change) =>
    verdicts.some((verdict) => verdict.time >= change.time + verdictNotBeforeMs),
  );
  return judged
    ? { changesSeen: seen.length, verdicts: verdicts.map((entry) => entry.msg) }
    : undefined;
}
