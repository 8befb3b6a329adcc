// KeeperApi over the API server (docs/design.md §13, "Ownership and collection"): the snapshots
// listed cluster-wide by their label, metadata only; a namespace's ReplicaSets,
// ControllerRevisions and workloads of the handled kinds, each reduced as its page arrives to its
// owner reference and the ConfigMaps its pod template names; owners written by a JSON patch that
// first tests the resourceVersion, and deletes with a resourceVersion precondition. A write that
// finds the snapshot changed (409, a failed test: 422) or gone (404) is an outcome, not a failure.

import type {
  KeeperApi,
  KeeperWrite,
  KeptSnapshot,
  Namer,
  OwnerReference,
} from '../snapshot/ports.js';
import {
  findReferences,
  isObject,
  type JsonObject,
  objectAt,
  SNAPSHOT,
  SNAPSHOT_OF,
  type WorkloadKind,
} from '../workload/index.js';
import {
  type ApiAnswer,
  type ApiRequest,
  describeFailure,
  FIELD_MANAGER_QUERY,
  isStatus,
  METADATA_ONLY_LIST,
  sourcePath,
  workloadPath,
} from './client.js';
import type { ApiConnection } from './connection.js';
import { type ApiRequests, boundedRequests, type RequestOptions } from './requests.js';
import { statusDetail } from './snapshot-store.js';

const SNAPSHOTS_PATH = `/api/v1/configmaps?labelSelector=${encodeURIComponent(`${SNAPSHOT}=true`)}`;

/** The revisions that keep a pod template, and where in them it is. */
const REVISIONS = [
  { kind: 'ReplicaSet', resource: 'replicasets', templatePath: ['spec', 'template'] },
  // A StatefulSet's or DaemonSet's revision holds its template patch: `data.spec.template`.
  {
    kind: 'ControllerRevision',
    resource: 'controllerrevisions',
    templatePath: ['data', 'spec', 'template'],
  },
] as const;

/**
 * What a JSON patch whose `test` failed is answered with: a 422 with this message and nothing
 * else (apiserver's jsonPatcher). Any other 422 — the fence's denial among them — is a failure.
 */
const PATCH_NOT_APPLIED = 'the server rejected our request due to an error in our request';

export function createKeeperApi(
  connection: ApiConnection,
  kinds: readonly WorkloadKind[],
  options: RequestOptions = {},
): KeeperApi {
  const requests = boundedRequests(connection, options);
  const write = (request: ApiRequest & { readonly signal: AbortSignal }) =>
    requests.exchange(request).then(keeperWrite, (error: Error & { code?: string }) => ({
      status: 'failed' as const,
      detail: request.signal.aborted ? 'aborted' : (error.code ?? error.message),
    }));
  return {
    async listSnapshots(signal) {
      const snapshots: KeptSnapshot[] = [];
      await requests
        .list<unknown>(
          SNAPSHOTS_PATH,
          METADATA_ONLY_LIST,
          (items) => snapshots.push(...items.flatMap(keptSnapshot)),
          signal,
        )
        .catch((error: unknown) => {
          throw describeFailure(error, 'list snapshots');
        });
      return snapshots;
    },
    async listNamers(namespace, signal) {
      const revisions: Namer[] = [];
      for (const { kind, resource, templatePath } of REVISIONS) {
        const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/${resource}`;
        await listNamersAt(requests, path, signal, (item) =>
          namerOf(item, 'apps/v1', kind, templatePath),
        ).then(
          (found) => revisions.push(...found),
          (error: unknown) => {
            throw describeFailure(error, `list ${resource}.apps in ${namespace}`);
          },
        );
      }
      const workloads: Namer[] = [];
      for (const kind of kinds) {
        const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
        await listNamersAt(requests, workloadPath(namespace, kind), signal, (item) =>
          namerOf(item, apiVersion, kind.kind, kind.templatePath),
        ).then(
          (found) => workloads.push(...found),
          (error: unknown) => {
            // A kind of --kind whose resource the cluster does not serve has no workloads.
            if (isStatus(error, 404)) return;
            throw describeFailure(error, `list ${kind.resource}.${kind.group} in ${namespace}`);
          },
        );
      }
      return { revisions, workloads };
    },
    setOwners(snapshot, owners, signal) {
      const op = owners.length === 0 ? 'remove' : snapshot.owners.length === 0 ? 'add' : 'replace';
      if (op === 'remove' && snapshot.owners.length === 0)
        return Promise.resolve({ status: 'done' });
      return write({
        method: 'PATCH',
        path: `${sourcePath('ConfigMap', snapshot.namespace, snapshot.name)}?${FIELD_MANAGER_QUERY}`,
        contentType: 'application/json-patch+json',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: snapshot.resourceVersion },
          op === 'remove'
            ? { op, path: '/metadata/ownerReferences' }
            : { op, path: '/metadata/ownerReferences', value: owners.map(ownerReference) },
        ],
        signal,
      });
    },
    delete(snapshot, signal) {
      return write({
        method: 'DELETE',
        path: sourcePath('ConfigMap', snapshot.namespace, snapshot.name),
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions: { resourceVersion: snapshot.resourceVersion },
        },
        signal,
      });
    },
  };
}

/** Lists `path` page by page, keeping of each item only its Namer. */
async function listNamersAt(
  requests: ApiRequests,
  path: string,
  signal: AbortSignal,
  reduce: (item: unknown) => Namer | undefined,
): Promise<Namer[]> {
  const namers: Namer[] = [];
  await requests.list<unknown>(
    path,
    undefined,
    (items) => {
      for (const item of items) {
        const namer = reduce(item);
        if (namer) namers.push(namer);
      }
    },
    signal,
  );
  return namers;
}

/**
 * An object as the owner of what its template names: every ConfigMap any of its references
 * names (none counted out: more owners only keep a snapshot longer). Undefined without a uid.
 */
function namerOf(
  item: unknown,
  apiVersion: string,
  kind: string,
  templatePath: readonly string[],
): Namer | undefined {
  const metadata = objectAt(item, ['metadata']);
  const { name, uid } = metadata ?? {};
  if (typeof name !== 'string' || typeof uid !== 'string' || uid === '') return undefined;
  const spec = objectAt(item, [...templatePath, 'spec']);
  const names = findReferences(spec, {})
    .filter((reference) => reference.kind === 'ConfigMap')
    .map((reference) => reference.name);
  return { owner: { apiVersion, kind, name, uid }, names };
}

function keptSnapshot(item: unknown): KeptSnapshot[] {
  const metadata = objectAt(item, ['metadata']);
  if (!metadata) return [];
  const { name, namespace, uid, resourceVersion, creationTimestamp } = metadata;
  if (
    typeof name !== 'string' ||
    typeof namespace !== 'string' ||
    typeof uid !== 'string' ||
    typeof resourceVersion !== 'string'
  ) {
    return [];
  }
  const owners = Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : [];
  const snapshotOf = objectAt(metadata, ['annotations'])?.[SNAPSHOT_OF];
  return [
    {
      namespace,
      name,
      uid,
      resourceVersion,
      createdMs: typeof creationTimestamp === 'string' ? Date.parse(creationTimestamp) : Number.NaN,
      owners: owners.flatMap(readOwner),
      snapshotOf: typeof snapshotOf === 'string' ? snapshotOf : undefined,
      deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
    },
  ];
}

function readOwner(value: unknown): OwnerReference[] {
  if (!isObject(value)) return [];
  const { apiVersion, kind, name, uid } = value;
  return typeof apiVersion === 'string' &&
    typeof kind === 'string' &&
    typeof name === 'string' &&
    typeof uid === 'string'
    ? [{ apiVersion, kind, name, uid }]
    : [];
}

/** Only the four fields: no controller, no blockOwnerDeletion (a revision is never held back by its config). */
function ownerReference({ apiVersion, kind, name, uid }: OwnerReference): JsonObject {
  return { apiVersion, kind, name, uid };
}

function keeperWrite(answer: ApiAnswer): KeeperWrite {
  if (answer.status >= 200 && answer.status < 300) return { status: 'done' };
  if (answer.status === 404) return { status: 'gone' };
  if (answer.status === 409 || (answer.status === 422 && messageOf(answer) === PATCH_NOT_APPLIED)) {
    return { status: 'conflict' };
  }
  return { status: 'failed', detail: statusDetail(answer) };
}

function messageOf({ body }: ApiAnswer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : undefined;
  } catch {
    return undefined;
  }
}
