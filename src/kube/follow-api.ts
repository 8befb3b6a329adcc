// FollowApi over the API server: lists, metadata-only watches, the `{}` touch
// and Events, through a keep-alive connection of their own (long-lived watch
// streams must not take the sockets admission lookups need).

import { hostname } from 'node:os';
import { REPORTING_CONTROLLER } from '../follow/events.js';
import { microTime } from '../follow/lease.js';
import type {
  ConfigChange,
  FollowApi,
  NamespaceInfo,
  WatchEnd,
  WorkloadEvent,
} from '../follow/ports.js';
import { FOLLOW_NAMESPACE_SELECTOR, type WorkloadKind } from '../workload/index.js';
import {
  ApiError,
  FIELD_MANAGER_QUERY,
  isStatus,
  requestJson,
  streamWatch,
  type WatchEvent,
} from './client.js';
import type { ApiConnection } from './connection.js';

const FOLLOW_SELECTOR = encodeURIComponent(FOLLOW_NAMESPACE_SELECTOR);
const METADATA_ONLY =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_ONLY_WATCH =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
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
  const workloadPath = (namespace: string, kind: WorkloadKind, name?: string) =>
    `/apis/${kind.group}/${kind.version}/namespaces/${encodeURIComponent(namespace)}/${kind.resource}${
      name === undefined ? '' : `/${encodeURIComponent(name)}`
    }`;

  const watch = async (
    path: string,
    resourceVersion: string,
    accept: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> => {
    let latest = resourceVersion;
    let expired = false;
    const separator = path.includes('?') ? '&' : '?';
    const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_TIMEOUT_SECONDS}&resourceVersion=${encodeURIComponent(resourceVersion)}`;
    try {
      await streamWatch(
        connection,
        `${path}${separator}${query}`,
        accept,
        (event) => {
          if (event.type === 'ERROR') {
            if (event.object.code === 410) expired = true;
            else
              throw new ApiError(event.object.code ?? 500, event.object.message ?? 'watch error');
            return;
          }
          const version = event.object.metadata?.resourceVersion;
          if (version) latest = version;
          if (event.type !== 'BOOKMARK') onEvent(event);
        },
        signal,
      );
    } catch (error) {
      if (isStatus(error, 410)) return { resourceVersion: latest, expired: true };
      if (signal.aborted) return { resourceVersion: latest, expired: false };
      throw error;
    }
    return { resourceVersion: latest, expired };
  };

  return {
    async listFollowNamespaces(signal) {
      const list = await requestJson<ObjectList<Namespace>>(connection, {
        method: 'GET',
        path: `/api/v1/namespaces?labelSelector=${FOLLOW_SELECTOR}`,
        signal,
      });
      return {
        namespaces: list.items.map(toNamespaceInfo),
        resourceVersion: list.metadata.resourceVersion,
      };
    },

    watchFollowNamespaces(resourceVersion, onEvent, signal) {
      return watch(
        `/api/v1/namespaces?labelSelector=${FOLLOW_SELECTOR}`,
        resourceVersion,
        'application/json',
        (event) => {
          if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
          onEvent({ type: event.type, namespace: toNamespaceInfo(event.object as Namespace) });
        },
        signal,
      );
    },

    async listConfigVersion(namespace, resource, signal) {
      const list = await requestJson<ObjectList<unknown>>(connection, {
        method: 'GET',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}?limit=1`,
        accept: METADATA_ONLY,
        signal,
      });
      return list.metadata.resourceVersion;
    },

    watchConfig(
      namespace,
      resource,
      resourceVersion,
      onChange: (change: ConfigChange) => void,
      signal,
    ) {
      return watch(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`,
        resourceVersion,
        METADATA_ONLY_WATCH,
        (event) => {
          const name = event.object.metadata?.name;
          if (name && event.type !== 'BOOKMARK' && event.type !== 'ERROR')
            onChange({ type: event.type, name });
        },
        signal,
      );
    },

    async listWorkloads(namespace, kind, signal) {
      const list = await requestJson<ObjectList<unknown>>(connection, {
        method: 'GET',
        path: workloadPath(namespace, kind),
        signal,
      });
      return list.items;
    },

    async getWorkload(namespace, kind, name, signal) {
      try {
        return await requestJson<unknown>(connection, {
          method: 'GET',
          path: workloadPath(namespace, kind, name),
          signal,
        });
      } catch (error) {
        if (isStatus(error, 404)) return undefined;
        throw error;
      }
    },

    async touch(namespace, kind, name, signal) {
      await requestJson(connection, {
        method: 'PATCH',
        path: `${workloadPath(namespace, kind, name)}?${FIELD_MANAGER_QUERY}`,
        body: {},
        contentType: 'application/merge-patch+json',
        signal,
      });
    },

    async recordEvent(event: WorkloadEvent, signal) {
      const now = microTime(new Date());
      await requestJson(connection, {
        method: 'POST',
        path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(event.namespace)}/events`,
        body: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { generateName: `${event.name}-`, namespace: event.namespace },
          eventTime: now,
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
        },
        signal,
      });
    },
  };
}

function toNamespaceInfo(namespace: Namespace): NamespaceInfo {
  return { name: namespace.metadata.name, annotations: namespace.metadata.annotations ?? {} };
}
