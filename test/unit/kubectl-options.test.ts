// plan and explain take kubectl's own flags for which cluster, as whom, how long and which
// answer (src/cli/kubectl-options.ts): --kubeconfig, --context, -n, --as, --request-timeout,
// -v, -o json|yaml|name; explain takes kubectl's ways of naming workloads.

import { describe, expect, it } from 'vitest';
import {
  parseDoctorConfig,
  parseExplainConfig,
  parseFollowCommandConfig,
  parsePlanConfig,
  parseServeConfig,
  splitCommand,
} from '../../src/cli/index.js';
import { parseDuration } from '../../src/cli/options.js';

const parsers = [
  ['plan', (argv: string[]) => parsePlanConfig(['-f', 'app.yaml', ...argv])],
  ['explain', (argv: string[]) => parseExplainConfig(['deploy/web', ...argv])],
] as const;

describe.each(parsers)('%s', (_command, parse) => {
  it.each([
    ['nothing: kubectl’s defaults', [], {}, 'text'],
    [
      '--kubeconfig and --context',
      ['--kubeconfig', '/tmp/k', '--context', 'staging'],
      { kubeconfig: '/tmp/k', context: 'staging' },
      'text',
    ],
    ['--context=NAME', ['--context=prod'], { context: 'prod' }, 'text'],
    ['-o yaml', ['-o', 'yaml'], {}, 'yaml'],
    ['-o json', ['-o', 'json'], {}, 'json'],
    ['-o name', ['-o', 'name'], {}, 'name'],
    ['-o=json, as pflag reads it', ['-o=json'], {}, 'json'],
  ])('%s', (_name, argv, cluster, output) => {
    const result = parse([...argv]);
    expect(result).toMatchObject({ ok: true, config: { cluster, output } });
  });

  it('-n names the default namespace', () => {
    expect(parse(['-n', 'shop'])).toMatchObject({ ok: true, config: { namespace: 'shop' } });
  });

  it.each([
    ['-o wide', ['-o', 'wide'], "-o must be json, yaml or name, got 'wide'"],
    ['an empty --as', ['--as='], '--as needs a user name'],
    [
      'a --request-timeout in minutes and no unit',
      ['--request-timeout', '5 minutes'],
      "--request-timeout must be a duration such as 30s or 2m (a bare number is seconds; 0: no limit), got '5 minutes'",
    ],
    ['-v high', ['-v', 'high'], "-v must be a whole number such as 6, got 'high'"],
    ['an empty --kubeconfig', ['--kubeconfig='], '--kubeconfig needs a file name'],
    ['an empty --context', ['--context', ''], '--context needs a context name'],
  ])('%s is a mistake', (_name, argv, error) => {
    expect(parse([...argv])).toEqual({ ok: false, error });
  });
});

describe.each([...parsers, ['doctor', (argv: string[]) => parseDoctorConfig(argv)]] as const)(
  '%s: --as, --request-timeout, -v',
  (_command, parse) => {
    it.each([
      ['defaults: 60 s, no impersonation, quiet', [], { requestTimeoutMs: 60_000, verbosity: 0 }],
      [
        '--as a service account',
        ['--as', 'system:serviceaccount:demo:viewer'],
        { impersonate: 'system:serviceaccount:demo:viewer' },
      ],
      ['--request-timeout 2m', ['--request-timeout', '2m'], { requestTimeoutMs: 120_000 }],
      ['--request-timeout 5 (seconds)', ['--request-timeout=5'], { requestTimeoutMs: 5_000 }],
      ['--request-timeout 0: no limit', ['--request-timeout', '0'], { requestTimeoutMs: 0 }],
      ['-v 6', ['-v', '6'], { verbosity: 6 }],
      ['--v=8', ['--v=8'], { verbosity: 8 }],
      ['-v=6', ['-v=6'], { verbosity: 6 }],
    ])('%s', (_name, argv, client) => {
      expect(parse([...argv])).toMatchObject({ ok: true, config: { client } });
    });
  },
);

describe('one duration syntax: Go durations, and a bare number is seconds', () => {
  it.each([
    ['10s', 10_000],
    ['5m', 300_000],
    ['1m30s', 90_000],
    ['8760h', 31_536_000_000],
    ['250ms', 250],
    ['95', 95_000],
    ['2.5', 2_500],
    ['0', 0],
  ])('%s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '10 s', '-5s', '5d', '1e3'])('%j is no duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('explain names workloads as kubectl does', () => {
  const targets = (argv: string[]) => {
    const result = parseExplainConfig(argv);
    if (!result.ok) return 'error' in result ? result.error : 'help';
    const t = result.config.targets;
    return t.by === 'name'
      ? t.workloads.map(({ kind, name }) => `${kind.kind}/${name}`)
      : { kind: t.kind.kind, selector: t.selector, allNamespaces: t.allNamespaces };
  };

  it.each([
    ['TYPE/NAME', ['deploy/web'], ['Deployment/web']],
    ['TYPE NAME', ['deploy', 'web'], ['Deployment/web']],
    ['TYPE NAME NAME', ['deployment', 'web', 'api'], ['Deployment/web', 'Deployment/api']],
    ['TYPE/NAME TYPE/NAME', ['deploy/web', 'sts/db'], ['Deployment/web', 'StatefulSet/db']],
    [
      'TYPE -l SELECTOR',
      ['deploy', '-l', 'app=web'],
      { kind: 'Deployment', selector: 'app=web', allNamespaces: false },
    ],
    ['TYPE -A', ['ds', '-A'], { kind: 'DaemonSet', selector: undefined, allNamespaces: true }],
    [
      'TYPE alone: all of it',
      ['sts'],
      { kind: 'StatefulSet', selector: undefined, allNamespaces: false },
    ],
  ])('%s', (_name, argv, expected) => {
    expect(targets([...argv])).toEqual(expected);
  });

  it.each([
    ['a name with -l', ['deploy', 'web', '-l', 'a=b'], /a name cannot be given together with -l/],
    ['a name with -A', ['deploy/web', '-A'], /cannot be named across all namespaces/],
    ['TYPE/NAME and a bare name', ['deploy/web', 'api'], /give every workload as TYPE\/NAME/],
    ['an empty -l', ['deploy', '-l', ''], /-l needs a label selector/],
    ['no workload', [], /say which workload/],
  ])('%s is a mistake', (_name, argv, error) => {
    expect(targets([...argv])).toMatch(error);
  });
});

describe('kubectl options may stand before the command', () => {
  it.each([
    ['-n demo explain deploy/web', ['explain', '-n', 'demo', 'deploy/web']],
    ['--namespace=demo explain deploy/web', ['explain', '--namespace=demo', 'deploy/web']],
    ['-ndemo -o json plan -f x', ['plan', '-ndemo', '-o', 'json', '-f', 'x']],
    [
      '--kubeconfig k --context c -v 6 doctor',
      ['doctor', '--kubeconfig', 'k', '--context', 'c', '-v', '6'],
    ],
    ['explain -n demo deploy/web (as it was)', ['explain', '-n', 'demo', 'deploy/web']],
    ['--help', ['--help']],
    ['--version', ['--version']],
    ['-x explain: not kubectl’s, left for the parser', ['-x', 'explain']],
  ])('%s', (line, expected) => {
    const argv = line.replace(/ \(.*\)$|:.*$/, '').split(' ');
    const { command, rest } = splitCommand(argv);
    expect([command, ...rest]).toEqual(expected);
  });
});

describe("serve's and follow's duration flags read the same syntax", () => {
  const serve = (argv: string[]) =>
    parseServeConfig(
      ['--tls-cert-file', 'a', '--tls-key-file', 'b', '--hash-key-file', 'c', ...argv],
      {},
    );

  it('Go durations and bare seconds alike', () => {
    expect(
      serve(['--shutdown-timeout', '2m', '--tls-reload-interval', '10', '--webhook-timeout', '5s']),
    ).toMatchObject({
      ok: true,
      config: { shutdownTimeoutMs: 120_000, tlsReloadIntervalMs: 10_000, webhookTimeoutMs: 5_000 },
    });
    expect(
      parseFollowCommandConfig(['--hash-key-file', 'c', '--follow-debounce', '10'], {}),
    ).toMatchObject({
      ok: true,
      config: { follow: { options: { debounceMs: 10_000 } } },
    });
  });

  it.each([
    [
      '--webhook-timeout 1.5s',
      ['--webhook-timeout', '1.5s'],
      /--webhook-timeout must be whole seconds from 1s to 30s/,
    ],
    [
      '--shutdown-timeout soon',
      ['--shutdown-timeout', 'soon'],
      /--shutdown-timeout must be a duration such as 95s/,
    ],
  ])('%s is refused, naming the flag', (_name, argv, error) => {
    expect(serve([...argv])).toMatchObject({ ok: false, error: expect.stringMatching(error) });
  });
});
