// The options plan and explain share with kubectl, spelled as kubectl spells
// them: which kubeconfig and context (--kubeconfig, --context), the default
// namespace (-n) and a machine-readable answer (-o json|yaml).

import type { OptionSpec } from './options.js';

/** Which kubeconfig and context to read; absent fields mean kubectl's defaults (KUBECONFIG, its current-context). */
export interface ClusterSelection {
  readonly kubeconfig?: string;
  readonly context?: string;
}

export type OutputFormat = 'text' | 'json' | 'yaml';

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

const OUTPUT_OPTION: OptionSpec = {
  flag: 'output',
  short: 'o',
  value: 'FORMAT',
  help: 'json or yaml, for a program to read (default: text for people)',
};

export const KUBECTL_OPTIONS: readonly OptionSpec[] = [
  KUBECONFIG_OPTION,
  CONTEXT_OPTION,
  NAMESPACE_OPTION,
  OUTPUT_OPTION,
];

function parseOutput(value: string | undefined): OutputFormat | string {
  if (value === undefined) return 'text';
  return value === 'json' || value === 'yaml' ? value : `-o must be json or yaml, got '${value}'`;
}

function isOutputFormat(value: string): value is OutputFormat {
  return value === 'text' || value === 'json' || value === 'yaml';
}

/** What plan and explain take as kubectl does: the output format and the cluster selection. */
interface KubectlChoices {
  readonly output: OutputFormat;
  readonly cluster: ClusterSelection;
}

/** -o, --kubeconfig and --context from the parsed flags; a string is the one-line mistake. */
export function parseKubectlChoices(
  get: (flag: string) => string | undefined,
): KubectlChoices | string {
  const output = parseOutput(get('output'));
  if (!isOutputFormat(output)) return output;
  const cluster = parseClusterSelection(get);
  if (typeof cluster === 'string') return cluster;
  return { output, cluster };
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
