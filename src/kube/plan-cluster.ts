// The cluster as `confighash plan` and `explain` read it, with the user's own
// kubeconfig: GETs and lists whose failures become reasons, the dry-run `{}`
// merge patch that asks the webhook itself, and confighash's Events on a workload.

import type { ClusterEvent, DryRunTouch, ExplainCluster, Read } from '../plan/ports.js';
import type { SourceKind } from '../sources/index.js';
import {
  annotationsAt,
  isObject,
  type JsonObject,
  lastWriteTime,
  objectAt,
  type WorkloadKind,
} from '../workload/index.js';
import { createApiConfigSource } from './api-config-source.js';
import {
  ApiError,
  describeFailure,
  exchange,
  FIELD_MANAGER_QUERY,
  isStatus,
  METADATA_ONLY_OBJECT,
  PLAN_FIELD_MANAGER,
  REPORTING_CONTROLLER,
  requestJson,
  sourcePath,
  workloadPath,
} from './client.js';
import type { ApiConnection } from './connection.js';

export function createExplainCluster(connection: ApiConnection): ExplainCluster {
  return {
    configSource: createApiConfigSource(connection),
    async namespace(namespace, signal) {
      const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
      const found = await read<JsonObject>(connection, path, signal, `read namespace ${namespace}`);
      if (found.status !== 'found') return found;
      return {
        status: 'found',
        value: {
          labels: labelsOf(found.value),
          annotations: annotationsAt(found.value, ['metadata']),
        },
      };
    },
    getWorkload(kind, namespace, name, signal) {
      return read<JsonObject>(connection, workloadPath(namespace, kind, name), signal, 'read');
    },
    async listWorkloads(kind, namespace, signal) {
      const path = workloadPath(namespace, kind);
      const listed = await read<{ items?: JsonObject[] }>(connection, path, signal, 'list');
      return listed.status === 'found'
        ? { status: 'found', value: listed.value.items ?? [] }
        : listed;
    },
    sourceWrittenAt: (kind, namespace, name, signal) =>
      sourceWrittenAt(connection, kind, namespace, name, signal),
    dryRunTouch: (kind, namespace, name, signal) =>
      dryRunTouch(connection, kind, namespace, name, signal),
    dryRunApply: (kind, namespace, manifest, signal) =>
      dryRunApply(connection, kind, namespace, manifest, signal),
    confighashEvents: (kind, namespace, name, signal) =>
      confighashEvents(connection, kind, namespace, name, signal),
  };
}

/** A GET whose failure is a reason (`cannot <doing> …`), not an exception. */
async function read<T>(
  connection: ApiConnection,
  path: string,
  signal: AbortSignal,
  doing: string,
): Promise<Read<T>> {
  try {
    return {
      status: 'found',
      value: await requestJson<T>(connection, { method: 'GET', path, signal }),
    };
  } catch (error) {
    return failedRead(error, doing);
  }
}

/** When a ConfigMap or Secret was last written, from its metadata alone (never its data). */
async function sourceWrittenAt(
  connection: ApiConnection,
  kind: SourceKind,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<Read<string>> {
  const path = sourcePath(kind, namespace, name);
  try {
    const metadata = await requestJson<JsonObject>(connection, {
      method: 'GET',
      path,
      accept: METADATA_ONLY_OBJECT,
      signal,
    });
    const time = lastWriteTime(metadata);
    return time === undefined ? { status: 'absent' } : { status: 'found', value: time };
  } catch (error) {
    return failedRead(error, 'read');
  }
}

/** The workload as a forced server-side apply would store it: dryRun=All, nothing is written. */
async function dryRunApply(
  connection: ApiConnection,
  kind: WorkloadKind,
  namespace: string,
  manifest: JsonObject,
  signal: AbortSignal,
): Promise<Read<JsonObject>> {
  const body = applicable(manifest, namespace);
  const name = String((body.metadata as JsonObject).name);
  const query = `dryRun=All&force=true&fieldManager=${encodeURIComponent(PLAN_FIELD_MANAGER)}`;
  try {
    const applied = await requestJson<JsonObject>(connection, {
      method: 'PATCH',
      path: `${workloadPath(namespace, kind, name)}?${query}`,
      body,
      contentType: 'application/apply-patch+yaml',
      signal,
    });
    return { status: 'found', value: applied };
  } catch (error) {
    return failedRead(error, 'dry-run an apply');
  }
}

/** confighash's Events on the object, oldest first. */
async function confighashEvents(
  connection: ApiConnection,
  kind: Pick<WorkloadKind, 'kind'>,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<Read<ClusterEvent[]>> {
  const selector = encodeURIComponent(
    `involvedObject.kind=${kind.kind},involvedObject.name=${name}`,
  );
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/events?fieldSelector=${selector}`;
  const listed = await read<{ items?: CoreEvent[] }>(connection, path, signal, 'list events');
  if (listed.status !== 'found') return listed;
  const ours = (listed.value.items ?? []).filter(
    (event) => event.reportingComponent === REPORTING_CONTROLLER,
  );
  return {
    status: 'found',
    value: ours.map(toClusterEvent).sort((a, b) => (a.time < b.time ? -1 : 1)),
  };
}

interface CoreEvent {
  reason?: string;
  message?: string;
  reportingComponent?: string;
  eventTime?: string | null;
  lastTimestamp?: string | null;
  firstTimestamp?: string | null;
  metadata?: { creationTimestamp?: string };
}

function toClusterEvent(event: CoreEvent): ClusterEvent {
  return {
    reason: event.reason ?? '',
    note: event.message ?? '',
    time:
      event.eventTime ??
      event.lastTimestamp ??
      event.firstTimestamp ??
      event.metadata?.creationTimestamp ??
      '',
  };
}

/** `kubectl patch --dry-run=server --type=merge -p '{}'`: the webhook answers as for a real write. */
async function dryRunTouch(
  connection: ApiConnection,
  kind: WorkloadKind,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<Read<DryRunTouch>> {
  try {
    const { status, headers, body } = await exchange(connection, {
      method: 'PATCH',
      path: `${workloadPath(namespace, kind, name)}?dryRun=All&${FIELD_MANAGER_QUERY}`,
      body: {},
      contentType: 'application/merge-patch+json',
      signal,
    });
    if (status === 404) return { status: 'absent' };
    const object: unknown = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
    if (status < 200 || status >= 300 || !isObject(object)) {
      const message = isObject(object) && typeof object.message === 'string' ? object.message : '';
      return failedRead(new ApiError(status, message || `HTTP ${status}`), 'dry-run a patch');
    }
    return { status: 'found', value: { object, warnings: warningsOf(headers.warning) } };
  } catch (error) {
    return failedRead(error, 'dry-run a patch');
  }
}

/**
 * The manifest as an apply body: in the namespace planned, without what a
 * `kubectl get -o yaml` leaves in it that an apply refuses (managedFields) or
 * that would make it conditional (resourceVersion).
 */
function applicable(manifest: JsonObject, namespace: string): JsonObject {
  const { status: _status, ...object } = manifest;
  const {
    managedFields: _managedFields,
    resourceVersion: _resourceVersion,
    uid: _uid,
    creationTimestamp: _creationTimestamp,
    ...metadata
  } = isObject(object.metadata) ? object.metadata : {};
  return { ...object, metadata: { ...metadata, namespace } };
}

/** `299 - "confighash: …"` headers, as the text of each warning. */
function warningsOf(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return values.flatMap((value) =>
    value
      .split(/,\s*(?=\d{3} )/)
      .map((one) => one.replace(/^\d{3} \S+ "(.*)"$/, '$1').replaceAll('\\"', '"')),
  );
}

function failedRead(error: unknown, doing: string): Read<never> {
  if (error instanceof ApiError && error.status === 404) return { status: 'absent' };
  // `cannot read: HTTP 403: …` → the reason alone, for a line that already names the object.
  const line = describeFailure(error, doing).message.replace(/^cannot [^:]*: /, '');
  // The same word the ConfigSource adapter uses, so every unreadable object reads alike.
  return { status: 'failed', detail: isStatus(error, 403) ? 'forbidden' : line };
}

/** String-valued labels; anything else is ignored. */
function labelsOf(object: JsonObject): Record<string, string> {
  const values = objectAt(object, ['metadata', 'labels']) ?? {};
  return Object.fromEntries(
    Object.entries(values).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/**
 * One GET of /version before a plan or an explanation: a cluster that cannot be
 * reached is a mistake to fix (exit 2), not a column of "cannot tell".
 */
export async function checkReachable(connection: ApiConnection): Promise<void> {
  try {
    await requestJson(connection, { method: 'GET', path: '/version' });
  } catch (error) {
    throw describeFailure(error, `reach the cluster at ${connection.server.origin}`);
  }
}
