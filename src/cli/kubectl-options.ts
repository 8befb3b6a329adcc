// The options the CLI commands (plan, explain, doctor, halt, resume) share with kubectl, spelled
// as kubectl spells them: which kubeconfig and context (--kubeconfig, --context), the default
// namespace (-n), who to act as (--as), how long to wait (--request-timeout), how much to log
// (-v) and the answer's form (-o json|yaml|name).

import { type OptionSpec, parseDuration } from './options.js';

/** Which kubeconfig and context to read; absent fields mean kubectl's defaults (KUBECONFIG, its current-context). */
export interface ClusterSelection {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** How the command talks to the cluster once it is found. */
export interface ClientChoices {
  /** --as: the user the requests impersonate (the Impersonate-User header). */
  readonly impersonate?: string;
  /** --request-timeout: the whole command's deadline against the cluster; 0: none. */
  readonly requestTimeoutMs: number;
  /** -v: at 6 and above every API request is logged on stderr (method, URL, status, time). */
  readonly verbosity: number;
}

export type OutputFormat = 'text' | 'json' | 'yaml' | 'name';

/** The --request-timeout of a command that names none. */
export const DEFAULT_REQUEST_TIMEOUT = '60s';

export const KUBECONFIG_OPTION: OptionSpec = {
  flag: 'kubeconfig',
  value: 'PATH',
  help: 'the kubeconfig file to use (default: KUBECONFIG, files joined by :, else ~/.kube/config)',
};

export const CONTEXT_OPTION: OptionSpec = {
  flag: 'context',
  value: 'NAME',
  help: "the kubeconfig context to use (default: the kubeconfig's current-context)",
};

export const NAMESPACE_OPTION: OptionSpec = {
  flag: 'namespace',
  short: 'n',
  value: 'NS',
  help: "namespace (default: the kubeconfig context's, else default)",
};

export const AS_OPTION: OptionSpec = {
  flag: 'as',
  value: 'USER',
  help: 'act as this user (impersonation: you need the impersonate right), e.g. system:serviceaccount:NS:NAME',
};

export const REQUEST_TIMEOUT_OPTION: OptionSpec = {
  flag: 'request-timeout',
  value: 'DURATION',
  defaultValue: DEFAULT_REQUEST_TIMEOUT,
  help: 'how long the command may wait for the cluster, all requests together (10s, 2m; a bare number is seconds; 0: no limit)',
};

export const VERBOSITY_OPTION: OptionSpec = {
  flag: 'v',
  short: 'v',
  value: 'N',
  defaultValue: '0',
  help: 'log level as kubectl counts it: 6 and above log every API request on stderr (method, URL, status, time)',
};

const OUTPUT_OPTION: OptionSpec = {
  flag: 'output',
  short: 'o',
  value: 'FORMAT',
  help: 'json or yaml (a List, for a program to read), name (kind.group/name, one a line); default: a table for people',
};

/** Which cluster, as whom, and how long: every command that reads the cluster takes these. */
export const CLUSTER_OPTIONS: readonly OptionSpec[] = [
  KUBECONFIG_OPTION,
  CONTEXT_OPTION,
  NAMESPACE_OPTION,
  AS_OPTION,
  REQUEST_TIMEOUT_OPTION,
  VERBOSITY_OPTION,
];

export const KUBECTL_OPTIONS: readonly OptionSpec[] = [...CLUSTER_OPTIONS, OUTPUT_OPTION];

/**
 * The options kubectl takes before its command (`kubectl -n demo get …`) that take a value:
 * main.ts reads past them to find the command, and hands them to it.
 */
export const GLOBAL_VALUE_FLAGS: readonly string[] = KUBECTL_OPTIONS.flatMap((spec) => [
  `--${spec.flag}`,
  ...(spec.short ? [`-${spec.short}`] : []),
]);

const OUTPUT_FORMATS: readonly OutputFormat[] = ['json', 'yaml', 'name'];

function parseOutput(value: string | undefined): OutputFormat | string {
  if (value === undefined) return 'text';
  return (OUTPUT_FORMATS as readonly string[]).includes(value)
    ? (value as OutputFormat)
    : `-o must be json, yaml or name, got '${value}'`;
}

function isOutputFormat(value: string): value is OutputFormat {
  return value === 'text' || (OUTPUT_FORMATS as readonly string[]).includes(value);
}

/** What the CLI commands take as kubectl does: the output format, the cluster and the client. */
interface KubectlChoices {
  readonly output: OutputFormat;
  readonly cluster: ClusterSelection;
  readonly client: ClientChoices;
}

/** -o, --kubeconfig, --context, --as, --request-timeout and -v from the parsed flags; a string is the one-line mistake. */
export function parseKubectlChoices(
  get: (flag: string) => string | undefined,
): KubectlChoices | string {
  const output = parseOutput(get('output'));
  if (!isOutputFormat(output)) return output;
  const cluster = parseClusterSelection(get);
  if (typeof cluster === 'string') return cluster;
  const client = parseClientChoices(get);
  if (typeof client === 'string') return client;
  return { output, cluster, client };
}

/** --as, --request-timeout and -v; a string is the one-line mistake. */
export function parseClientChoices(
  get: (flag: string) => string | undefined,
): ClientChoices | string {
  const as = get('as');
  if (as === '') return '--as needs a user name';
  const timeout = get('request-timeout') ?? DEFAULT_REQUEST_TIMEOUT;
  const requestTimeoutMs = parseDuration(timeout);
  if (requestTimeoutMs === undefined) {
    return `--request-timeout must be a duration such as 30s or 2m (a bare number is seconds; 0: no limit), got '${timeout}'`;
  }
  const level = get('v') ?? '0';
  if (!/^\d{1,2}$/.test(level)) return `-v must be a whole number such as 6, got '${level}'`;
  return Object.freeze({
    ...(as === undefined ? {} : { impersonate: as }),
    requestTimeoutMs,
    verbosity: Number(level),
  });
}

/** The selection from the parsed flags; an empty flag value is a mistake, as in kubectl. */
function parseClusterSelection(
  get: (flag: string) => string | undefined,
): ClusterSelection | string {
  const kubeconfig = get('kubeconfig');
  const context = get('context');
  if (kubeconfig === '') return '--kubeconfig needs a file name';
  if (context === '') return '--context needs a context name';
  return Object.freeze({
    ...(kubeconfig === undefined ? {} : { kubeconfig }),
    ...(context === undefined ? {} : { context }),
  });
}
