// `confighash completion bash|zsh|fish`: a script that completes the commands, each command's
// flags and explain's kinds, for `confighash` and `kubectl-confighash` alike. Generated from
// the commands' option tables, so a new flag completes without an edit here.

import type { OptionSpec } from './options.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What the scripts complete: the commands with their options, and explain's kinds. */
export interface CompletionTable {
  readonly commands: readonly { readonly name: string; readonly options: readonly OptionSpec[] }[];
  readonly kinds: readonly string[];
}

const PROGRAMS = ['confighash', 'kubectl-confighash'];

export function completionScript(shell: Shell, table: CompletionTable): string {
  switch (shell) {
    case 'bash':
      return bashScript(table);
    case 'zsh':
      // zsh runs the bash function through its own bash emulation.
      return `#compdef ${PROGRAMS.join(' ')}\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(table)}`;
    case 'fish':
      return fishScript(table);
  }
}

function flagWords(options: readonly OptionSpec[]): string[] {
  return [
    '--help',
    ...options.flatMap((spec) => [`--${spec.flag}`, ...(spec.short ? [`-${spec.short}`] : [])]),
  ];
}

/** Flags that take a value, for every command: the word after one is not the command. */
function valueFlags(table: CompletionTable): string[] {
  const all = table.commands.flatMap(({ options }) => options.filter((spec) => !spec.boolean));
  return [
    ...new Set(
      all.flatMap((spec) => [`--${spec.flag}`, ...(spec.short ? [`-${spec.short}`] : [])]),
    ),
  ];
}

function bashScript(table: CompletionTable): string {
  const cases = table.commands.map(
    ({ name, options }) => `    ${name}) flags="${flagWords(options).join(' ')}" ;;`,
  );
  return `# confighash completion for bash: source <(confighash completion bash)
_confighash() {
  local cur=\${COMP_WORDS[COMP_CWORD]} command="" flags="" i word
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    case $word in
      ${valueFlags(table).join('|')}) ((i++)) ;;
      -*) ;;
      *) command=$word; break ;;
    esac
  done
  if [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "${table.commands.map(({ name }) => name).join(' ')}" -- "$cur"))
    return
  fi
  case $command in
${cases.join('\n')}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [[ $command == explain && \${COMP_WORDS[COMP_CWORD-1]} == explain ]]; then
    COMPREPLY=($(compgen -W "${table.kinds.join(' ')}" -- "$cur"))
  elif [[ $command == completion ]]; then
    COMPREPLY=($(compgen -W "${SHELLS.join(' ')}" -- "$cur"))
  fi
}
complete -o default -F _confighash ${PROGRAMS.join(' ')}
`;
}

function fishScript(table: CompletionTable): string {
  const lines = ['# confighash completion for fish: confighash completion fish | source'];
  const names = table.commands.map(({ name }) => name).join(' ');
  for (const program of PROGRAMS) {
    lines.push(`complete -c ${program} -n __fish_use_subcommand -f -a '${names}'`);
    for (const { name, options } of table.commands) {
      for (const spec of options) {
        const short = spec.short ? ` -s ${spec.short}` : '';
        const takes = spec.boolean ? '' : ' -r';
        const help = spec.help.replaceAll("'", "\\'").slice(0, 80);
        lines.push(
          `complete -c ${program} -n '__fish_seen_subcommand_from ${name}' -l ${spec.flag}${short}${takes} -d '${help}'`,
        );
      }
    }
    lines.push(
      `complete -c ${program} -n '__fish_seen_subcommand_from explain' -f -a '${table.kinds.join(' ')}'`,
    );
    lines.push(
      `complete -c ${program} -n '__fish_seen_subcommand_from completion' -f -a '${SHELLS.join(' ')}'`,
    );
  }
  return `${lines.join('\n')}\n`;
}
