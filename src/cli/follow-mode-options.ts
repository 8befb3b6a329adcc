// Follow mode's options (docs/design.md §6), which roll workloads on config changes
// that no write of theirs carries, and the Lease that elects the one replica
// doing it: `confighash follow` takes them (follow-command-options.ts).

import { hostname } from 'node:os';
import { DEFAULT_FOLLOW_OPTIONS, type FollowOptions } from '../follow/index.js';
import { type OptionSpec, parseDuration, parseInteger } from './options.js';

export interface FollowConfig {
  readonly options: FollowOptions;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
}

/** The tuning and the Lease of `confighash follow`. */
export const FOLLOW_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'follow-resync',
    env: 'CONFIGHASH_FOLLOW_RESYNC',
    value: 'DURATION',
    defaultValue: '10m',
    help: 'this often, evaluate the workloads whose sources changed since their last evaluation (none when nothing changed)',
  },
  {
    flag: 'follow-debounce',
    env: 'CONFIGHASH_FOLLOW_DEBOUNCE',
    value: 'DURATION',
    defaultValue: '10s',
    help: 'wait this long after the last change before touching',
  },
  {
    flag: 'follow-min-interval',
    env: 'CONFIGHASH_FOLLOW_MIN_INTERVAL',
    value: 'DURATION',
    defaultValue: '60s',
    help: 'touch one workload at most this often',
  },
  {
    flag: 'follow-rate',
    env: 'CONFIGHASH_FOLLOW_RATE',
    value: 'N',
    defaultValue: '5',
    help: 'touches per second, for the whole cluster',
  },
  {
    flag: 'follow-burst',
    env: 'CONFIGHASH_FOLLOW_BURST',
    value: 'N',
    defaultValue: '20',
    help: 'touches allowed at once above that rate',
  },
  {
    flag: 'follow-evaluate-rate',
    env: 'CONFIGHASH_FOLLOW_EVALUATE_RATE',
    value: 'N',
    defaultValue: '20',
    help: 'evaluations per second of a resync (every workload once after taking the lead)',
  },
  {
    flag: 'follow-canaries',
    env: 'CONFIGHASH_FOLLOW_CANARIES',
    value: 'N',
    defaultValue: '1',
    help: 'when one change of a source rolls several workloads, roll this many first (those annotated confighash.dev/canary: "true", else the first by kind and name that can test it) and the rest only once they proved it; 0: all at the rate; a namespace annotation confighash.dev/canaries wins',
  },
  {
    flag: 'follow-canary-window',
    env: 'CONFIGHASH_FOLLOW_CANARY_WINDOW',
    value: 'DURATION',
    defaultValue: '5m',
    help: "watch a canary this long from its touch: a pod of its new revision that crash-loops, cannot start or restarts, its kind's own failure, or a rollout not Ready by the end halts the change (so does a canary touch not sent within it); a namespace annotation confighash.dev/canary-window wins",
  },
  {
    flag: 'follow-canary-poll',
    env: 'CONFIGHASH_FOLLOW_CANARY_POLL',
    value: 'DURATION',
    defaultValue: '5s',
    help: "read a rolling canary's status this often",
  },
  {
    flag: 'follow-max-fanout',
    env: 'CONFIGHASH_FOLLOW_MAX_FANOUT',
    value: 'N',
    defaultValue: '0',
    help: 'a change of a source that more workloads read waits until someone approves it: the annotation confighash.dev/approved-change on the source, set to the digest its FanoutAwaitsApproval Event names; 0: off',
  },
  {
    flag: 'watch-scope',
    env: 'CONFIGHASH_WATCH_SCOPE',
    value: 'cluster|namespace',
    defaultValue: 'cluster',
    help: 'cluster: one watch per resource, cluster-wide; namespace: one per resource and follow namespace, for RBAC granted per namespace',
  },
  {
    flag: 'lease-namespace',
    env: 'POD_NAMESPACE',
    value: 'NS',
    defaultValue: 'confighash-system',
    help: 'namespace of the follow-mode Lease',
  },
  {
    flag: 'lease-name',
    env: 'CONFIGHASH_LEASE_NAME',
    value: 'NAME',
    defaultValue: 'confighash-follow',
    help: 'name of the follow-mode Lease',
  },
  {
    flag: 'identity',
    env: 'POD_NAME',
    value: 'ID',
    help: 'this replica in the Lease (default: host name and process id)',
  },
];

/** The FOLLOW_OPTIONS; a string is the one-line mistake. */
export function parseFollowConfig(
  get: (flag: string) => string | undefined,
): FollowConfig | string {
  const duration = (flag: string): number | string => {
    const value = parseDuration(get(flag));
    return value === undefined
      ? `--${flag} must be a duration such as 10s or 5m (a bare number is seconds), got '${get(flag)}'`
      : value;
  };
  const resyncMs = duration('follow-resync');
  const debounceMs = duration('follow-debounce');
  const minIntervalMs = duration('follow-min-interval');
  const canaryWindowMs = duration('follow-canary-window');
  const canaryPollMs = duration('follow-canary-poll');
  for (const value of [resyncMs, debounceMs, minIntervalMs, canaryWindowMs, canaryPollMs])
    if (typeof value === 'string') return value;
  if ((canaryPollMs as number) < 100)
    return `--follow-canary-poll must be at least 100ms, got '${get('follow-canary-poll')}'`;
  const canaries = parseInteger(get('follow-canaries'), 0, 1000);
  if (canaries === undefined)
    return `--follow-canaries must be a whole number from 0 to 1000, got '${get('follow-canaries')}'`;
  const maxFanout = parseInteger(get('follow-max-fanout'), 0, 1_000_000);
  if (maxFanout === undefined)
    return `--follow-max-fanout must be a whole number of at least 0, got '${get('follow-max-fanout')}'`;
  if ((resyncMs as number) < 1000)
    return `--follow-resync must be at least 1s, got '${get('follow-resync')}'`;
  const ratePerSecond = Number(get('follow-rate'));
  if (!(ratePerSecond > 0))
    return `--follow-rate must be a positive number, got '${get('follow-rate')}'`;
  const burst = parseInteger(get('follow-burst'), 1, 100_000);
  if (burst === undefined)
    return `--follow-burst must be a whole number of at least 1, got '${get('follow-burst')}'`;
  const evaluatePerSecond = Number(get('follow-evaluate-rate'));
  if (!(evaluatePerSecond > 0))
    return `--follow-evaluate-rate must be a positive number, got '${get('follow-evaluate-rate')}'`;
  const watchScope = get('watch-scope');
  if (watchScope !== 'cluster' && watchScope !== 'namespace')
    return `--watch-scope must be cluster or namespace, got '${watchScope}'`;
  return {
    options: {
      ...DEFAULT_FOLLOW_OPTIONS,
      resyncMs: resyncMs as number,
      debounceMs: debounceMs as number,
      minIntervalMs: minIntervalMs as number,
      ratePerSecond,
      burst,
      evaluatePerSecond,
      watchScope,
      canaries,
      canaryWindowMs: canaryWindowMs as number,
      canaryPollMs: canaryPollMs as number,
      maxFanout,
    },
    leaseNamespace: get('lease-namespace')!,
    leaseName: get('lease-name')!,
    identity: get('identity') ?? `${hostname()}_${process.pid}`,
  };
}
