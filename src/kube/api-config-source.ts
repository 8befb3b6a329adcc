// ConfigSource over the API server: a live GET per object, in parallel, over
// the connection's keep-alive agent. 404 means absent; anything else that is
// not a 200 is a failure with a short reason for the warning. An answer's bytes
// are counted as they arrive, for the evaluator's byte budget.

import type { ConfigSource, LookupFailure, LookupResult } from '../evaluate/ports.js';
import { contentOfConfigMap, contentOfSecret } from '../hash/index.js';
import type { SourceKind } from '../sources/index.js';
import { APPROVED_CHANGE, FANOUT_CONTROL, FANOUT_STATE, isObject } from '../workload/index.js';
import { AnswerOverBudget, exchange, sourcePath } from './client.js';
import type { ApiConnection } from './connection.js';

export function createApiConfigSource(connection: ApiConnection): ConfigSource {
  return {
    async get(kind, namespace, name, signal, countBytes) {
      if (signal.aborted) return failed('timeout', 'deadline reached');
      const path = sourcePath(kind, namespace, name);
      try {
        const { status, body } = await exchange(connection, {
          method: 'GET',
          path,
          signal,
          ...(countBytes ? { countBytes } : {}),
        });
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
  const annotations = ownAnnotations(metadata?.annotations);
  return {
    status: 'found',
    uid: String(metadata?.uid ?? ''),
    resourceVersion: String(metadata?.resourceVersion ?? ''),
    content:
      kind === 'ConfigMap' ? contentOfConfigMap({ data, binaryData }) : contentOfSecret({ data }),
    ...annotations,
  };
}

const KEPT = {
  approvedChange: APPROVED_CHANGE,
  fanout: FANOUT_STATE,
  fanoutControl: FANOUT_CONTROL,
};

/**
 * The annotations a lookup keeps, follow mode's own: the others may hold anything, a
 * client-side apply's record of a Secret's values among them.
 */
function ownAnnotations(annotations: unknown): Partial<Record<keyof typeof KEPT, string>> {
  const kept: Partial<Record<keyof typeof KEPT, string>> = {};
  if (!isObject(annotations)) return kept;
  for (const [field, key] of Object.entries(KEPT) as [keyof typeof KEPT, string][]) {
    const value = annotations[key];
    if (typeof value === 'string') kept[field] = value;
  }
  return kept;
}

function isMapOrAbsent(value: unknown): value is Record<string, string> | undefined | null {
  return value === undefined || value === null || isObject(value);
}

function fromError(error: Error & { code?: string }, signal: AbortSignal): LookupResult {
  if (error instanceof AnswerOverBudget) return failed('over-budget', 'lookup byte budget full');
  if (signal.aborted || error.name === 'AbortError') return failed('timeout', 'timed out');
  return failed('network', error.code ?? error.message);
}

function failed(failure: LookupFailure, detail: string): LookupResult {
  return { status: 'failed', failure, detail };
}
