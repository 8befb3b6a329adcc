// Self-managed mode (`confighash serve --self-managed-certs`, `--hash-key-secret`): the hash
// key from its Secret (src/hash-key/), and the certificates from theirs, renewed in place
// (src/certs/certificates-secret.ts).

import { startCertificateChecks } from '../certs/certificates-secret.js';
import type { SelfManagedPorts } from '../certs/ports.js';
import type { SelfManagedOptions } from '../cli/index.js';
import { writeHashKeyFiles } from '../hash-key/secret.js';

export interface SelfManaged {
  stop(): void;
  /** The previous hash keys of the Secret, each written to a file beside the hash key's. */
  readonly previousHashKeyFiles: readonly string[];
}

/**
 * Starts self-managed mode: the hash key files and the certificate files exist
 * when this resolves (or it throws, and serve fails to start); renewals and the
 * caBundle are then checked every `checkIntervalMs`.
 */
export async function startSelfManaged(
  options: SelfManagedOptions,
  ports: SelfManagedPorts,
): Promise<SelfManaged> {
  const previousHashKeyFiles = options.hashKey
    ? await writeHashKeyFiles(options.namespace, options.hashKey, ports)
    : [];
  if (!options.certificates) return { stop() {}, previousHashKeyFiles };
  const checks = await startCertificateChecks(options.namespace, options.certificates, ports);
  return { ...checks, previousHashKeyFiles };
}
