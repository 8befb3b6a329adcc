// Cluster credentials for tests, resolved the way `confighash serve` resolves
// them: client-node in a child process, reading a kubeconfig file.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ClusterCredentials,
  type CredentialOptions,
  loadCredentials,
} from '../../src/kube/connection.js';
import { childProcessResolver } from '../../src/kube/credentials.js';

/** Credentials from a kubeconfig file, asked again from the same file on every refresh. */
export function credentialsFromFile(
  kubeconfigFile: string,
  options: Omit<CredentialOptions, 'resolve'> = {},
): Promise<ClusterCredentials> {
  const resolve = childProcessResolver({ ...process.env, KUBECONFIG: kubeconfigFile });
  return loadCredentials({ ...options, resolve });
}

/** Credentials from kubeconfig text (written to a temporary file that is removed again). */
export async function credentialsFromText(kubeconfig: string): Promise<ClusterCredentials> {
  const dir = await mkdtemp(join(tmpdir(), 'confighash-kubeconfig-'));
  try {
    const file = join(dir, 'kubeconfig');
    await writeFile(file, kubeconfig, { mode: 0o600 });
    return await credentialsFromFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
