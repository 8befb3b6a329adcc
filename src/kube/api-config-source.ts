// ConfigSource over the API server: a live GET per object, in parallel, over
// the connection's keep-alive agent. 404 means absent; anything else that is
// not a 200 is a failure with a short reason for the warning.

import type { ConfigSource, LookupFailure, LookupResult } from '../evaluate/ports.js';
import { contentOfConfigMap, contentOfSecret } from '../hash/index.js';
import type { SourceKind } from '../sources/index.js';
import { APPROVED_CHANGE, isObject } from '../workload/index.js';
import { exchange, sourcePath } from './client.js';
import type { ApiConnection } from './connection.js';

export function createApiConfigSource(connection: ApiConnection): ConfigSource {
  return {
    async get(kind, namespace, name, signal) {
      if (signal.aborted) return failed('timeout', 'deadline reached');
      const path = sourcePath(kind, namespace, name);
      try {
        const { status, body } = await exchange(connection, { method: 'GET', path, signal });
        return interpret(kind, status, body);
      } catch (error) {
        return fromError(error as Error & { code?: string }, signal);
      }
    },
  };
}

function interpret(kind: SourceKind, status: number, body: Buffer): LookupResult {
  if (status === 404) return { status: 'absent' };
  if (status === 403) return failed('forbidden', 'forbidden');
  if (status === 401) return failed('unauthorized', 'unauthorized');
  if (status !== 200) return failed('server-error', `HTTP ${status}`);
  let object: unknown;
  try {
    object = JSON.parse(body.toString('utf8'));
  } catch {
    return failed('bad-response', 'response is not JSON');
  }
  // An array or a scalar is not an object that happens to be empty: never hash it as one.
  if (!isObject(object)) return failed('bad-response', 'response is not an object');
  const { metadata, data, binaryData } = object as {
    metadata?: { uid?: unknown; resourceVersion?: unknown; annotations?: unknown };
    data?: unknown;
    binaryData?: unknown;
  };
  if (!isMapOrAbsent(data) || !isMapOrAbsent(binaryData)) {
    return failed('bad-response', 'response data is not an object');
  }
  const approvedChange = approvedChangeOf(metadata?.annotations);
  return {
    status: 'found',
    uid: String(metadata?.uid ?? ''),
    resourceVersion: String(metadata?.resourceVersion ?? ''),
    content:
      kind === 'ConfigMap' ? contentOfConfigMap({ data, binaryData }) : contentOfSecret({ data }),
    ...(approvedChange === undefined ? {} : { approvedChange }),
  };
}

/**
 * The one annotation a lookup keeps: the others may hold anything, a client-side apply's
 * record of a Secret's values among them.
 */
function approvedChangeOf(annotations: unknown): string | undefined {
  const value = isObject(annotations) ? annotations[APPROVED_CHANGE] : undefined;
  return typeof value === 'string' ? value : undefined;
}

function isMapOrAbsent(value: unknown): value is Record<string, string> | undefined | null {
  return value === undefined || value === null || isObject(value);
}

function fromError(error: Error & { code?: string }, signal: AbortSignal): LookupResult {
  if (signal.aborted || error.name === 'AbortError') return failed('timeout', 'timed out');
  return failed('network', error.code ?? error.message);
}

function failed(failure: LookupFailure, detail: string): LookupResult {
  return { status: 'failed', failure, detail };
}
