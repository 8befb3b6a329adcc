// FollowApi over the API server: lists, metadata-only watches, the `{}` touch
// and Events, through a keep-alive connection of their own (long-lived watch
// streams must not take the sockets admission lookups need).

import { hostname } from 'node:os';
import {
  type ConfigChange,
  type ConfigResource,
  type FollowApi,
  microTime,
  type NamespaceEvent,
  type NamespaceInfo,
  type WatchEnd,
  type WorkloadEvent,
} from '../follow/ports.js';
import { FOLLOW_NAMESPACE_SELECTOR, type WorkloadKind } from '../workload/index.js';
import {
  ApiError,
  FIELD_MANAGER_QUERY,
  isStatus,
  METADATA_ONLY_LIST,
  METADATA_ONLY_OBJECT,
  REPORTING_CONTROLLER,
  requestJson,
  streamWatch,
  type WatchEvent,
  workloadPath,
} from './client.js';
import type { ApiConnection } from './connection.js';

const FOLLOW_SELECTOR = encodeURIComponent(FOLLOW_NAMESPACE_SELECTOR);
/** The server closes a watch after this; we then resume from the last resourceVersion. */
const WATCH_TIMEOUT_SECONDS = 300;

interface ObjectList<T> {
  metadata: { resourceVersion: string };
  items: T[];
}

interface Namespace {
  metadata: { name: string; annotations?: Record<string, string> };
}

export function createFollowApi(connection: ApiConnection): FollowApi {
  return new ApiFollowApi(connection);
}

const NAMESPACES = `/api/v1/namespaces?labelSelector=${FOLLOW_SELECTOR}`;

class ApiFollowApi implements FollowApi {
  constructor(private readonly connection: ApiConnection) {}

  async listFollowNamespaces(signal: AbortSignal) {
    const list = await requestJson<ObjectList<Namespace>>(this.connection, {
      method: 'GET',
      path: NAMESPACES,
      signal,
    });
    return {
      namespaces: list.items.map(toNamespaceInfo),
      resourceVersion: list.metadata.resourceVersion,
    };
  }

  watchFollowNamespaces(
    resourceVersion: string,
    onEvent: (event: NamespaceEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    return watch(
      this.connection,
      NAMESPACES,
      resourceVersion,
      'application/json',
      signal,
      (event) => {
        if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
        onEvent({ type: event.type, namespace: toNamespaceInfo(event.object as Namespace) });
      },
    );
  }

  async listConfigVersion(namespace: string, resource: ConfigResource, signal: AbortSignal) {
    const list = await requestJson<ObjectList<unknown>>(this.connection, {
      method: 'GET',
      path: `${configPath(namespace, resource)}?limit=1`,
      accept: METADATA_ONLY_LIST,
      signal,
    });
    return list.metadata.resourceVersion;
  }

  watchConfig(
    namespace: string,
    resource: ConfigResource,
    resourceVersion: string,
    onChange: (change: ConfigChange) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    const path = configPath(namespace, resource);
    return watch(this.connection, path, resourceVersion, METADATA_ONLY_OBJECT, signal, (event) => {
      const name = event.object.metadata?.name;
      if (name && event.type !== 'BOOKMARK' && event.type !== 'ERROR') {
        onChange({ type: event.type, name });
      }
    });
  }

  async listWorkloads(namespace: string, kind: WorkloadKind, signal: AbortSignal) {
    try {
      const list = await requestJson<ObjectList<unknown>>(this.connection, {
        method: 'GET',
        path: workloadPath(namespace, kind),
        signal,
      });
      return list.items;
    } catch (error) {
      // A kind turned on whose CRD is not installed (yet): there are none of it to follow.
      if (isStatus(error, 404)) return [];
      throw error;
    }
  }

  async getWorkload(namespace: string, kind: WorkloadKind, name: string, signal: AbortSignal) {
    try {
      return await requestJson<unknown>(this.connection, {
        method: 'GET',
        path: workloadPath(namespace, kind, name),
        signal,
      });
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  async touch(namespace: string, kind: WorkloadKind, name: string, signal: AbortSignal) {
    await requestJson(this.connection, {
      method: 'PATCH',
      path: `${workloadPath(namespace, kind, name)}?${FIELD_MANAGER_QUERY}`,
      body: {},
      contentType: 'application/merge-patch+json',
      signal,
    });
  }

  async recordEvent(event: WorkloadEvent, signal: AbortSignal) {
    await requestJson(this.connection, {
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

/** Streams one watch from `resourceVersion`; a 410 (as status or ERROR event) ends it as expired. */
async function watch(
  connection: ApiConnection,
  path: string,
  resourceVersion: string,
  accept: string,
  signal: AbortSignal,
  onEvent: (event: WatchEvent) => void,
): Promise<WatchEnd> {
  let latest = resourceVersion;
  let expired = false;
  const separator = path.includes('?') ? '&' : '?';
  const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_TIMEOUT_SECONDS}&resourceVersion=${encodeURIComponent(resourceVersion)}`;
  const handle = (event: WatchEvent) => {
    if (event.type === 'ERROR') {
      if (event.object.code !== 410) {
        throw new ApiError(event.object.code ?? 500, event.object.message ?? 'watch error');
      }
      expired = true;
      return;
    }
    const version = event.object.metadata?.resourceVersion;
    if (version) latest = version;
    if (event.type !== 'BOOKMARK') onEvent(event);
  };
  try {
    await streamWatch(connection, `${path}${separator}${query}`, accept, handle, signal);
  } catch (error) {
    if (isStatus(error, 410)) return { resourceVersion: latest, expired: true };
    if (signal.aborted) return { resourceVersion: latest, expired: false };
    throw error;
  }
  return { resourceVersion: latest, expired };
}

function configPath(namespace: string, resource: ConfigResource): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

function toNamespaceInfo(namespace: Namespace): NamespaceInfo {
  return { name: namespace.metadata.name, annotations: namespace.metadata.annotations ?? {} };
}
