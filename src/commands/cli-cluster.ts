// The cluster of a CLI command that reads it (explain, halt, resume): kubectl's credentials
// and default namespace, a reachability check that turns "no cluster" into one line, one
// deadline for the whole command, and the connection closed however it ends.

import type { ClusterSelection } from '../cli/index.js';
import { type ApiConnection, checkReachable, connectToCluster } from '../kube/index.js';
import { withDeadline } from '../runtime/deadline.js';
import { loadClusterCredentials } from './errors.js';

/** How long one CLI command may take against the cluster. */
export const CLI_TIMEOUT_MS = 60_000;

export async function onCluster<T>(
  selection: ClusterSelection,
  namespaceFlag: string | undefined,
  run: (connection: ApiConnection, namespace: string, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const credentials = await loadClusterCredentials({ selection });
  const namespace = namespaceFlag ?? credentials.current().namespace ?? 'default';
  const connection = connectToCluster(credentials);
  try {
    await checkReachable(connection);
    return await withDeadline(undefined, CLI_TIMEOUT_MS, (signal) =>
      run(connection, namespace, signal),
    );
  } finally {
    connection.close();
  }
}
