// `confighash halt SOURCE` and `confighash resume SOURCE [--retry-canary]` (docs/design.md §6
// "Stop and release by hand"): which source, as kubectl names it (`configmap/app`, `cm/app`,
// `secret/db`), and which cluster (kubectl-options.ts).

import type { FanoutAction } from '../workload/index.js';
import {
  CLUSTER_OPTIONS,
  type ClientChoices,
  type ClusterSelection,
  parseKubectlChoices,
} from './kubectl-options.js';
import { fail, type OptionSpec, type ParseResult, parseOptions } from './options.js';

/** A ConfigMap or Secret, as the command names it. */
interface NamedConfig {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
}

interface FanoutControlConfig {
  readonly action: FanoutAction;
  readonly source: NamedConfig;
  readonly namespace: string | undefined;
  readonly cluster: ClusterSelection;
  readonly client: ClientChoices;
}

const RETRY_CANARY: OptionSpec = {
  flag: 'retry-canary',
  value: '',
  boolean: true,
  help: 'test the change on a canary again instead of releasing the rest (a canary that has it already is not one)',
};

export const HALT_OPTIONS: readonly OptionSpec[] = CLUSTER_OPTIONS;
export const RESUME_OPTIONS: readonly OptionSpec[] = [...HALT_OPTIONS, RETRY_CANARY];

const KINDS: Readonly<Record<string, NamedConfig['kind']>> = {
  configmap: 'ConfigMap',
  configmaps: 'ConfigMap',
  cm: 'ConfigMap',
  secret: 'Secret',
  secrets: 'Secret',
};

export function parseFanoutControlConfig(
  command: 'halt' | 'resume',
  argv: readonly string[],
): ParseResult<FanoutControlConfig> {
  const specs = command === 'halt' ? HALT_OPTIONS : RESUME_OPTIONS;
  const values = parseOptions(command, specs, argv, {}, { positionals: true });
  if (!values.ok) return values;
  if (values.positionals.length !== 1) {
    return fail(`say which source: confighash ${command} configmap/NAME (or secret/NAME)`);
  }
  const target = values.positionals[0]!;
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(target);
  const kind = match ? KINDS[match[1]!.toLowerCase()] : undefined;
  if (!match || !kind) return fail(`'${target}' is not configmap/NAME or secret/NAME`);
  const choices = parseKubectlChoices(values.get);
  if (typeof choices === 'string') return fail(choices);
  const retry = values.get('retry-canary') === 'true';
  return {
    ok: true,
    config: Object.freeze({
      action: command === 'halt' ? 'halt' : retry ? 'retry-canary' : 'resume',
      source: { kind, name: match[2]! },
      namespace: values.get('namespace'),
      cluster: choices.cluster,
      client: choices.client,
    }),
  };
}
