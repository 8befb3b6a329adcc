// FollowApi over the API server: paginated lists and watches — metadata-only for
// ConfigMaps and Secrets, cluster-wide or of one namespace — the `{}` touch and
// Events, through a keep-alive connection of their own (long-lived watch
// streams must not take the sockets admission lookups need). Every request is
// bounded (ApiTimeouts.requestMs); a watch is bounded until its stream starts,
// and then by its silence: bookmarks are on, so a healthy watch is never silent
// for long, and one that is has lost its connection without a word.

import { hostname } from 'node:os';
import {
  type ConfigObject,
  type ConfigResource,
  type FollowApi,
  microTime,
  type NamespaceInfo,
  type RecordWrite,
  type TouchOutcome,
  type WatchNamespace,
  type WorkloadEvent,
} from '../follow/ports.js';
import type { ListerWatcher } from '../runtime/index.js';
import type { NamedSource } from '../sources/index.js';
import { FANOUT_STATE, FOLLOW_NAMESPACE_SELECTOR, type WorkloadKind } from '../workload/index.js';
import { FIELD_MANAGER_QUERY, isStatus, REPORTING_CONTROLLER, workloadPath } from './client.js';
import type { ApiConnection } from './connection.js';
import { listerWatcher } from './lister-watcher.js';
import { type ApiRequests, boundedRequests, type RequestOptions } from './requests.js';
import { writeSourceAnnotation } from './source-annotation.js';

const FOLLOW_SELECTOR = encodeURIComponent(FOLLOW_NAMESPACE_SELECTOR);

interface Namespace {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

export function createFollowApi(
  connection: ApiConnection,
  options: RequestOptions = {},
): FollowApi {
  return new ApiFollowApi(boundedRequests(connection, options));
}

const NAMESPACES = `/api/v1/namespaces?labelSelector=${FOLLOW_SELECTOR}`;

class ApiFollowApi implements FollowApi {
  readonly followNamespaces: ListerWatcher<NamespaceInfo>;

  constructor(private readonly requests: ApiRequests) {
    this.followNamespaces = listerWatcher(requests, {
      path: NAMESPACES,
      decode: (object) => [toNamespaceInfo(object as Namespace)],
    });
  }

  configObjects(namespace: WatchNamespace, resource: ConfigResource): ListerWatcher<ConfigObject> {
    return listerWatcher(this.requests, {
      path: configPath(namespace, resource),
      metadataOnly: true,
      decode: (object) => toConfigObject(object as ConfigMetadata),
    });
  }

  workloadObjects(namespace: WatchNamespace, kind: WorkloadKind): ListerWatcher<unknown> {
    return listerWatcher(this.requests, {
      path: kindPath(namespace, kind),
      decode: (object) => [object],
      // A kind turned on whose CRD is not installed (yet): nothing of it to follow, now.
      mayBeAbsent: true,
    });
  }

  async getWorkload(namespace: string, kind: WorkloadKind, name: string, signal: AbortSignal) {
    try {
      return await this.requests.json<unknown>({
        method: 'GET',
        path: workloadPath(namespace, kind, name),
        signal,
      });
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  async touch(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    signal: AbortSignal,
  ): Promise<TouchOutcome> {
    try {
      await this.requests.json({
        method: 'PATCH',
        path: `${workloadPath(namespace, kind, name)}?${FIELD_MANAGER_QUERY}`,
        body: {},
        contentType: 'application/merge-patch+json',
        signal,
      });
      return { status: 'touched' };
    } catch (error) {
      // 403: RBAC or a policy that denies; 422: a policy's validation (the follower's fence).
      if (isStatus(error, 403, 422)) return { status: 'denied', reason: error.message };
      throw error;
    }
  }

  async writeFanoutRecord(
    namespace: string,
    source: NamedSource,
    value: string,
    resourceVersion: string,
    signal: AbortSignal,
  ): Promise<RecordWrite> {
    return writeSourceAnnotation(
      (request) => this.requests.json(request),
      { source, namespace, resourceVersion },
      { key: FANOUT_STATE, value },
      signal,
    );
  }

  async listPods(namespace: string, selector: string, signal: AbortSignal): Promise<unknown[]> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`;
    const pods: unknown[] = [];
    // Only what a canary's verdict reads, page by page: no spec, no environment, no volumes.
    const keep = ({ metadata, status }: PodView) => ({
      metadata: { name: metadata?.name, creationTimestamp: metadata?.creationTimestamp },
      status: {
        containerStatuses: status?.containerStatuses,
        initContainerStatuses: status?.initContainerStatuses,
      },
    });
    await this.requests.list<PodView>(
      path,
      undefined,
      (items) => pods.push(...items.map(keep)),
      signal,
    );
    return pods;
  }

  async recordEvent(event: WorkloadEvent, signal: AbortSignal) {
    await this.requests.json({
      method: 'POST',
      path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(event.namespace)}/events`,
      body: eventBody(event, new Date()),
      signal,
    });
  }
}

function eventBody(event: WorkloadEvent, now: Date) {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { generateName: `${event.name}-`, namespace: event.namespace },
    eventTime: microTime(now),
    type: event.type,
    reason: event.reason,
    action: event.action,
    note: event.note,
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: hostname(),
    regarding: {
      apiVersion: `${event.kind.group}/${event.kind.version}`,
      kind: event.kind.kind,
      namespace: event.namespace,
      name: event.name,
      uid: event.uid,
    },
  };
}

interface PodView {
  metadata?: { name?: string; creationTimestamp?: string };
  status?: { containerStatuses?: unknown; initContainerStatuses?: unknown };
}

interface ConfigMetadata {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    annotations?: Record<string, string>;
  };
}

/** A source's metadata as the index keeps it: of its annotations, only its fan-out record. */
function toConfigObject({ metadata }: ConfigMetadata): ConfigObject[] {
  const { name, namespace, resourceVersion, uid } = metadata ?? {};
  if (!name || !namespace || !resourceVersion) return [];
  const fanout = metadata?.annotations?.[FANOUT_STATE];
  return [
    {
      name,
      namespace,
      resourceVersion,
      ...(uid ? { uid } : {}),
      ...(typeof fanout === 'string' ? { fanout } : {}),
    },
  ];
}

/** A collection in `namespace`, or across all of them. */
function collection(prefix: string, namespace: WatchNamespace, resource: string): string {
  return namespace === undefined
    ? `${prefix}/${resource}`
    : `${prefix}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

function configPath(namespace: WatchNamespace, resource: ConfigResource): string {
  return collection('/api/v1', namespace, resource);
}

function kindPath(namespace: WatchNamespace, kind: WorkloadKind): string {
  return collection(`/apis/${kind.group}/${kind.version}`, namespace, kind.resource);
}

function toNamespaceInfo(namespace: Namespace): NamespaceInfo {
  const { name, labels = {}, annotations = {} } = namespace.metadata;
  return { name, labels, annotations };
}
