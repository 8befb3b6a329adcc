// `confighash dev-certs`: a local CA, a serving certificate and a hash key in a
// directory, for running the webhook outside a cluster.

import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDevCertsConfig } from '../cli/index.js';
import { unwrap } from './errors.js';

export async function devCerts(argv: readonly string[]): Promise<void> {
  const config = unwrap(parseDevCertsConfig(argv, process.env));
  const { generateCertificateAuthority, generateServingCertificate } = await import(
    '../certs/generate.js'
  );
  const authority = await generateCertificateAuthority('confighash development CA', 365);
  const serving = await generateServingCertificate(authority, config.hosts, 365);
  await mkdir(config.dir, { recursive: true });
  const hashKeyPath = join(config.dir, 'hash.key');
  const files: [string, string | Buffer, number][] = [
    [join(config.dir, 'ca.crt'), authority.cert, 0o644],
    [join(config.dir, 'ca.key'), authority.key, 0o600],
    [join(config.dir, 'tls.crt'), serving.cert, 0o644],
    [join(config.dir, 'tls.key'), serving.key, 0o600],
  ];
  for (const [path, content, mode] of files) {
    await writeFile(path, content, { mode });
    await chmod(path, mode);
  }
  // An existing hash key is kept: replacing it would roll every workload once.
  const keyWritten = await writeFile(hashKeyPath, randomBytes(32), {
    mode: 0o600,
    flag: 'wx',
  }).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') return false;
      throw error;
    },
  );
  process.stdout.write(
    `wrote ${config.dir}/{ca.crt,ca.key,tls.crt,tls.key} for ${config.hosts.join(', ')}\n` +
      `${keyWritten ? 'wrote' : 'kept existing'} ${hashKeyPath}\n`,
  );
}
