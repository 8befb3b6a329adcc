// `confighash follow`'s options (src/cli/follow-command-options.ts): the hash key from a file
// or from the webhook's Secret, its plain-HTTP port, the Lease, and the mistakes it
// refuses; and `serve --follow`, deprecated, still following.

import { describe, expect, it } from 'vitest';
import { parseFollowCommandConfig, parseServeConfig } from '../../src/cli/index.js';
import { DEFAULT_FOLLOW_OPTIONS } from '../../src/follow/index.js';

describe('confighash follow options', () => {
  it('defaults: port 8080 on every address, the Lease confighash-follow, docs/design.md §6 tuning', () => {
    const parsed = parseFollowCommandConfig(['--hash-key-file', 'k'], { POD_NAME: 'p-1' });
    expect(parsed.ok && parsed.config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      hashKeyFile: 'k',
      selfManaged: undefined,
      logLevel: 'info',
      follow: {
        options: DEFAULT_FOLLOW_OPTIONS,
        leaseNamespace: 'confighash-system',
        leaseName: 'confighash-follow',
        identity: 'p-1',
      },
    });
  });

  it('never follows its own namespace nor an --excluded-namespace; refuses a bad name', () => {
    const parsed = parseFollowCommandConfig(
      ['--hash-key-file', 'k', '--excluded-namespace', 'monitoring'],
      { CONFIGHASH_EXCLUDED_NAMESPACES: 'ignored-by-the-flag' },
    );
    expect(parsed.ok && parsed.config.excludedNamespaces).toEqual([
      'confighash-system',
      'monitoring',
    ]);
    const fromEnv = parseFollowCommandConfig(['--hash-key-file', 'k'], {
      CONFIGHASH_EXCLUDED_NAMESPACES: 'a,b',
      CONFIGHASH_NAMESPACE: 'hooks',
    });
    expect(fromEnv.ok && fromEnv.config.excludedNamespaces).toEqual(['hooks', 'a', 'b']);
    const bad = parseFollowCommandConfig(
      ['--hash-key-file', 'k', '--excluded-namespace=Team_B'],
      {},
    );
    expect(bad).toEqual({
      ok: false,
      error:
        "--excluded-namespace and --namespace take a namespace name (lowercase letters, digits, '-'; at most 63), got 'Team_B'",
    });
  });

  it('--previous-hash-key-file as serve takes it: repeatable, and not with --hash-key-secret', () => {
    const parsed = parseFollowCommandConfig(
      ['--hash-key-file=k', '--previous-hash-key-file=old-1', '--previous-hash-key-file=old-2'],
      {},
    );
    expect(parsed.ok && parsed.config.previousHashKeyFiles).toEqual(['old-1', 'old-2']);
    const none = parseFollowCommandConfig(['--hash-key-file=k'], {});
    expect(none.ok && none.config.previousHashKeyFiles).toEqual([]);
    expect(
      parseFollowCommandConfig(['--hash-key-secret=s', '--previous-hash-key-file=old'], {}),
    ).toEqual({
      ok: false,
      error: '--previous-hash-key-file and --hash-key-secret cannot be combined',
    });
  });

  it('--hash-key-secret: the webhook’s Secret, written to the runtime dir, and no certificates', () => {
    const parsed = parseFollowCommandConfig([], {
      CONFIGHASH_HASH_KEY_SECRET: 'confighash-hash-key',
      CONFIGHASH_NAMESPACE: 'webhooks',
    });
    expect(parsed.ok && parsed.config).toMatchObject({
      hashKeyFile: '/run/confighash/hash.key',
      selfManaged: {
        namespace: 'webhooks',
        certificates: undefined,
        hashKey: { secretName: 'confighash-hash-key', file: '/run/confighash/hash.key' },
      },
    });
  });

  it('takes --kind and the follow tuning as serve --follow did', () => {
    const parsed = parseFollowCommandConfig(
      ['--hash-key-file=k', '--kind=argoproj.io/v1alpha1/Rollout', '--follow-debounce=2s'],
      {},
    );
    expect(parsed.ok && parsed.config.kinds.map((kind) => kind.kind)).toContain('Rollout');
    expect(parsed.ok && parsed.config.follow.options.debounceMs).toBe(2000);
  });

  it.each([
    [[], /--hash-key-file or --hash-key-secret is required/],
    [['--hash-key-file=k', '--hash-key-secret=s'], /cannot be combined/],
    [['--hash-key-file=k', '--port=0'], /--port must be a whole number from 1 to 65535, got '0'/],
    [['--hash-key-file=k', '--follow-rate=0'], /--follow-rate must be a positive number/],
    [
      ['--hash-key-file=k', '--follow-canaries=-1'],
      /--follow-canaries must be a whole number from 0 to 1000, got '-1'/,
    ],
    [
      ['--hash-key-file=k', '--follow-canary-window=soon'],
      /--follow-canary-window must be a duration/,
    ],
    [
      ['--hash-key-file=k', '--follow-canary-poll=10ms'],
      /--follow-canary-poll must be at least 100ms/,
    ],
    [['--hash-key-file=k', '--tls-cert-file=c'], /Unknown option '--tls-cert-file'/],
    [['--hash-key-file=k', '--self-managed-certs'], /Unknown option '--self-managed-certs'/],
  ])('%j is refused with one line naming the option', (argv, error) => {
    const parsed = parseFollowCommandConfig(argv, {});
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && 'error' in parsed && parsed.error).toMatch(error);
  });
});

describe('serve has no follow mode: `confighash follow` is its own process', () => {
  it.each([['--follow'], ['--follow-rate=5'], ['--lease-name=x']])('serve refuses %s', (flag) => {
    const files = ['--tls-cert-file=a', '--tls-key-file=b', '--hash-key-file=c'];
    const parsed = parseServeConfig([...files, flag], {});
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && 'error' in parsed && parsed.error).toMatch(/Unknown option/);
  });
});
