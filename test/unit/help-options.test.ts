// `confighash --help` lists the commands, one line each; `confighash COMMAND --help`
// prints that command's options and no other command's.

import { describe, expect, it } from 'vitest';
import {
  COMMANDS,
  commandHelp,
  parseDevCertsConfig,
  parseDoctorConfig,
  parseExplainConfig,
  parseFanoutControlConfig,
  parseFollowCommandConfig,
  parsePlanConfig,
  parseServeConfig,
  usage,
} from '../../src/cli/index.js';

const helpOf = (result: { ok: boolean } | { ok: false; help: string }): string =>
  'help' in result ? result.help : `no help: ${JSON.stringify(result)}`;

/** What each command prints for --help, through its own parser. */
const printed: Record<string, string> = {
  serve: helpOf(parseServeConfig(['--help'], {})),
  follow: helpOf(parseFollowCommandConfig(['-h'], {})),
  'dev-certs': helpOf(parseDevCertsConfig(['--help'], {})),
  plan: helpOf(parsePlanConfig(['--help'])),
  explain: helpOf(parseExplainConfig(['deploy/web', '--help'])),
  doctor: helpOf(parseDoctorConfig(['--help'])),
  halt: helpOf(parseFanoutControlConfig('halt', ['--help'])),
  resume: helpOf(parseFanoutControlConfig('resume', ['cm/app', '--help'])),
};

const flagsIn = (help: string): string[] =>
  [...help.matchAll(/^ {2}(?:-\w, )?--([\w-]+)/gm)].map((m) => m[1]!);

describe('confighash --help', () => {
  it('names every command with its summary and no option, in a few lines', () => {
    const text = usage();
    for (const command of COMMANDS) expect(text).toContain(`  ${command.name}`);
    expect(flagsIn(text)).toEqual([]);
    expect(text).not.toMatch(/--(?!help)[a-z]/);
    expect(text.split('\n').length).toBeLessThanOrEqual(15);
    for (const bare of ['version', 'completion'])
      expect(text).toMatch(new RegExp(`^  ${bare} `, 'm'));
    expect(text).toContain('confighash COMMAND --help');
  });
});

describe('confighash COMMAND --help', () => {
  it.each(COMMANDS.map((command) => command.name))('%s: its usage line and its options', (name) => {
    const help = printed[name]!;
    expect(help).toBe(commandHelp(name));
    expect(help.split('\n')[0]).toMatch(new RegExp(`^Usage: confighash ${name} `));
    expect(flagsIn(help)).toContain('help');
  });

  it('serve lists its options and none of plan’s; plan none of serve’s', () => {
    expect(flagsIn(printed.serve!)).toContain('tls-cert-file');
    expect(flagsIn(printed.serve!)).not.toContain('filename');
    expect(flagsIn(printed.plan!)).toEqual(
      expect.arrayContaining(['filename', 'kustomize', 'client-side', 'offline']),
    );
    expect(flagsIn(printed.plan!)).not.toContain('tls-cert-file');
    expect(flagsIn(printed.resume!)).toContain('retry-canary');
    expect(flagsIn(printed.halt!)).not.toContain('retry-canary');
    expect(flagsIn(printed.explain!)).toEqual([
      'selector',
      'all-namespaces',
      'kubeconfig',
      'context',
      'namespace',
      'as',
      'request-timeout',
      'v',
      'output',
      'lease-namespace',
      'lease-name',
      'kind',
      'help',
    ]);
    expect(flagsIn(printed.doctor!)).toEqual(
      expect.arrayContaining(['namespace', 'as', 'webhook-configuration', 'lease-namespace']),
    );
    expect(flagsIn(printed.doctor!)).not.toContain('output');
    expect(flagsIn(printed.plan!)).toEqual(
      expect.arrayContaining(['kubeconfig', 'context', 'namespace', 'output']),
    );
    expect(flagsIn(printed['dev-certs']!)).toEqual(['dir', 'host', 'help']);
  });

  it('follow lists serve’s shared options, its follow tuning, and no certificate option', () => {
    const follow = flagsIn(printed.follow!);
    expect(follow).toEqual(
      expect.arrayContaining([
        'port',
        'hash-key-file',
        'hash-key-secret',
        'follow-resync',
        'lease-name',
      ]),
    );
    expect(follow).not.toContain('tls-cert-file');
    expect(follow).not.toContain('self-managed-certs');
    expect(follow).not.toContain('follow');
  });

  it('a flag too long for the left column puts its text on the next line', () => {
    const kind = printed.plan!.split('\n').find((line) => line.includes('--kind'))!;
    expect(kind.trimEnd()).toMatch(/=path\.to\.template\]$/);
  });

  it('plan says what its exit status means; an unknown command has no help', () => {
    expect(printed.plan).toMatch(/0 when nothing rolls, 1 when something rolls/);
    expect(commandHelp('nope')).toBeUndefined();
  });
});
