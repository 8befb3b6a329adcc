// The cluster as `confighash plan`, `explain` and `doctor` read it, with the user's own
// kubeconfig: GETs and lists whose failures become reasons, the dry-run `{}`
// merge patch that asks the webhook itself, confighash's Events on a workload, the
// follower's Lease and the webhook's registration.

import type {
  ClusterEvent,
  DoctorCluster,
  DryRunTouch,
  ExplainCluster,
  FollowLeader,
  FoundWorkload,
  Read,
  WebhookRegistration,
} from '../plan/ports.js';
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
  METADATA_ONLY_LIST,
  METADATA_ONLY_OBJECT,
  PLAN_FIELD_MANAGER,
  REPORTING_CONTROLLER,
  requestJson,
  sourcePath,
  workloadPath,
} from './client.js';
import type { ApiConnection } from './connection.js';

/** Where follow mode's Lease is: the follower's --lease-namespace and --lease-name. */
export interface LeaseLocation {
  readonly namespace: string;
  readonly name: string;
}

export function createExplainCluster(
  connection: ApiConnection,
  lease: LeaseLocation,
  now: () => number = Date.now,
): ExplainCluster & DoctorCluster {
  return {
    configSource: createApiConfigSource(connection),
    followLeader: (signal) => followLeader(connection, lease, now(), signal),
    findWorkloads: (kind, namespace, selector, signal) =>
      findWorkloads(connection, kind, namespace, selector, signal),
    webhookRegistration: (name, signal) => webhookRegistration(connection, name, signal),
    dryRunCreate: (kind, namespace, probe, signal) =>
      dryRunWrite(
        connection,
        'POST',
        workloadPath(namespace, kind),
        probe,
        signal,
        'dry-run a create',
      ),
    async namespace(namespace, signal) {
      const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}`;
      const found = await readObject<JsonObject>(
        connection,
        path,
        signal,
        `read namespace ${namespace}`,
      );
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
      return readObject<JsonObject>(
        connection,
        workloadPath(namespace, kind, name),
        signal,
        'read',
      );
    },
    async listWorkloads(kind, namespace, signal) {
      const path = workloadPath(namespace, kind);
      const listed = await readObject<{ items?: JsonObject[] }>(connection, path, signal, 'list');
      return listed.status === 'found'
        ? { status: 'found', value: listed.value.items ?? [] }
        : listed;
    },
    sourceWrittenAt: (kind, namespace, name, signal) =>
      sourceWrittenAt(connection, kind, namespace, name, signal),
    dryRunTouch: (kind, namespace, name, signal) =>
      dryRunWrite(
        connection,
        'PATCH',
        workloadPath(namespace, kind, name),
        {},
        signal,
        'dry-run a patch',
      ),
    dryRunApply: (kind, namespace, manifest, signal) =>
      dryRunApply(connection, kind, namespace, manifest, signal),
    confighashEvents: (kind, namespace, name, signal) =>
      confighashEvents(connection, kind, namespace, name, signal),
  };
}

/** A GET whose failure is a reason (`cannot <doing> …`), not an exception. */
async function readObject<T>(
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
  const listed = await readObject<{ items?: CoreEvent[] }>(connection, path, signal, 'list events');
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

/**
 * A write with dryRun=All, answered as the webhook answers a real one: `kubectl patch
 * --dry-run=server --type=merge -p '{}'` (PATCH, body `{}`), or a probe's create (POST).
 */
async function dryRunWrite(
  connection: ApiConnection,
  method: 'PATCH' | 'POST',
  path: string,
  body: JsonObject,
  signal: AbortSignal,
  doing: string,
): Promise<Read<DryRunTouch>> {
  try {
    const {
      status,
      headers,
      body: answer,
    } = await exchange(connection, {
      method,
      path: `${path}?dryRun=All&${FIELD_MANAGER_QUERY}`,
      body,
      contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
      signal,
    });
    if (status === 404) return { status: 'absent' };
    const object: unknown = answer.length > 0 ? JSON.parse(answer.toString('utf8')) : undefined;
    if (status < 200 || status >= 300 || !isObject(object)) {
      const message = isObject(object) && typeof object.message === 'string' ? object.message : '';
      return failedRead(new ApiError(status, message || `HTTP ${status}`), doing);
    }
    return { status: 'found', value: { object, warnings: warningsOf(headers.warning) } };
  } catch (error) {
    return failedRead(error, doing);
  }
}

interface LeaseObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

/**
 * Who leads follow mode, judged from outside at `now`: a holder whose renewTime plus the
 * lease's duration is not past. (The candidates judge by their own observation instead;
 * a clock far off from the apiserver's can make this answer wrong.)
 */
async function followLeader(
  connection: ApiConnection,
  lease: LeaseLocation,
  now: number,
  signal: AbortSignal,
): Promise<Read<FollowLeader>> {
  const name = `${lease.namespace}/${lease.name}`;
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(lease.namespace)}/leases/${encodeURIComponent(lease.name)}`;
  const read = await readObject<LeaseObject>(connection, path, signal, 'read');
  if (read.status === 'absent') {
    return { status: 'found', value: { lease: name, holder: null, vacant: 'there is no Lease' } };
  }
  if (read.status === 'failed') return read;
  const { holderIdentity = '', leaseDurationSeconds = 15, renewTime } = read.value.spec ?? {};
  if (holderIdentity === '') {
    return { status: 'found', value: { lease: name, holder: null, vacant: 'it was released' } };
  }
  const renewed = renewTime === undefined ? Number.NaN : Date.parse(renewTime);
  if (!(renewed + leaseDurationSeconds * 1000 >= now)) {
    const since = renewTime === undefined ? 'never renewed' : `not renewed since ${renewTime}`;
    return {
      status: 'found',
      value: { lease: name, holder: null, vacant: `${holderIdentity} held it, ${since}` },
    };
  }
  return { status: 'found', value: { lease: name, holder: holderIdentity } };
}

/** `kubectl get KIND [-l SELECTOR] [-A]`, names only (metadata-only list). */
async function findWorkloads(
  connection: ApiConnection,
  kind: WorkloadKind,
  namespace: string | undefined,
  selector: string | undefined,
  signal: AbortSignal,
): Promise<Read<FoundWorkload[]>> {
  const collection =
    namespace === undefined
      ? `/apis/${kind.group}/${kind.version}/${kind.resource}`
      : workloadPath(namespace, kind);
  const query = selector === undefined ? '' : `?labelSelector=${encodeURIComponent(selector)}`;
  try {
    const listed = await requestJson<{ items?: JsonObject[] | null }>(connection, {
      method: 'GET',
      path: `${collection}${query}`,
      accept: METADATA_ONLY_LIST,
      signal,
    });
    const found = (listed.items ?? []).flatMap((item) => {
      const metadata = objectAt(item, ['metadata']) ?? {};
      return typeof metadata.name === 'string' && typeof metadata.namespace === 'string'
        ? [{ namespace: metadata.namespace, name: metadata.name }]
        : [];
    });
    return { status: 'found', value: found };
  } catch (error) {
    return failedRead(error, `list ${kind.resource}`);
  }
}

interface WebhookConfigurationObject {
  webhooks?: {
    failurePolicy?: string;
    clientConfig?: { url?: string; service?: { namespace?: string; name?: string } };
  }[];
}

async function webhookRegistration(
  connection: ApiConnection,
  name: string,
  signal: AbortSignal,
): Promise<Read<WebhookRegistration>> {
  const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(name)}`;
  const read = await readObject<WebhookConfigurationObject>(connection, path, signal, 'read');
  if (read.status !== 'found') return read;
  const webhooks = read.value.webhooks ?? [];
  const client = webhooks[0]?.clientConfig;
  const service = client?.service;
  return {
    status: 'found',
    value: {
      webhooks: webhooks.length,
      failurePolicies: webhooks.map((webhook) => webhook.failurePolicy ?? 'Fail'),
      target: service ? `service ${service.namespace}/${service.name}` : (client?.url ?? 'nothing'),
    },
  };
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
export async function checkReachable(
  connection: ApiConnection,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await requestJson(connection, {
      method: 'GET',
      path: '/version',
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    throw describeFailure(error, `reach the cluster at ${connection.server.origin}`);
  }
}
