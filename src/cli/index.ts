// Command-line options and their environment variables, parsed and validated
// into frozen configs, one module per command; the machinery is options.ts.
// Nothing here reads files or exits the process.

import { DEV_CERTS_OPTIONS } from './dev-certs-options.js';
import { EXPLAIN_OPTIONS } from './explain-options.js';
import { HALT_OPTIONS, RESUME_OPTIONS } from './fanout-control-options.js';
import { FOLLOW_COMMAND_OPTIONS } from './follow-command-options.js';
import { helpFor, type OptionSpec } from './options.js';
import { PLAN_OPTIONS } from './plan-options.js';
import { ALL_SERVE_OPTIONS } from './serve-options.js';

export { parseDevCertsConfig } from './dev-certs-options.js';
export { parseExplainConfig } from './explain-options.js';
export { parseFanoutControlConfig } from './fanout-control-options.js';
export {
  type FollowCommandConfig,
  parseFollowCommandConfig,
} from './follow-command-options.js';
export type { FollowConfig } from './follow-mode-options.js';
export type { ClusterSelection, OutputFormat } from './kubectl-options.js';
export type { ParseResult } from './options.js';
export { type ManifestInput, parsePlanConfig } from './plan-options.js';
export type { SelfManagedOptions } from './self-managed-options.js';
export { parseServeConfig, type ServeConfig } from './serve-options.js';
export { COMMANDS, usage } from './synopses.js';

/**
 * Every environment variable an option is read from. A variable the kubelet sets for a
 * Service (its links: `<SERVICE>_PORT…`, `<SERVICE>_SERVICE_…`) must never be one of
 * these: the Service `confighash` gives every pod `CONFIGHASH_PORT=tcp://10.0.0.221:443`,
 * and an option read from it would stop the webhook from starting.
 */
export function optionEnvironmentVariables(): readonly string[] {
  const specs = [...ALL_SERVE_OPTIONS, ...FOLLOW_COMMAND_OPTIONS, ...DEV_CERTS_OPTIONS];
  return [...new Set(specs.flatMap((spec) => (spec.env ? [spec.env] : [])))];
}

const OPTIONS_OF: Readonly<Record<string, readonly OptionSpec[]>> = {
  serve: ALL_SERVE_OPTIONS,
  follow: FOLLOW_COMMAND_OPTIONS,
  'dev-certs': DEV_CERTS_OPTIONS,
  plan: PLAN_OPTIONS,
  explain: EXPLAIN_OPTIONS,
  halt: HALT_OPTIONS,
  resume: RESUME_OPTIONS,
};

/** What `confighash COMMAND --help` prints; undefined for a command that does not exist. */
export function commandHelp(command: string): string | undefined {
  const specs = OPTIONS_OF[command];
  return specs ? helpFor(command, specs) : undefined;
}
