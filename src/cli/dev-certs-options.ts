// `confighash dev-certs`: where to write a local CA, serving certificate and
// hash key, and for which hosts.

import { type Environment, type OptionSpec, type ParseResult, parseOptions } from './options.js';

interface DevCertsConfig {
  readonly dir: string;
  readonly hosts: readonly string[];
}

export const DEV_CERTS_OPTIONS: readonly OptionSpec[] = [
  {
    flag: 'dir',
    env: 'CONFIGHASH_CERTS_DIR',
    value: 'DIR',
    defaultValue: 'certs',
    help: 'where to write ca.crt, tls.crt, tls.key and hash.key',
  },
  {
    flag: 'host',
    env: 'CONFIGHASH_CERT_HOSTS',
    value: 'NAME',
    help: 'extra DNS name or IP for the certificate (repeatable; env: comma-separated)',
  },
];

export function parseDevCertsConfig(
  argv: readonly string[],
  env: Environment,
): ParseResult<DevCertsConfig> {
  const values = parseOptions('dev-certs', DEV_CERTS_OPTIONS, argv, env);
  if (!values.ok) return values;
  const extra = values.all('host');
  const hosts = [...new Set(['localhost', '127.0.0.1', ...extra])];
  return { ok: true, config: Object.freeze({ dir: values.get('dir')!, hosts }) };
}
