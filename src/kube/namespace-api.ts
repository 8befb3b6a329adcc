// NamespaceApi over the API server (src/admission/namespace-check.ts): metadata-only
// (PartialObjectMetadata) list and watch of the opted-in namespaces, and one
// live GET of a namespace. The watch takes a connection of its own (a
// long-lived stream must not hold a socket lookups need); the GETs go through
// the lookups' keep-alive connection.

import type { NamespaceApi, NamespaceLabels, NamespaceRead } from '../admission/ports.js';
import { API_TIMEOUTS, type ApiTimeouts } from '../runtime/index.js';
import { OPTED_IN_NAMESPACE_SELECTOR } from '../workload/index.js';
import {
  exchange,
  METADATA_ONLY_LIST,
  METADATA_ONLY_OBJECT,
  requestJson,
  type WatchEvent,
} from './client.js';
import type { ApiConnection } from './connection.js';
import { watchFrom } from './watch.js';

const OPTED_IN = `/api/v1/namespaces?labelSelector=${encodeURIComponent(OPTED_IN_NAMESPACE_SELECTOR)}`;

interface NamespaceMetadata {
  metadata?: { name?: string; labels?: Record<string, string> };
}

/** The watch is bounded as follow mode's are (docs/design.md §6): a silent stream is restarted. */
export function createNamespaceApi(
  watchConnection: ApiConnection,
  getConnection: ApiConnection,
  timeouts: ApiTimeouts = API_TIMEOUTS,
): NamespaceApi {
  return {
    async listOptedIn(signal) {
      const list = await requestJson<{
        metadata: { resourceVersion: string };
        /** null when empty (a metadata-only list). */
        items: NamespaceMetadata[] | null;
      }>(watchConnection, { method: 'GET', path: OPTED_IN, accept: METADATA_ONLY_LIST, signal });
      return {
        namespaces: (list.items ?? []).flatMap(labelsOf),
        resourceVersion: list.metadata.resourceVersion,
      };
    },

    watchOptedIn(resourceVersion, onEvent, signal) {
      return watchFrom(
        watchConnection,
        timeouts,
        OPTED_IN,
        resourceVersion,
        METADATA_ONLY_OBJECT,
        signal,
        (event) => {
          for (const namespace of labelsOf(event.object)) onEvent({ type: event.type, namespace });
        },
      );
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
