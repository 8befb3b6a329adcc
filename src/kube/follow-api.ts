// FollowApi over the API server: paginated lists and watches — metadata-only for
// ConfigMaps and Secrets, cluster-wide or of one namespace — the `{}` touch and
// Events, through a keep-alive connection of their own (long-lived watch
// streams must not take the sockets admission lookups need). Every request is
// bounded (ApiTimeouts.requestMs); a watch is bounded until its stream starts,
// and then by its silence: bookmarks are on, so a healthy watch is never silent
// for long, and one that is has lost its connection without a word.

import { hostname } from 'node:os';
import {
  type ConfigEvent,
  type ConfigObject,
  type ConfigResource,
  type FollowApi,
  microTime,
  type NamespaceEvent,
  type NamespaceInfo,
  type RecordWrite,
  type TouchOutcome,
  type WatchNamespace,
  type WorkloadEvent,
  type WorkloadWatchEvent,
} from '../follow/ports.js';
import { API_TIMEOUTS, type ApiTimeouts, type WatchEnd, withDeadline } from '../runtime/index.js';
import type { NamedSource } from '../sources/index.js';
import { FANOUT_STATE, FOLLOW_NAMESPACE_SELECTOR, type WorkloadKind } from '../workload/index.js';
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
import { writeSourceAnnotation } from './source-annotation.js';
import { watchFrom } from './watch.js';

const FOLLOW_SELECTOR = encodeURIComponent(FOLLOW_NAMESPACE_SELECTOR);

interface ObjectList<T> {
  metadata: { resourceVersion: string; continue?: string };
  /** null in an empty metadata-only list (PartialObjectMetadataList). */
  items: T[] | null;
}

/** Lists come in pages of this many (docs/design.md §6), each page one bounded request. */
const LIST_PAGE_SIZE = 500;

interface Namespace {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

export function createFollowApi(
  connection: ApiConnection,
  timeouts: ApiTimeouts = API_TIMEOUTS,
): FollowApi {
  return new ApiFollowApi(connection, timeouts);
}

const NAMESPACES = `/api/v1/namespaces?labelSelector=${FOLLOW_SELECTOR}`;

class ApiFollowApi implements FollowApi {
  constructor(
    private readonly connection: ApiConnection,
    private readonly timeouts: ApiTimeouts,
  ) {}

  /** One request, given up after ApiTimeouts.requestMs. */
  #request<T>(request: ApiRequest & { signal: AbortSignal }): Promise<T> {
    return withDeadline(request.signal, this.timeouts.requestMs, (signal) =>
      requestJson<T>(this.connection, { ...request, signal }),
    );
  }

  async listFollowNamespaces(signal: AbortSignal) {
    const list = await this.#request<ObjectList<Namespace>>({
      method: 'GET',
      path: NAMESPACES,
      signal,
    });
    return {
      namespaces: (list.items ?? []).map(toNamespaceInfo),
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

  listConfig(
    namespace: WatchNamespace,
    resource: ConfigResource,
    onPage: (objects: readonly ConfigObject[]) => void,
    signal: AbortSignal,
  ): Promise<string> {
    return this.#listPages<ConfigMetadata>(
      configPath(namespace, resource),
      METADATA_ONLY_LIST,
      (items) => onPage(items.flatMap(toConfigObject)),
      signal,
    );
  }

  watchConfig(
    namespace: WatchNamespace,
    resource: ConfigResource,
    resourceVersion: string,
    onEvent: (event: ConfigEvent) => void,
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
        for (const object of toConfigObject(event.object as ConfigMetadata)) {
          onEvent({ type: event.type, object });
        }
      },
    );
  }

  async listWorkloads(
    namespace: WatchNamespace,
    kind: WorkloadKind,
    onPage: (objects: readonly unknown[]) => void,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    try {
      return await this.#listPages(kindPath(namespace, kind), undefined, onPage, signal);
    } catch (error) {
      // A kind turned on whose CRD is not installed (yet): nothing of it to follow, now.
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  watchWorkloads(
    namespace: WatchNamespace,
    kind: WorkloadKind,
    resourceVersion: string,
    onEvent: (event: WorkloadWatchEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    const { connection, timeouts } = this;
    return watchFrom(
      connection,
      timeouts,
      kindPath(namespace, kind),
      resourceVersion,
      'application/json',
      signal,
      (event) => onEvent({ type: event.type, object: event.object }),
    );
  }

  /** Lists `path` page by page, handing each on before asking for the next; the list's resourceVersion. */
  async #listPages<T>(
    path: string,
    accept: string | undefined,
    onPage: (items: T[]) => void,
    signal: AbortSignal,
  ): Promise<string> {
    let next: string | undefined = '';
    let resourceVersion = '';
    while (next !== undefined) {
      const token: string = next ? `&continue=${encodeURIComponent(next)}` : '';
      const page: ObjectList<T> = await this.#request<ObjectList<T>>({
        method: 'GET',
        path: `${path}?limit=${LIST_PAGE_SIZE}${token}`,
        ...(accept === undefined ? {} : { accept }),
        signal,
      });
      onPage(page.items ?? []);
      resourceVersion = page.metadata.resourceVersion;
      next = page.metadata.continue || undefined;
    }
    return resourceVersion;
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

  async touch(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    signal: AbortSignal,
  ): Promise<TouchOutcome> {
    try {
      await this.#request({
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
      (request) => this.#request(request),
      { source, namespace, resourceVersion },
      { key: FANOUT_STATE, value },
      signal,
    );
  }

  async listPods(namespace: string, selector: string, signal: AbortSignal): Promise<unknown[]> {
    const query = `labelSelector=${encodeURIComponent(selector)}&limit=${LIST_PAGE_SIZE}`;
    const list = await this.#request<ObjectList<PodView>>({
      method: 'GET',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?${query}`,
      signal,
    });
    // Only what a canary's verdict reads: no spec, no environment, no volumes.
    return (list.items ?? []).map(({ metadata, status }) => ({
      metadata: { name: metadata?.name, creationTimestamp: metadata?.creationTimestamp },
      status: {
        containerStatuses: status?.containerStatuses,
        initContainerStatuses: status?.initContainerStatuses,
      },
    }));
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
