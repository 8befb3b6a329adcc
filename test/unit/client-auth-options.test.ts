// `confighash serve --client-ca-file` and `--probe-port` (src/cli/serve-options.ts): off unless
// the CA is named, the probes' port, and the mistakes they refuse.

import { describe, expect, it } from 'vitest';
import { parseServeConfig } from '../../src/cli/index.js';

const FILES = ['--tls-cert-file=a.crt', '--tls-key-file=a.key', '--hash-key-file=h.key'];

const parse = (argv: string[], env: Record<string, string> = {}) =>
  parseServeConfig([...FILES, ...argv], env);

describe('serve options for client certificates', () => {
  it.each([
    ['off by default, whatever --probe-port says', [], {}, undefined],
    [
      '--client-ca-file: probes on 8444',
      ['--client-ca-file=ca.crt'],
      {},
      { caFile: 'ca.crt', probePort: 8444 },
    ],
    [
      'from the environment, with a probe port of its own',
      [],
      { CONFIGHASH_CLIENT_CA_FILE: '/etc/ca.crt', CONFIGHASH_PROBE_PORT: '9000' },
      { caFile: '/etc/ca.crt', probePort: 9000 },
    ],
  ])('%s', (_, argv, env, expected) => {
    const parsed = parse(argv, env);
    expect(parsed.ok && parsed.config.clientAuth).toEqual(parsed.ok ? expected : 'parsed');
  });

  it.each([
    [
      ['--client-ca-file=ca.crt', '--probe-port=0'],
      "--probe-port must be a whole number from 1 to 65535, got '0'",
    ],
    [
      ['--client-ca-file=ca.crt', '--probe-port=8443'],
      '--probe-port must differ from --port (8443): that port requires a client certificate',
    ],
  ])('refuses %j', (argv, error) => {
    expect(parse(argv)).toEqual({ ok: false, error });
  });
});
