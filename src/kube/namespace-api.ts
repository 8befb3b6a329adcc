// NamespaceApi over the API server (src/admission/namespace-check.ts): metadata-only
// (PartialObjectMetadata) list and watch of the opted-in namespaces, as a ListerWatcher
// bounded as follow mode's are (docs/design.md §4, §6: lists in pages, each page and each
// GET given up after ApiTimeouts.requestMs, a silent watch restarted), and one live GET of
// a namespace. The list and watch take a connection of their own (a long-lived stream
// must not hold a socket lookups need); the GETs go through the lookups' keep-alive
// connection.

import type { NamespaceApi, NamespaceLabels, NamespaceRead } from '../admission/ports.js';
import { OPTED_IN_NAMESPACE_SELECTOR } from '../workload/index.js';
import { METADATA_ONLY_OBJECT, type WatchEvent } from './client.js';
import type { ApiConnection } from './connection.js';
import { listerWatcher } from './lister-watcher.js';
import { boundedRequests, type RequestOptions } from './requests.js';

const OPTED_IN = `/api/v1/namespaces?labelSelector=${encodeURIComponent(OPTED_IN_NAMESPACE_SELECTOR)}`;

interface NamespaceMetadata {
  metadata?: { name?: string; labels?: Record<string, string> };
}

export function createNamespaceApi(
  watchConnection: ApiConnection,
  getConnection: ApiConnection,
  options: RequestOptions = {},
): NamespaceApi {
  const gets = boundedRequests(getConnection, options);
  return {
    optedIn: listerWatcher(boundedRequests(watchConnection, options), {
      path: OPTED_IN,
      metadataOnly: true,
      decode: (object) => labelsOf(object as NamespaceMetadata),
    }),

    async get(name, signal) {
      const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
      try {
        const { status, body } = await gets.exchange({
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
