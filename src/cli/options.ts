// The option machinery: each option is a flag with an environment variable
// and maybe a default; parsing gives one-line mistakes naming the option, and
// help text lists both names. Commands (serve-options.ts, dev-certs-options.ts) declare their
// options as tables of OptionSpec; synopses.ts says what each command is for.
// Nothing here reads files or exits.

import { parseArgs } from 'node:util';
import { parseGoDuration } from '../runtime/index.js';
import { commandText } from './synopses.js';

export type ParseResult<T> =
  | { readonly ok: true; readonly config: T }
  | { readonly ok: false; readonly error: string }
  | { readonly ok: false; readonly help: string };

export type Environment = Readonly<Record<string, string | undefined>>;

export interface OptionSpec {
  readonly flag: string;
  /** The environment variable it is also read from; the CLI commands (plan, explain) have none. */
  readonly env?: string;
  /** A one-letter alias, as kubectl spells it (`-f`, `-n`, `-o`). */
  readonly short?: string;
  readonly value: string;
  readonly defaultValue?: string;
  readonly help: string;
  /** A flag without a value (`--flag`; env `true`/`false`). */
  readonly boolean?: true;
}

// --- parsing ---------------------------------------------------------------------

/** Parsed options: `get` the last value (flag, else environment, else default), `all` every value. */
type Parsed =
  | {
      ok: true;
      get: (flag: string) => string | undefined;
      all: (flag: string) => string[];
      /** Arguments that are not options, when the command takes them. */
      positionals: readonly string[];
    }
  | { ok: false; error: string }
  | { ok: false; help: string };

/** The values of a parse that succeeded. */
export type OptionValues = Extract<Parsed, { ok: true }>;

export function parseOptions(
  command: string,
  specs: readonly OptionSpec[],
  argv: readonly string[],
  env: Environment,
  { positionals = false }: { positionals?: boolean } = {},
): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.flatMap(splitShortEquals),
      strict: true,
      allowPositionals: positionals,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(
          specs.map((spec) => [
            spec.flag,
            {
              type: spec.boolean ? 'boolean' : 'string',
              multiple: true,
              ...(spec.short ? { short: spec.short } : {}),
            } as const,
          ]),
        ),
      },
    });
  } catch (error) {
    return {
      ok: false,
      error: `${(error as Error).message.split('\n', 1)[0]} (see confighash ${command} --help)`,
    };
  }
  if (parsed.values.help) return { ok: false, help: helpFor(command, specs) };
  const all = (flag: string): string[] => {
    const fromFlag = (parsed.values[flag] as (string | boolean)[] | undefined)?.map(String);
    if (fromFlag && fromFlag.length > 0) return fromFlag;
    const fromEnv = env[envOf(specs, flag)];
    if (fromEnv !== undefined && fromEnv !== '')
      return fromEnv.split(',').map((part) => part.trim());
    return [];
  };
  const get = (flag: string): string | undefined => {
    const fromFlag = (parsed.values[flag] as (string | boolean)[] | undefined)?.map(String);
    if (fromFlag && fromFlag.length > 0) return fromFlag[fromFlag.length - 1];
    const fromEnv = env[envOf(specs, flag)];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    return specs.find((spec) => spec.flag === flag)?.defaultValue;
  };
  return { ok: true, get, all, positionals: parsed.positionals };
}

/** The left column's width: a longer flag puts its help on the next line. */
const HELP_COLUMN = 32;

/** `confighash COMMAND --help`: the command's usage line and summary, then its options only. */
export function helpFor(command: string, specs: readonly OptionSpec[]): string {
  const text = commandText(command);
  const lines = [...specs, HELP_OPTION].map((spec) => {
    const short = spec.short ? `-${spec.short}, ` : '';
    const left = `  ${short}--${spec.flag} ${spec.value}`.trimEnd();
    const column =
      left.length < HELP_COLUMN ? left.padEnd(HELP_COLUMN) : `${left}\n${' '.repeat(HELP_COLUMN)}`;
    const fallback = spec.defaultValue ? ` (default ${spec.defaultValue})` : '';
    const env = spec.env ? `\n${' '.repeat(HELP_COLUMN)}env ${spec.env}` : '';
    return `${column}${spec.help}${fallback}${env}`;
  });
  return [
    `Usage: confighash ${text?.synopsis ?? `${command} [options]`}`,
    ...(text ? ['', `${text.summary[0]!.toUpperCase()}${text.summary.slice(1)}.`] : []),
    '',
    'Options:',
    ...lines,
    ...(text?.notes ? ['', ...text.notes] : []),
  ].join('\n');
}

const HELP_OPTION: OptionSpec = { flag: 'help', short: 'h', value: '', help: 'print this help' };

export function envOf(specs: readonly OptionSpec[], flag: string): string {
  return specs.find((spec) => spec.flag === flag)?.env ?? '';
}

export function parseInteger(
  text: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/**
 * A duration flag's value in milliseconds: Go's syntax (`10s`, `1m30s`, `8760h`), or a bare
 * number, which is seconds (`95`, `2.5`), as kubectl reads --request-timeout. Every duration
 * flag of every command reads its value here; undefined when it is neither.
 */
export function parseDuration(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  return parseGoDuration(text);
}

/** `-n=demo` is `-n demo`, as kubectl (pflag) reads it; node's parseArgs would keep the `=`. */
function splitShortEquals(arg: string): string[] {
  const match = /^(-[A-Za-z])=(.*)$/s.exec(arg);
  return match ? [match[1]!, match[2]!] : [arg];
}

export function fail(error: string): { ok: false; error: string } {
  return { ok: false, error };
}
