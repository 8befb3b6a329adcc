// NamespaceApi over the API server (src/namespaces.ts): metadata-only
// (PartialObjectMetadata) list and watch of the opted-in namespaces, and one
// live GET of a namespace. The watch takes a connection of its own (a
// long-lived stream must not hold a socket lookups need); the GETs go through
// the lookups' keep-alive connection.

import type { NamespaceApi, NamespaceLabels, NamespaceRead } from '../namespaces.js';
import { OPTED_IN_NAMESPACE_SELECTOR } from '../workload/index.js';
import {
  ApiError,
  exchange,
  isStatus,
  METADATA_ONLY_LIST,
  METADATA_ONLY_OBJECT,
  requestJson,
  streamWatch,
  type WatchEvent,
} from './client.js';
import type { ApiConnection } from './connection.js';

const OPTED_IN = `/api/v1/namespaces?labelSelector=${encodeURIComponent(OPTED_IN_NAMESPACE_SELECTOR)}`;
/** The server closes a watch after this; it is then resumed from the last resourceVersion. */
const WATCH_TIMEOUT_SECONDS = 300;

interface NamespaceMetadata {
  metadata?: { name?: string; labels?: Record<string, string> };
}

export function createNamespaceApi(
  watchConnection: ApiConnection,
  getConnection: ApiConnection,
): NamespaceApi {
  return {
    async listOptedIn(signal) {
      const list = await requestJson<{
        metadata: { resourceVersion: string };
        items: NamespaceMetadata[];
      }>(watchConnection, { method: 'GET', path: OPTED_IN, accept: METADATA_ONLY_LIST, signal });
      return {
        namespaces: list.items.flatMap(labelsOf),
        resourceVersion: list.metadata.resourceVersion,
      };
    },

    async watchOptedIn(resourceVersion, onEvent, signal) {
      let latest = resourceVersion;
      let expired = false;
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
        if (event.type === 'BOOKMARK') return;
        for (const namespace of labelsOf(event.object)) onEvent({ type: event.type, namespace });
      };
      const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=${WATCH_TIMEOUT_SECONDS}&resourceVersion=${encodeURIComponent(resourceVersion)}`;
      try {
        await streamWatch(
          watchConnection,
          `${OPTED_IN}&${query}`,
          METADATA_ONLY_OBJECT,
          handle,
          signal,
        );
      } catch (error) {
        if (isStatus(error, 410)) return { resourceVersion: latest, expired: true };
        if (signal.aborted) return { resourceVersion: latest, expired: false };
        throw error;
      }
      return { resourceVersion: latest, expired };
    },

    async get(name, signal) {
      const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
      try {
        const { status, body } = await exchange(getConnection, {
          method: 'GET',
          path,
          accept: METADATA_ONLY_OBJECT,
          signal,
        });
        return interpret(status, body);
      } catch (error) {
        const cause = error as Error & { code?: string };
        if (signal.aborted || cause.name === 'AbortError') return failed('timed out');
        return failed(cause.code ?? cause.message);
      }
    },
  };
}

function interpret(status: number, body: Buffer): NamespaceRead {
  if (status === 404) return { status: 'absent' };
  if (status === 403) return failed('forbidden');
  if (status !== 200) return failed(`HTTP ${status}`);
  try {
    const [namespace] = labelsOf(JSON.parse(body.toString('utf8')) as NamespaceMetadata);
    return namespace ? { status: 'found', namespace } : failed('response has no name');
  } catch {
    return failed('response is not JSON');
  }
}

function labelsOf(object: NamespaceMetadata | WatchEvent['object']): NamespaceLabels[] {
  const name = object?.metadata?.name;
  return typeof name === 'string' ? [{ name, labels: object.metadata?.labels ?? {} }] : [];
}

function failed(detail: string): NamespaceRead {
  return { status: 'failed', detail };
}
