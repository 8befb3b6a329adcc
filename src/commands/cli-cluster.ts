// The cluster of a CLI command that reads it (plan, explain, doctor, halt, resume): kubectl's
// credentials and default namespace, the connection as --as and -v make it, a reachability
// check that turns "no cluster" into one line, one deadline for the whole command
// (--request-timeout), and the connection closed however it ends.

import type { ClientChoices, ClusterSelection } from '../cli/index.js';
import {
  type ApiConnection,
  type ClusterCredentials,
  checkReachable,
  connectToCluster,
  type ExchangeRecord,
} from '../kube/index.js';
import { withDeadline } from '../runtime/deadline.js';
import { loadClusterCredentials } from './errors.js';

/** kubectl logs every request from -v 6 on. */
const REQUEST_LOG_LEVEL = 6;

export async function onCluster<T>(
  selection: ClusterSelection,
  client: ClientChoices,
  namespaceFlag: string | undefined,
  run: (connection: ApiConnection, namespace: string, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const credentials = await loadClusterCredentials({ selection });
  const namespace = namespaceFlag ?? credentials.current().namespace ?? 'default';
  return withConnection(credentials, client, (connection, signal) =>
    run(connection, namespace, signal),
  );
}

/** A connection made as `client` says, checked reachable, closed after `run` under the deadline. */
export async function withConnection<T>(
  credentials: ClusterCredentials,
  client: ClientChoices,
  run: (connection: ApiConnection, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const connection = connectToCluster(credentials, {
    ...(client.impersonate === undefined
      ? {}
      : { headers: { 'impersonate-user': client.impersonate } }),
    ...(client.verbosity >= REQUEST_LOG_LEVEL ? { onExchange: logRequest } : {}),
  });
  try {
    return await withDeadline(undefined, deadlineMs(client), async (signal) => {
      await checkReachable(connection, signal);
      return run(connection, signal);
    });
  } finally {
    connection.close();
  }
}

/** --request-timeout 0: no limit (a timer's longest wait stands for it). */
function deadlineMs(client: ClientChoices): number {
  return client.requestTimeoutMs === 0 ? 2 ** 31 - 1 : client.requestTimeoutMs;
}

/** As kubectl's -v 6 prints it: method, URL, status and time; no header, no body. */
function logRequest(record: ExchangeRecord): void {
  const status = record.status === 0 ? `failed (${record.error})` : String(record.status);
  process.stderr.write(
    `I ${new Date().toISOString()} ${record.method} ${record.url} ${status} in ${record.durationMs} milliseconds\n`,
  );
}
