// `--kind`, shared by serve (which handles the kinds) and plan/explain (which must
// recognise the same objects). The webhook's rules (and follow mode's RBAC) must
// name a kind too: manifests/components/argo-rollouts and openkruise do both.

import {
  EVERY_KNOWN_KIND,
  KIND_OPTION_FORMAT,
  parseKindOption,
  type WorkloadKind,
  withKinds,
} from '../workload/index.js';
import type { OptionSpec } from './options.js';

const KIND_HELP =
  'argoproj.io/v1alpha1/Rollout, apps.kruise.io/v1alpha1/CloneSet, apps.kruise.io/v1beta1/StatefulSet, or any kind with the path of its pod template';

export const SERVE_KIND_OPTION: OptionSpec = {
  flag: 'kind',
  env: 'CONFIGHASH_KINDS',
  value: KIND_OPTION_FORMAT,
  help: `also handle this kind (repeatable; env: comma-separated): ${KIND_HELP}`,
};

/** plan and explain know the kinds above already; a kind of your own needs its template's path. */
export const CLI_KIND_OPTION: OptionSpec = {
  flag: 'kind',
  value: KIND_OPTION_FORMAT,
  help: 'also read this kind, as serve --kind takes it (repeatable), e.g. example.com/v1/Worker=spec.pod.template',
};

/** `base` plus the kinds of `--kind` values (a later one for the same kind wins), or the first mistake. */
export function parseKinds(
  values: readonly string[],
  base?: readonly WorkloadKind[],
): readonly WorkloadKind[] | string {
  const kinds: WorkloadKind[] = [];
  for (const value of values) {
    const parsed = parseKindOption(value);
    if (!parsed.ok) return parsed.error;
    kinds.push(parsed.kind);
  }
  return withKinds(kinds, base);
}

/** What plan and explain read: every kind confighash knows (they cannot see the webhook's flags), plus --kind. */
export function parseCliKinds(values: readonly string[]): readonly WorkloadKind[] | string {
  return parseKinds(values, EVERY_KNOWN_KIND);
}
