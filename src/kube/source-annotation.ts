// One annotation of a ConfigMap or Secret set by a conditional merge patch: follow mode's
// fan-out record, and the control `confighash halt`/`resume` write (docs/design.md §6). The
// resourceVersion in the patch makes it a write of the object as it was read: a source
// changed since is a 409, and whoever wrote decides again from what it is now.

import type { RecordWrite } from '../follow/ports.js';
import type { NamedSource } from '../sources/index.js';
import { FANOUT_CONTROL } from '../workload/index.js';
import {
  type ApiRequest,
  CONTROL_FIELD_MANAGER,
  FIELD_MANAGER,
  isStatus,
  METADATA_ONLY_OBJECT,
  requestJson,
  sourcePath,
} from './client.js';
import type { ApiConnection } from './connection.js';

export async function writeSourceAnnotation(
  send: <T>(request: ApiRequest & { signal: AbortSignal }) => Promise<T>,
  target: {
    readonly source: NamedSource;
    readonly namespace: string;
    readonly resourceVersion: string;
  },
  annotation: { readonly key: string; readonly value: string },
  signal: AbortSignal,
  fieldManager: string = FIELD_MANAGER,
): Promise<RecordWrite> {
  const { source, namespace, resourceVersion } = target;
  try {
    const written = await send<{ metadata?: { resourceVersion?: string } }>({
      method: 'PATCH',
      path: `${sourcePath(source.kind, namespace, source.name)}?fieldManager=${encodeURIComponent(fieldManager)}`,
      body: { metadata: { resourceVersion, annotations: { [annotation.key]: annotation.value } } },
      contentType: 'application/merge-patch+json',
      accept: METADATA_ONLY_OBJECT,
      signal,
    });
    return { status: 'written', resourceVersion: written.metadata?.resourceVersion ?? '' };
  } catch (error) {
    if (isStatus(error, 409, 404)) return { status: 'conflict' };
    if (isStatus(error, 403, 422)) return { status: 'denied', reason: error.message };
    throw error;
  }
}

/** `confighash halt`/`resume`: the control annotation, over the CLI's connection. */
export function writeFanoutControl(
  connection: ApiConnection,
  target: {
    readonly source: NamedSource;
    readonly namespace: string;
    readonly resourceVersion: string;
  },
  value: string,
  signal: AbortSignal,
): Promise<RecordWrite> {
  return writeSourceAnnotation(
    (request) => requestJson(connection, request),
    target,
    { key: FANOUT_CONTROL, value },
    signal,
    CONTROL_FIELD_MANAGER,
  );
}
