// SnapshotStore over the API server (docs/design.md §13): a GET, a create and an owner added by
// a JSON patch that first tests the resourceVersion, each on the review's signal. 404 is absent,
// 409 on a create is a name taken; anything else is a failure with a short reason for the warning.

import { contentOfConfigMap } from '../hash/index.js';
import type { FoundSnapshot, SnapshotStore, Written } from '../snapshot/ports.js';
import { isObject, type JsonObject } from '../workload/index.js';
import { type ApiAnswer, exchange, FIELD_MANAGER_QUERY, sourcePath } from './client.js';
import type { ApiConnection } from './connection.js';

export function createSnapshotStore(connection: ApiConnection): SnapshotStore {
  const send = async (
    request: Parameters<typeof exchange>[1],
  ): Promise<ApiAnswer | { readonly failed: string }> => {
    try {
      return await exchange(connection, request);
    } catch (error) {
      const cause = error as Error & { code?: string };
      return { failed: request.signal?.aborted ? 'timed out' : (cause.code ?? cause.message) };
    }
  };
  return {
    async read(namespace, name, signal) {
      const answer = await send({
        method: 'GET',
        path: sourcePath('ConfigMap', namespace, name),
        signal,
      });
      if ('failed' in answer) return { status: 'failed', detail: answer.failed };
      if (answer.status === 404) return { status: 'absent' };
      if (answer.status !== 200) return { status: 'failed', detail: statusDetail(answer) };
      return found(answer.body);
    },
    async create(body, signal) {
      const metadata = body.metadata as { namespace: string };
      const answer = await send({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(metadata.namespace)}/configmaps?${FIELD_MANAGER_QUERY}`,
        body,
        signal,
      });
      if ('failed' in answer) return { status: 'failed', detail: answer.failed };
      if (answer.status === 409) return { status: 'exists' };
      return written(answer);
    },
    async addOwner({ namespace, name }, read, owner, signal) {
      const add =
        read.owners.length === 0
          ? { op: 'add', path: '/metadata/ownerReferences', value: [owner] }
          : { op: 'add', path: '/metadata/ownerReferences/-', value: owner };
      const answer = await send({
        method: 'PATCH',
        path: `${sourcePath('ConfigMap', namespace, name)}?${FIELD_MANAGER_QUERY}`,
        contentType: 'application/json-patch+json',
        body: [{ op: 'test', path: '/metadata/resourceVersion', value: read.resourceVersion }, add],
        signal,
      });
      if ('failed' in answer) return { status: 'failed', detail: answer.failed };
      return written(answer);
    },
  };
}

function written(answer: ApiAnswer): Written {
  return answer.status >= 200 && answer.status < 300
    ? { status: 'done' }
    : { status: 'failed', detail: statusDetail(answer) };
}

/** `forbidden: …` or `HTTP 422: …`: the API's own reason, which names a quota or the fence. */
export function statusDetail({ status, body }: ApiAnswer): string {
  let message = '';
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { message?: unknown };
    if (typeof parsed.message === 'string') message = `: ${parsed.message}`;
  } catch {}
  return `${status === 403 ? 'forbidden' : `HTTP ${status}`}${message}`;
}

function found(body: Buffer): FoundSnapshot {
  let object: unknown;
  try {
    object = JSON.parse(body.toString('utf8'));
  } catch {
    return { status: 'failed', detail: 'response is not JSON' };
  }
  if (!isObject(object)) return { status: 'failed', detail: 'response is not an object' };
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const owners = Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : [];
  const { data, binaryData } = object as { data?: unknown; binaryData?: unknown };
  return {
    status: 'found',
    object: object as JsonObject,
    content: contentOfConfigMap({
      data: isObject(data) ? (data as Record<string, string>) : null,
      binaryData: isObject(binaryData) ? (binaryData as Record<string, string>) : null,
    }),
    resourceVersion: String(metadata.resourceVersion ?? ''),
    owners: owners.flatMap((owner) =>
      isObject(owner) && typeof owner.uid === 'string' ? [owner.uid] : [],
    ),
  };
}
