// `confighash serve` options for self-managed certificates and hash key
// (src/cli/self-managed-options.ts): which files they stand for, and the mistakes they refuse.

import { describe, expect, it } from 'vitest';
import { parseServeConfig, type ServeConfig } from '../../src/cli/index.js';
import { named } from '../support/named.js';

const FILES = ['--tls-cert-file', 'a.crt', '--tls-key-file', 'a.key'];

describe('serve options for self-managed certificates', () => {
  it.each(
    named<{
      name: string;
      argv: string[];
      env?: Record<string, string>;
      expected: Partial<ServeConfig>;
    }>([
      {
        name: '--self-managed-certs alone: certificates and hash key from Secrets, files in the runtime dir',
        argv: ['--self-managed-certs'],
        expected: {
          tlsCertFile: '/run/confighash/tls.crt',
          tlsKeyFile: '/run/confighash/tls.key',
          hashKeyFile: '/run/confighash/hash.key',
          selfManaged: {
            namespace: 'confighash-system',
            certificates: {
              secretName: 'confighash-certs',
              hosts: [
                'confighash',
                'confighash.confighash-system',
                'confighash.confighash-system.svc',
              ],
              webhookConfiguration: 'confighash',
              certFile: '/run/confighash/tls.crt',
              keyFile: '/run/confighash/tls.key',
              checkIntervalMs: 3_600_000,
              servingValidDays: 365,
            },
            hashKey: { secretName: 'confighash-hash-key', file: '/run/confighash/hash.key' },
          },
        },
      },
      {
        name: 'the same from the environment, with names and hosts of your own',
        argv: [],
        env: {
          CONFIGHASH_SELF_MANAGED_CERTS: 'true',
          CONFIGHASH_NAMESPACE: 'hooks',
          CONFIGHASH_WEBHOOK_SERVICE: 'ch',
          CONFIGHASH_CERT_HOSTS: '127.0.0.1, ch.example',
          CONFIGHASH_CERTS_SECRET: 'ch-certs',
          CONFIGHASH_HASH_KEY_SECRET: 'ch-key',
          CONFIGHASH_RUNTIME_DIR: '/tmp/ch',
          CONFIGHASH_CERT_CHECK_INTERVAL: '60',
          CONFIGHASH_SERVING_CERT_VALIDITY: '48h',
        },
        expected: {
          tlsCertFile: '/tmp/ch/tls.crt',
          selfManaged: {
            namespace: 'hooks',
            certificates: {
              secretName: 'ch-certs',
              hosts: ['ch', 'ch.hooks', 'ch.hooks.svc', '127.0.0.1', 'ch.example'],
              webhookConfiguration: 'confighash',
              certFile: '/tmp/ch/tls.crt',
              keyFile: '/tmp/ch/tls.key',
              checkIntervalMs: 60_000,
              servingValidDays: 2,
            },
            hashKey: { secretName: 'ch-key', file: '/tmp/ch/hash.key' },
          },
        },
      },
      {
        name: '--self-managed-certs with a hash key file: only the certificates are managed',
        argv: ['--self-managed-certs', '--hash-key-file', 'k'],
        expected: { hashKeyFile: 'k', tlsCertFile: '/run/confighash/tls.crt' },
      },
      {
        name: '--hash-key-secret with certificate files (the cert-manager overlay)',
        argv: [...FILES, '--hash-key-secret', 'confighash-hash-key'],
        expected: {
          tlsCertFile: 'a.crt',
          hashKeyFile: '/run/confighash/hash.key',
          selfManaged: {
            namespace: 'confighash-system',
            certificates: undefined,
            hashKey: { secretName: 'confighash-hash-key', file: '/run/confighash/hash.key' },
          },
        },
      },
      {
        name: 'neither: files as before',
        argv: [...FILES, '--hash-key-file', 'k'],
        expected: { tlsCertFile: 'a.crt', hashKeyFile: 'k', selfManaged: undefined },
      },
    ]),
  )('%s', (_name, row) => {
    const result = parseServeConfig(row.argv, row.env ?? {});
    expect(result.ok && result.config).toMatchObject(row.expected);
  });

  it.each(
    named([
      { name: 'none', argv: [], env: {}, files: [] },
      {
        name: 'repeated --previous-hash-key-file, in order',
        argv: ['--previous-hash-key-file', 'old-1', '--previous-hash-key-file=old-2'],
        env: {},
        files: ['old-1', 'old-2'],
      },
      {
        name: 'CONFIGHASH_PREVIOUS_HASH_KEY_FILES, comma-separated',
        argv: [],
        env: { CONFIGHASH_PREVIOUS_HASH_KEY_FILES: 'old-1, old-2' },
        files: ['old-1', 'old-2'],
      },
    ]),
  )('previous hash key files: %s', (_name, row) => {
    const result = parseServeConfig([...FILES, '--hash-key-file', 'k', ...row.argv], row.env);
    expect(result.ok && result.config.previousHashKeyFiles).toEqual(row.files);
  });

  it.each(
    named([
      {
        name: 'certificate files and --self-managed-certs',
        argv: ['--self-managed-certs', ...FILES],
        error: '--tls-cert-file and --self-managed-certs cannot be combined',
      },
      {
        name: 'a hash key file and --hash-key-secret',
        argv: [...FILES, '--hash-key-file', 'k', '--hash-key-secret', 's'],
        error: '--hash-key-file and --hash-key-secret cannot be combined',
      },
      {
        name: 'a previous hash key file and --hash-key-secret (its previous-* entries are the previous keys)',
        argv: ['--self-managed-certs', '--previous-hash-key-file', 'old'],
        error: '--previous-hash-key-file and --hash-key-secret cannot be combined',
      },
      {
        name: 'a check interval of zero',
        argv: ['--self-managed-certs', '--cert-check-interval', '0'],
        error:
          "--cert-check-interval must be a positive duration such as 1h (a bare number is seconds), got '0'",
      },
      {
        name: 'a serving certificate that lives less than a minute',
        argv: ['--self-managed-certs', '--serving-cert-validity', '30s'],
        error:
          "--serving-cert-validity must be a duration of at least 1m, such as 8760h, got '30s'",
      },
      {
        name: 'a value for the flag',
        argv: ['--self-managed-certs=yes'],
        error:
          "Option '--self-managed-certs' does not take an argument (see confighash serve --help)",
      },
    ]),
  )('refuses %s', (_name, row) => {
    expect(parseServeConfig(row.argv, {})).toEqual({ ok: false, error: row.error });
  });

  it('refuses an environment value that is not true or false', () => {
    expect(parseServeConfig([], { CONFIGHASH_SELF_MANAGED_CERTS: 'yes' })).toEqual({
      ok: false,
      error: "CONFIGHASH_SELF_MANAGED_CERTS must be true or false, got 'yes'",
    });
  });
});
