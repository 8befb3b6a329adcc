// Where plan, explain and doctor find follow mode's Lease: the follower's own --lease-namespace
// and --lease-name (follow-mode-options.ts), which the CLI cannot read from the cluster.

import type { OptionSpec } from './options.js';

export interface FollowerLease {
  readonly namespace: string;
  readonly name: string;
}

export const FOLLOWER_LEASE_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'lease-namespace',
    value: 'NS',
    defaultValue: 'confighash-system',
    help: "the follower's --lease-namespace: where its Lease says who leads",
  },
  {
    flag: 'lease-name',
    value: 'NAME',
    defaultValue: 'confighash-follow',
    help: "the follower's --lease-name",
  },
];

export function parseFollowerLease(
  get: (flag: string) => string | undefined,
): FollowerLease | string {
  const namespace = get('lease-namespace');
  const name = get('lease-name');
  if (!namespace) return '--lease-namespace needs a namespace';
  if (!name) return '--lease-name needs a name';
  return Object.freeze({ namespace, name });
}
