// `confighash doctor [-n NAMESPACE]`: which namespace and cluster (kubectl-options.ts), which
// webhook registration, and where the follower's Lease is.

import {
  FOLLOWER_LEASE_OPTIONS,
  type FollowerLease,
  parseFollowerLease,
} from './follower-lease-options.js';
import {
  CLUSTER_OPTIONS,
  type ClientChoices,
  type ClusterSelection,
  parseKubectlChoices,
} from './kubectl-options.js';
import { fail, type OptionSpec, type ParseResult, parseOptions } from './options.js';

interface DoctorConfig {
  readonly namespace: string | undefined;
  readonly cluster: ClusterSelection;
  readonly client: ClientChoices;
  readonly webhookConfiguration: string;
  readonly lease: FollowerLease;
}

export const DOCTOR_OPTIONS: readonly OptionSpec[] = [
  ...CLUSTER_OPTIONS,
  {
    flag: 'webhook-configuration',
    value: 'NAME',
    defaultValue: 'confighash',
    help: 'the MutatingWebhookConfiguration to check',
  },
  ...FOLLOWER_LEASE_OPTIONS,
];

export function parseDoctorConfig(argv: readonly string[]): ParseResult<DoctorConfig> {
  const values = parseOptions('doctor', DOCTOR_OPTIONS, argv, {});
  if (!values.ok) return values;
  const choices = parseKubectlChoices(values.get);
  if (typeof choices === 'string') return fail(choices);
  const lease = parseFollowerLease(values.get);
  if (typeof lease === 'string') return fail(lease);
  const webhookConfiguration = values.get('webhook-configuration');
  if (!webhookConfiguration) return fail('--webhook-configuration needs a name');
  return {
    ok: true,
    config: Object.freeze({
      namespace: values.get('namespace'),
      cluster: choices.cluster,
      client: choices.client,
      webhookConfiguration,
      lease,
    }),
  };
}
