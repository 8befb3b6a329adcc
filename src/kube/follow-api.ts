// FollowApi over the API server: lists, metadata-only watches, the `{}` touch
// and Events, through a keep-alive connection of their own (long-lived watch
// streams must not take the sockets admission lookups need). Every request is
// bounded (FollowTimeouts.requestMs); a watch is bounded until its stream starts,
// and then by its silence: bookmarks are on, so a healthy watch is never silent
// for long, and one that is has lost its connection without a word.

import { hostname } from 'node:os';
import {
  type ConfigChange,
  type ConfigResource,
  FOLLOW_TIMEOUTS,
  type FollowApi,
  type FollowTimeouts,
  microTime,
  type NamespaceEvent,
  type NamespaceInfo,
  type WatchEnd,
  type WorkloadEvent,
  withTimeout,
} from '../follow/ports.js';
import { FOLLOW_NAMESPACE_SELECTOR, type WorkloadKind } from '../workload/index.js';
import {
  type ApiRequest,
  FIELD_MANAGER_QUERY,
  isStatus,
  METADATA_ONLY_LIST,
  METADATA_ONLY_OBJECT,
  REPORTING_CONTROLLER,
  requestJson,
  workloadPath,
} from './client.js';
import type { ApiConnection } from './connection.js';
import { watchFrom } from './watch.js';

const FOLLOW_SELECTOR = encodeURIComponent(FOLLOW_NAMESPACE_SELECTOR);
/** The server closes a watch after this; we then resume from the last resourceVersion. */

interface ObjectList<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

/** Workloads are listed in pages of this many (docs/design.md §6), each page one bounded request. */
export const LIST_PAGE_SIZE = 500;

interface Namespace {
  metadata: { name: string; annotations?: Record<string, string> };
}

export function createFollowApi(
  connection: ApiConnection,
  timeouts: FollowTimeouts = FOLLOW_TIMEOUTS,
): FollowApi {
  return new ApiFollowApi(connection, timeouts);
}

const NAMESPACES = `/api/v1/namespaces?labelSelector=${FOLLOW_SELECTOR}`;

class ApiFollowApi implements FollowApi {
  constructor(
    private readonly connection: ApiConnection,
    private readonly timeouts: FollowTimeouts,
  ) {}

  /** One request, given up after FollowTimeouts.requestMs. */
  #request<T>(request: ApiRequest & { signal: AbortSignal }): Promise<T> {
    return requestJson<T>(this.connection, {
      ...request,
      signal: withTimeout(request.signal, this.timeouts.requestMs),
    });
  }

  async listFollowNamespaces(signal: AbortSignal) {
    const list = await this.#request<ObjectList<Namespace>>({
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
    return watchFrom(
      this.connection,
      this.timeouts,
      NAMESPACES,
      resourceVersion,
      'application/json',
      signal,
      (event) => {
        onEvent({ type: event.type, namespace: toNamespaceInfo(event.object as Namespace) });
      },
    );
  }

  async listConfigVersion(namespace: string, resource: ConfigResource, signal: AbortSignal) {
    const list = await this.#request<ObjectList<unknown>>({
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
    const { connection, timeouts } = this;
    return watchFrom(
      connection,
      timeouts,
      path,
      resourceVersion,
      METADATA_ONLY_OBJECT,
      signal,
      (event) => {
        const name = event.object.metadata?.name;
        if (name) onChange({ type: event.type, name });
      },
    );
  }

  async listWorkloads(namespace: string, kind: WorkloadKind, signal: AbortSignal) {
    const items: unknown[] = [];
    let next: string | undefined = '';
    try {
      while (next !== undefined) {
        const token: string = next ? `&continue=${encodeURIComponent(next)}` : '';
        const page: ObjectList<unknown> = await this.#request<ObjectList<unknown>>({
          method: 'GET',
          path: `${workloadPath(namespace, kind)}?limit=${LIST_PAGE_SIZE}${token}`,
          signal,
        });
        items.push(...page.items);
        next = page.metadata.continue || undefined;
      }
      return items;
    } catch (error) {
      // A kind turned on whose CRD is not installed (yet): there are none of it to follow.
      if (isStatus(error, 404)) return [];
      throw error;
    }
  }

  async getWorkload(namespace: string, kind: WorkloadKind, name: string, signal: AbortSignal) {
    try {
      return await this.#request<unknown>({
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
    await this.#request({
      method: 'PATCH',
      path: `${workloadPath(namespace, kind, name)}?${FIELD_MANAGER_QUERY}`,
      body: {},
      contentType: 'application/merge-patch+json',
      signal,
    });
  }

  async recordEvent(event: WorkloadEvent, signal: AbortSignal) {
    await this.#request({
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

function configPath(namespace: string, resource: ConfigResource): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

function toNamespaceInfo(namespace: Namespace): NamespaceInfo {
  return { name: namespace.metadata.name, annotations: namespace.metadata.annotations ?? {} };
}
