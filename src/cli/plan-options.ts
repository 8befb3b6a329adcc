// `confighash plan`: which manifests (-f FILE|DIR|-, -R, -k DIR), the default namespace,
// which cluster (kubectl-options.ts), the follower's Lease, the output format and how the
// manifests will be applied. Flags only: a preview takes no environment variables.

import type { WorkloadKind } from '../workload/index.js';
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
import { fail, type OptionSpec, type ParseResult, parseInteger, parseOptions } from './options.js';

export type ManifestInput =
  | {
      readonly from: 'files';
      /** Files, directories (their .yaml, .yml and .json files) and `-` (stdin). */
      readonly paths: readonly string[];
      /** -R: a directory's subdirectories too. */
      readonly recursive: boolean;
    }
  | { readonly from: 'kustomize'; readonly dir: string };

interface PlanConfig {
  readonly input: ManifestInput;
  /** -n: the namespace of objects that name none; else the kubeconfig's. */
  readonly namespace: string | undefined;
  readonly cluster: ClusterSelection;
  readonly client: ClientChoices;
  readonly output: OutputFormat;
  readonly lease: FollowerLease;
  readonly clientSide: boolean;
  readonly offline: boolean;
  /** The follower's --follow-max-fanout: its waits for approval are shown; 0: none. */
  readonly maxFanout: number;
  /** Every kind confighash knows, plus those of --kind: the manifests' workloads of these kinds are planned. */
  readonly kinds: readonly WorkloadKind[];
}

export const PLAN_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'filename',
    short: 'f',
    value: 'FILE',
    help: 'manifests to preview: a file, a directory (its .yaml, .yml and .json files) or - (stdin); repeatable',
  },
  {
    flag: 'recursive',
    short: 'R',
    value: '',
    boolean: true,
    help: "with -f DIR, the directory's subdirectories too",
  },
  { flag: 'kustomize', short: 'k', value: 'DIR', help: 'render DIR with kubectl kustomize' },
  ...KUBECTL_OPTIONS,
  {
    flag: 'client-side',
    value: '',
    boolean: true,
    help: 'the manifests are applied client-side (kubectl apply, Helm 3), not server-side',
  },
  { flag: 'offline', value: '', boolean: true, help: 'use the manifests alone; read no cluster' },
  {
    flag: 'follow-max-fanout',
    value: 'N',
    defaultValue: '0',
    help: "the follower's --follow-max-fanout (the CLI cannot read it): say which changes wait for approval; 0: none",
  },
  ...FOLLOWER_LEASE_OPTIONS,
  CLI_KIND_OPTION,
];

export function parsePlanConfig(argv: readonly string[]): ParseResult<PlanConfig> {
  const values = parseOptions('plan', PLAN_OPTIONS, argv, {});
  if (!values.ok) return values;
  const { get, all } = values;
  const files = all('filename');
  const dir = get('kustomize');
  if (files.length > 0 && dir !== undefined) return fail('-f and -k cannot be combined');
  if (files.length === 0 && dir === undefined) {
    return fail('say which manifests: -f FILE, -f - (stdin) or -k DIR');
  }
  if (files.some((path) => path === '')) return fail('-f needs a file name, or - for stdin');
  if (files.filter((path) => path === '-').length > 1) return fail('-f - can be given once');
  const choices = parseKubectlChoices(get);
  if (typeof choices === 'string') return fail(choices);
  const kinds = parseCliKinds(all('kind'));
  if (typeof kinds === 'string') return fail(kinds);
  const lease = parseFollowerLease(get);
  if (typeof lease === 'string') return fail(lease);
  const recursive = get('recursive') === 'true';
  if (recursive && dir !== undefined) return fail('-R reads -f directories; -k renders its own');
  const maxFanout = parseInteger(get('follow-max-fanout'), 0, 1_000_000);
  if (maxFanout === undefined) {
    return fail(
      `--follow-max-fanout must be a whole number of at least 0, got '${get('follow-max-fanout')}'`,
    );
  }
  const input: ManifestInput =
    dir === undefined ? { from: 'files', paths: files, recursive } : { from: 'kustomize', dir };
  return {
    ok: true,
    config: Object.freeze({
      input,
      namespace: get('namespace'),
      ...choices,
      lease,
      clientSide: get('client-side') === 'true',
      offline: get('offline') === 'true',
      maxFanout,
      kinds,
    }),
  };
}
