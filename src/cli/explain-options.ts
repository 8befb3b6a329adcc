// `confighash explain KIND/NAME -n NS`: which workload, as kubectl names it
// (`deploy/web`, `sts/db`, `ds/agent`), which cluster (kubectl-options.ts) and the output
// format.

import { findWorkloadKindByName, type WorkloadKind } from '../workload/index.js';
import { CLI_KIND_OPTION, parseCliKinds } from './kind-options.js';
import {
  type ClusterSelection,
  KUBECTL_OPTIONS,
  type OutputFormat,
  parseKubectlChoices,
} from './kubectl-options.js';
import { fail, type OptionSpec, type ParseResult, parseOptions } from './options.js';

interface ExplainConfig {
  readonly kind: WorkloadKind;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly cluster: ClusterSelection;
  readonly output: OutputFormat;
  /** Every kind confighash knows, plus those of --kind: KIND is looked up among these. */
  readonly kinds: readonly WorkloadKind[];
}

export const EXPLAIN_OPTIONS: readonly OptionSpec[] = [...KUBECTL_OPTIONS, CLI_KIND_OPTION];

export function parseExplainConfig(argv: readonly string[]): ParseResult<ExplainConfig> {
  const values = parseOptions('explain', EXPLAIN_OPTIONS, argv, {}, { positionals: true });
  if (!values.ok) return values;
  if (values.positionals.length !== 1) {
    return fail('say which workload: confighash explain KIND/NAME, e.g. deploy/web');
  }
  const target = values.positionals[0]!;
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(target);
  if (!match) return fail(`'${target}' is not KIND/NAME, e.g. deploy/web, sts/db, ds/agent`);
  const kinds = parseCliKinds(values.all('kind'));
  if (typeof kinds === 'string') return fail(kinds);
  const kind = findWorkloadKindByName(match[1]!, kinds);
  if (!kind) {
    const names = kinds.map((known) => known.shortNames[0] ?? known.resource).join(', ');
    return fail(`'${match[1]}' is not a kind confighash handles (${names})`);
  }
  const choices = parseKubectlChoices(values.get);
  if (typeof choices === 'string') return fail(choices);
  return {
    ok: true,
    config: Object.freeze({
      kind,
      name: match[2]!,
      namespace: values.get('namespace'),
      ...choices,
      kinds,
    }),
  };
}
