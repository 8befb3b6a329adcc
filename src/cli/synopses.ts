// The commands as `confighash --help` lists them: each one's synopsis, one-line
// summary and closing notes. Each option's text is its OptionSpec's (one module per
// command); `confighash COMMAND --help` joins the two (options.ts, helpFor).

interface CommandText {
  readonly name: string;
  /** What follows `confighash` on the usage line. */
  readonly synopsis: string;
  readonly summary: string;
  /** Lines printed after the options. */
  readonly notes?: readonly string[];
}

const KUBECONFIG_NOTE =
  'The Kubernetes API is found as kubectl finds it: KUBECONFIG, ~/.kube/config, or in-cluster.';

export const COMMANDS: readonly CommandText[] = [
  {
    name: 'serve',
    synopsis: 'serve [options]',
    summary: 'run the admission webhook (HTTPS)',
    notes: [KUBECONFIG_NOTE],
  },
  {
    name: 'follow',
    synopsis: 'follow [options]',
    summary: 'roll workloads whose config changed with no write of theirs (its own Deployment)',
    notes: [KUBECONFIG_NOTE],
  },
  {
    name: 'dev-certs',
    synopsis: 'dev-certs [options]',
    summary: 'write a local CA, serving certificate and hash key',
  },
  {
    name: 'plan',
    synopsis: 'plan (-f FILE|DIR [-R] | -f - | -k DIR) [options]',
    summary: 'preview which workloads applying manifests rolls, and why',
    notes: [
      'Exit status: 0 when nothing rolls, 1 when something rolls or cannot be told, 2 on a mistake or an unreachable cluster.',
      KUBECONFIG_NOTE,
    ],
  },
  {
    name: 'explain',
    synopsis: 'explain (TYPE/NAME... | TYPE NAME... | TYPE [-l SELECTOR] [-A]) [options]',
    summary: 'why a workload did or did not roll, and whether its next write rolls',
    notes: [
      'It asks the webhook by a server-side dry-run patch of the workload: you need patch on its kind (nothing is written).',
      KUBECONFIG_NOTE,
    ],
  },
  {
    name: 'doctor',
    synopsis: 'doctor [-n NAMESPACE] [options]',
    summary: 'check that confighash works for a namespace: registered, reached, opted in, followed',
    notes: [
      'Exit status: 0 when every check is ok, 1 when one fails, 2 on a mistake.',
      KUBECONFIG_NOTE,
    ],
  },
  {
    name: 'halt',
    synopsis: 'halt configmap/NAME|secret/NAME [options]',
    summary:
      'stop the fan-out of a source’s change in progress: follow mode touches nothing more for it',
    notes: [
      'It writes the annotation confighash.dev/fanout-control on the source ("halt DIGEST"); kubectl annotate does the same.',
      KUBECONFIG_NOTE,
    ],
  },
  {
    name: 'resume',
    synopsis: 'resume configmap/NAME|secret/NAME [options]',
    summary: 'release a halted change: the rest roll, or a canary tests it again',
    notes: [
      'It writes the annotation confighash.dev/fanout-control on the source ("resume DIGEST"); kubectl annotate does the same.',
      KUBECONFIG_NOTE,
    ],
  },
];

/** Commands with no options of their own but --help. */
export const BARE_COMMANDS: readonly CommandText[] = [
  {
    name: 'completion',
    synopsis: 'completion bash|zsh|fish',
    summary: 'print a shell completion script (bash: source <(confighash completion bash))',
  },
  { name: 'version', synopsis: 'version', summary: "print confighash's version" },
];

export function commandText(name: string): CommandText | undefined {
  return [...COMMANDS, ...BARE_COMMANDS].find((command) => command.name === name);
}

/** `confighash --help`: the commands, one line each; their options are theirs to print. */
export function usage(): string {
  const all = [...COMMANDS, ...BARE_COMMANDS];
  const width = Math.max(...all.map((command) => command.name.length)) + 3;
  return [
    'Usage: confighash COMMAND [options]',
    '',
    'Commands:',
    ...all.map((command) => `  ${command.name.padEnd(width)}${command.summary}`),
    '',
    "Run 'confighash COMMAND --help' for a command's options.",
  ].join('\n');
}
