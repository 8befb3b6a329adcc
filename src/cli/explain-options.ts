// `confighash explain`: which workloads, as kubectl names them — `deploy/web`, `deploy web`,
// several (`deploy web api`, `deploy/web sts/db`), or a selection (`deploy -l app=web`,
// `deploy -A`) — which cluster (kubectl-options.ts), the follower's Lease and the output
// format.

import { findWorkloadKindByName, type WorkloadKind } from '../workload/index.js';
import {
  FOLLOWER_LEASE_OPTIONS,
  type FollowerLease,
  parseFollowerLease,
} from './follower-lease-options.js';
import { CLI_KIND_OPTION, parseCliKinds } from './kind-options.js';
import {
  type ClientChoices,
  type ClusterSelection,
  KUBECTL_OPTIONS,
  type OutputFormat,
  parseKubectlChoices,
} from './kubectl-options.js';
import { fail, type OptionSpec, type ParseResult, parseOptions } from './options.js';

/** One workload by kind and name. */
export interface NamedWorkload {
  readonly kind: WorkloadKind;
  readonly name: string;
}

/** Workloads by name, or every one of a kind a selector picks (in the namespace, or all). */
export type ExplainTargets =
  | { readonly by: 'name'; readonly workloads: readonly NamedWorkload[] }
  | {
      readonly by: 'selection';
      readonly kind: WorkloadKind;
      readonly selector: string | undefined;
      readonly allNamespaces: boolean;
    };

interface ExplainConfig {
  readonly targets: ExplainTargets;
  readonly namespace: string | undefined;
  readonly cluster: ClusterSelection;
  readonly client: ClientChoices;
  readonly output: OutputFormat;
  readonly lease: FollowerLease;
  /** Every kind confighash knows, plus those of --kind: KIND is looked up among these. */
  readonly kinds: readonly WorkloadKind[];
}

export const EXPLAIN_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'selector',
    short: 'l',
    value: 'SELECTOR',
    help: 'every workload of the kind with these labels (app=web,tier!=db), as kubectl get -l',
  },
  {
    flag: 'all-namespaces',
    short: 'A',
    value: '',
    boolean: true,
    help: 'in every namespace, not only -n’s',
  },
  ...KUBECTL_OPTIONS,
  ...FOLLOWER_LEASE_OPTIONS,
  CLI_KIND_OPTION,
];

const EXAMPLES = 'e.g. deploy/web, deploy web api, sts/db ds/agent, deploy -l app=web';

export function parseExplainConfig(argv: readonly string[]): ParseResult<ExplainConfig> {
  const values = parseOptions('explain', EXPLAIN_OPTIONS, argv, {}, { positionals: true });
  if (!values.ok) return values;
  const kinds = parseCliKinds(values.all('kind'));
  if (typeof kinds === 'string') return fail(kinds);
  const selector = values.get('selector');
  if (selector === '') return fail('-l needs a label selector, e.g. app=web');
  const allNamespaces = values.get('all-namespaces') === 'true';
  const targets = parseTargets(values.positionals, kinds, { selector, allNamespaces });
  if (typeof targets === 'string') return fail(targets);
  const choices = parseKubectlChoices(values.get);
  if (typeof choices === 'string') return fail(choices);
  const lease = parseFollowerLease(values.get);
  if (typeof lease === 'string') return fail(lease);
  return {
    ok: true,
    config: Object.freeze({
      targets,
      namespace: values.get('namespace'),
      ...choices,
      lease,
      kinds,
    }),
  };
}

/** kubectl's forms: TYPE/NAME…, TYPE NAME…, or TYPE with -l and -A (or neither: all of it). */
export function parseTargets(
  positionals: readonly string[],
  kinds: readonly WorkloadKind[],
  { selector, allNamespaces }: { selector: string | undefined; allNamespaces: boolean },
): ExplainTargets | string {
  if (positionals.length === 0)
    return `say which workload: confighash explain TYPE/NAME (${EXAMPLES})`;
  const slashed = positionals.filter((arg) => arg.includes('/'));
  const selecting = selector !== undefined || allNamespaces;
  if (slashed.length > 0) {
    if (slashed.length !== positionals.length) {
      return `give every workload as TYPE/NAME, or one TYPE and its names (${EXAMPLES})`;
    }
    if (selecting) return names(selector);
    const workloads: NamedWorkload[] = [];
    for (const arg of positionals) {
      const match = /^([^/\s]+)\/([^/\s]+)$/.exec(arg);
      if (!match) return `'${arg}' is not TYPE/NAME (${EXAMPLES})`;
      const kind = kindNamed(match[1]!, kinds);
      if (typeof kind === 'string') return kind;
      workloads.push({ kind, name: match[2]! });
    }
    return { by: 'name', workloads };
  }
  const [type, ...rest] = positionals as [string, ...string[]];
  const kind = kindNamed(type, kinds);
  if (typeof kind === 'string') return kind;
  if (rest.length === 0) return { by: 'selection', kind, selector, allNamespaces };
  if (selecting) return names(selector);
  return { by: 'name', workloads: rest.map((name) => ({ kind, name })) };
}

/** kubectl's own two refusals, in its words. */
function names(selector: string | undefined): string {
  return selector !== undefined
    ? 'a name cannot be given together with -l: name the workloads, or select them'
    : 'a workload cannot be named across all namespaces (-A): drop -A, or give -n';
}

function kindNamed(type: string, kinds: readonly WorkloadKind[]): WorkloadKind | string {
  const kind = findWorkloadKindByName(type, kinds);
  if (kind) return kind;
  const known = kinds.map((one) => one.shortNames[0] ?? one.resource).join(', ');
  return `'${type}' is not a kind confighash handles (${known})`;
}
