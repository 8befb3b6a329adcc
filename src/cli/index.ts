// Command-line options and their environment variables, parsed and validated
// into frozen configs, one module per command; the machinery is options.ts.
// Nothing here reads files or exits the process.

import { EVERY_KNOWN_KIND } from '../workload/index.js';
import { type CompletionTable, completionScript, SHELLS, type Shell } from './completion.js';
import { DEV_CERTS_OPTIONS } from './dev-certs-options.js';
import { DOCTOR_OPTIONS } from './doctor-options.js';
import { EXPLAIN_OPTIONS } from './explain-options.js';
import { HALT_OPTIONS, RESUME_OPTIONS } from './fanout-control-options.js';
import { FOLLOW_COMMAND_OPTIONS } from './follow-command-options.js';
import { GLOBAL_VALUE_FLAGS } from './kubectl-options.js';
import { helpFor, type OptionSpec } from './options.js';
import { PLAN_OPTIONS } from './plan-options.js';
import { ALL_SERVE_OPTIONS } from './serve-options.js';
import { BARE_COMMANDS, COMMANDS } from './synopses.js';

export { parseDevCertsConfig } from './dev-certs-options.js';
export { parseDoctorConfig } from './doctor-options.js';
export { type ExplainTargets, type NamedWorkload, parseExplainConfig } from './explain-options.js';
export { parseFanoutControlConfig } from './fanout-control-options.js';
export {
  type FollowCommandConfig,
  parseFollowCommandConfig,
} from './follow-command-options.js';
export type { FollowConfig } from './follow-mode-options.js';
export type { FollowerLease } from './follower-lease-options.js';
export type { ClientChoices, ClusterSelection, OutputFormat } from './kubectl-options.js';
export type { ParseResult } from './options.js';
export { type ManifestInput, parsePlanConfig } from './plan-options.js';
export type { SelfManagedOptions } from './self-managed-options.js';
export { parseServeConfig, type ServeConfig } from './serve-options.js';
export { BARE_COMMANDS, COMMANDS, usage } from './synopses.js';

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
  doctor: DOCTOR_OPTIONS,
  halt: HALT_OPTIONS,
  resume: RESUME_OPTIONS,
  completion: [],
  version: [],
};

/** What `confighash COMMAND --help` prints; undefined for a command that does not exist. */
export function commandHelp(command: string): string | undefined {
  const specs = OPTIONS_OF[command];
  return specs ? helpFor(command, specs) : undefined;
}

/** `confighash completion SHELL`: the script, or the one-line mistake. */
export function completion(shell: string | undefined): { script: string } | { error: string } {
  if (!(SHELLS as readonly string[]).includes(shell ?? '')) {
    return { error: `say which shell: confighash completion ${SHELLS.join('|')}` };
  }
  const table: CompletionTable = {
    commands: [...COMMANDS, ...BARE_COMMANDS].map(({ name }) => ({
      name,
      options: OPTIONS_OF[name] ?? [],
    })),
    kinds: [...new Set(EVERY_KNOWN_KIND.flatMap((kind) => [...kind.shortNames, kind.resource]))],
  };
  return { script: completionScript(shell as Shell, table) };
}

/**
 * The command and its arguments, wherever kubectl's options stand: `kubectl confighash -n demo
 * explain deploy/web` is `explain deploy/web -n demo`. Before the command only kubectl's
 * options may stand (GLOBAL_VALUE_FLAGS take the next word); anything else is left where it
 * is, for the command's own parser or main's --help and --version.
 */
export function splitCommand(argv: readonly string[]): { command?: string; rest: string[] } {
  let index = 0;
  while (index < argv.length) {
    const word = argv[index]!;
    if (!word.startsWith('-') || word === '-') break;
    if (!GLOBAL_FLAG.test(word)) return { command: argv[0], rest: argv.slice(1) };
    index += GLOBAL_VALUE_FLAGS.includes(word) ? 2 : 1;
  }
  if (index === 0 || index >= argv.length) return { command: argv[0], rest: argv.slice(1) };
  return { command: argv[index], rest: [...argv.slice(0, index), ...argv.slice(index + 1)] };
}

/** A kubectl option before the command: its name alone, `--name=value`, or `-nVALUE`. */
const GLOBAL_FLAG = new RegExp(
  `^(?:${GLOBAL_VALUE_FLAGS.map((flag) => flag.replace(/-/g, '\\-')).join('|')})(?:=.*|(?<=^-[a-zA-Z]).+)?$`,
  's',
);
