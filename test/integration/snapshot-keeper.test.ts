// The snapshot keeper over its API adapter (src/kube/snapshot-keeper-api.ts, docs/design.md §13
// "Ownership and collection"), against a real HTTP server that keeps ConfigMaps, revisions and
// workloads as the API does: resourceVersions bumped on every write, a JSON patch's `test`
// answered 422 when it fails, a delete's precondition 409. The fast suite starts no API
// server; these rows pin the requests the RBAC and the fence are written from. Last, serve
// --snapshots runs the keeper.

import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiConnection, connectToCluster, createKeeperApi } from '../../src/kube/index.js';
import {
  type KeeperActionName,
  type KeeperApi,
  resyncSnapshots,
} from '../../src/snapshot/index.js';
import { HANDLED_KINDS, KNOWN_KINDS } from '../../src/workload/index.js';
import { credentialsFromText } from '../support/credentials.js';
import { kubeconfigFor } from '../support/fake-api.js';
import { applyPatch, type Operation } from '../support/json-patch.js';
import { freePort, runConfighash } from '../support/process.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

interface Seen {
  method: string;
  url: string;
  accept: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

const NS = 'team';
const SNAP = 'app-snap-0123456789abcdef';
const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps`;
const LIST_SNAPSHOTS =
  '/api/v1/configmaps?labelSelector=confighash.dev%2Fsnapshot%3Dtrue&limit=500';
/** The answer of a JSON patch whose `test` failed, as the apiserver gives it. */
const PATCH_NOT_APPLIED = 'the server rejected our request due to an error in our request';

let server: http.Server;
let connection: ApiConnection;
let seen: Seen[];
/** `resource/namespace/name` → object. */
let objects: Map<string, Obj>;
/** `METHOD path` → an answer given instead (a 403, the fence's 422). */
let faults: Map<string, { status: number; body: unknown }>;
let version: number;

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    const body = text ? JSON.parse(text) : undefined;
    seen.push({
      method: request.method ?? '',
      url: request.url ?? '',
      accept: request.headers.accept,
      contentType: request.headers['content-type'],
      body,
    });
    const answer = faults.get(`${request.method} ${request.url}`) ?? answerOf(request, body);
    response.writeHead(answer.status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(answer.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  connection = connectToCluster(await credentialsFromText(kubeconfigFor(url)));
});
afterAll(() => {
  connection.close();
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  seen = [];
  objects = new Map();
  faults = new Map();
  version = 1;
});

function status(code: number, reason: string, message: string) {
  return {
    status: code,
    body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code },
  };
}

/** The few routes the keeper uses, answered as the apiserver does. */
function answerOf(request: http.IncomingMessage, body: unknown): { status: number; body: unknown } {
  const url = new URL(request.url ?? '', 'http://api');
  const parts = url.pathname.split('/').filter(Boolean);
  if (request.method === 'GET' && url.pathname === '/api/v1/configmaps') {
    const [key, value] = (url.searchParams.get('labelSelector') ?? '').split('=');
    const items = [...objects]
      .filter(([id, o]) => id.startsWith('configmaps/') && labels(o)[key!] === value)
      .map(([, o]) => ({
        apiVersion: 'meta.k8s.io/v1',
        kind: 'PartialObjectMetadata',
        metadata: o.metadata,
      }));
    return { status: 200, body: { metadata: { resourceVersion: String(version) }, items } };
  }
  // /api/v1/namespaces/NS/configmaps/NAME or /apis/GROUP/VERSION/namespaces/NS/RESOURCE
  const [namespace, resource, name] = parts[0] === 'api' ? parts.slice(3) : parts.slice(4);
  if (request.method === 'GET' && name === undefined) {
    if (
      !['replicasets', 'controllerrevisions', ...HANDLED_KINDS.map((k) => k.resource)].includes(
        resource!,
      )
    ) {
      return status(404, 'NotFound', 'the server could not find the requested resource');
    }
    const items = [...objects]
      .filter(([id]) => id.startsWith(`${resource}/${namespace}/`))
      .map(([, o]) => o);
    return { status: 200, body: { metadata: { resourceVersion: String(version) }, items } };
  }
  const id = `${resource}/${namespace}/${name}`;
  const stored = objects.get(id);
  if (!stored) return status(404, 'NotFound', `configmaps "${name}" not found`);
  if (request.method === 'PATCH') {
    if (request.headers['content-type'] !== 'application/json-patch+json') {
      return status(415, 'UnsupportedMediaType', 'not a JSON patch');
    }
    const operations = body as (Operation & { value?: unknown })[];
    for (const { op, path, value } of operations) {
      if (
        op === 'test' &&
        path === '/metadata/resourceVersion' &&
        stored.metadata.resourceVersion !== value
      ) {
        return status(422, 'Invalid', PATCH_NOT_APPLIED);
      }
    }
    let patched: Obj;
    try {
      patched = applyPatch(
        stored,
        operations.filter(({ op }) => op !== 'test'),
      );
    } catch {
      return status(422, 'Invalid', PATCH_NOT_APPLIED);
    }
    objects.set(id, store(patched));
    return { status: 200, body: objects.get(id) };
  }
  if (request.method === 'DELETE') {
    const wanted = (body as { preconditions?: { resourceVersion?: string } } | undefined)
      ?.preconditions?.resourceVersion;
    if (wanted !== undefined && wanted !== stored.metadata.resourceVersion) {
      return status(409, 'Conflict', 'Precondition failed: ResourceVersion in precondition');
    }
    objects.delete(id);
    return { status: 200, body: { kind: 'Status', status: 'Success' } };
  }
  return status(405, 'MethodNotAllowed', 'not here');
}

function labels(o: Obj): Record<string, string> {
  return (o.metadata.labels ?? {}) as Record<string, string>;
}

function store(o: Obj): Obj {
  return { ...o, metadata: { ...o.metadata, resourceVersion: String(++version) } };
}

function put(resource: string, o: Obj): Obj {
  const stored = store(o);
  objects.set(`${resource}/${o.metadata.namespace}/${o.metadata.name}`, stored);
  return stored;
}

function putSnapshot(name = SNAP, metadata: Record<string, unknown> = {}): Obj {
  return put('configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      creationTimestamp: '2026-12-10T11:00:00Z',
      labels: { 'confighash.dev/snapshot': 'true' },
      annotations: { 'confighash.dev/snapshot-of': 'configmap/app' },
      ...metadata,
    },
    immutable: true,
    data: { mode: 'blue' },
  });
}

/** A pod template whose one volume names `configMap`. */
function template(configMap: string) {
  return {
    metadata: { labels: { app: 'web' } },
    spec: {
      containers: [{ name: 'app', image: 'app' }],
      volumes: [{ name: 'config', configMap: { name: configMap } }],
    },
  };
}

function replicaSet(name: string, configMap: string): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: NS, uid: `uid-${name}` },
    spec: { template: template(configMap) },
  };
}

const owner = (kind: string, name: string) => ({
  apiVersion: 'apps/v1',
  kind,
  name,
  uid: `uid-${name}`,
});

function snapshotNow(name = SNAP): Obj | undefined {
  return objects.get(`configmaps/${NS}/${name}`);
}

/** One resync through the adapter, at 12:00 on the day the snapshots were made at 11:00. */
async function resync(api: KeeperApi, unnamedBefore: ReadonlySet<string>, graceMs = 0) {
  const actions: KeeperActionName[] = [];
  const resynced = await resyncSnapshots(
    {
      api,
      graceMs,
      clock: { now: () => Date.parse('2026-12-10T12:00:00Z'), setTimer: () => () => {} },
      metrics: { observeKeeperAction: (a) => actions.push(a), observeSnapshots: () => {} },
    },
    unnamedBefore,
    new AbortController().signal,
  );
  return { ...resynced, actions };
}

const keeperApi = () => createKeeperApi(connection, HANDLED_KINDS);

describe('the keeper over the API', () => {
  it('a ReplicaSet naming a snapshot becomes its owner; deleted, its owner is dropped, then the snapshot deleted at the second resync after', async () => {
    putSnapshot();
    put('replicasets', replicaSet('web-1', SNAP));
    const api = keeperApi();
    const first = await resync(api, new Set());
    expect(first.actions).toEqual(['set-owners']);
    expect(snapshotNow()?.metadata.ownerReferences).toEqual([owner('ReplicaSet', 'web-1')]);

    objects.delete(`replicasets/${NS}/web-1`);
    const second = await resync(api, first.unnamed);
    expect(second.actions).toEqual(['drop-owners']);
    expect(snapshotNow()?.metadata).not.toHaveProperty('ownerReferences');
    const third = await resync(api, second.unnamed);
    expect(third.actions).toEqual([]);
    expect(snapshotNow()).toBeDefined();
    const fourth = await resync(api, third.unnamed);
    expect(fourth.actions).toEqual(['delete']);
    expect(snapshotNow()).toBeUndefined();
    expect(fourth.report).toMatchObject({ failures: 0, conflicts: 0 });
  });

  it('sends exactly these requests: the lists, then a JSON patch that tests the resourceVersion, or a delete with a precondition', async () => {
    const listed = putSnapshot();
    put('replicasets', replicaSet('web-1', SNAP));
    const api = keeperApi();
    const { unnamed } = await resync(api, new Set());
    const rv = listed.metadata.resourceVersion;
    expect(
      seen.map(({ method, url, accept, contentType, body }) => ({
        method,
        url,
        accept,
        contentType,
        body,
      })),
    ).toEqual([
      {
        method: 'GET',
        url: LIST_SNAPSHOTS,
        accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
        contentType: undefined,
        body: undefined,
      },
      ...[
        '/apis/apps/v1/namespaces/team/replicasets',
        '/apis/apps/v1/namespaces/team/controllerrevisions',
        '/apis/apps/v1/namespaces/team/deployments',
        '/apis/apps/v1/namespaces/team/statefulsets',
        '/apis/apps/v1/namespaces/team/daemonsets',
      ].map((path) => ({
        method: 'GET',
        url: `${path}?limit=500`,
        accept: 'application/json',
        contentType: undefined,
        body: undefined,
      })),
      {
        method: 'PATCH',
        url: `${CONFIGMAPS}/${SNAP}?fieldManager=confighash`,
        accept: 'application/json',
        contentType: 'application/json-patch+json',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: rv },
          { op: 'add', path: '/metadata/ownerReferences', value: [owner('ReplicaSet', 'web-1')] },
        ],
      },
    ]);

    // Named by another revision now: replaced whole.
    put('replicasets', replicaSet('web-1', 'app-snap-ffffffffffffffff'));
    put('replicasets', replicaSet('web-2', SNAP));
    seen = [];
    const owned = snapshotNow()!.metadata.resourceVersion;
    await resync(api, unnamed);
    expect(seen.at(-1)?.body).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: owned },
      { op: 'replace', path: '/metadata/ownerReferences', value: [owner('ReplicaSet', 'web-2')] },
    ]);

    // Named by nothing: removed; then, ownerless at two resyncs, deleted on its resourceVersion.
    objects.clear();
    const dropped = putSnapshot(SNAP, { ownerReferences: [owner('ReplicaSet', 'web-2')] });
    seen = [];
    const drop = await resync(api, new Set());
    expect(seen.at(-1)?.body).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: dropped.metadata.resourceVersion },
      { op: 'remove', path: '/metadata/ownerReferences' },
    ]);
    const remembered = await resync(api, drop.unnamed);
    const ownerless = snapshotNow()!.metadata.resourceVersion;
    seen = [];
    await resync(api, remembered.unnamed);
    expect(snapshotNow()).toBeUndefined();
    expect(seen.at(-1)).toEqual({
      method: 'DELETE',
      url: `${CONFIGMAPS}/${SNAP}`,
      accept: 'application/json',
      contentType: 'application/json',
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { resourceVersion: ownerless },
      },
    });
  });

  it('a StatefulSet’s ControllerRevision (data.spec.template) and the workload whose current template names it are its owners', async () => {
    putSnapshot();
    put('controllerrevisions', {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'db-1', namespace: NS, uid: 'uid-db-1' },
      data: { spec: { template: { ...template(SNAP), $patch: 'replace' } } },
      revision: 1,
    });
    put('statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: NS, uid: 'uid-db' },
      spec: { template: template(SNAP) },
    });
    await resync(keeperApi(), new Set());
    expect(snapshotNow()?.metadata.ownerReferences).toEqual([
      owner('ControllerRevision', 'db-1'),
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'uid-db' },
    ]);
  });

  it('a --kind whose resource the cluster does not serve (404) has no workloads; it fails nothing', async () => {
    putSnapshot();
    put('deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS, uid: 'uid-web' },
      spec: { paused: true, template: template(SNAP) },
    });
    const rollouts = KNOWN_KINDS.filter(({ kind }) => kind === 'Rollout');
    const { report } = await resync(
      createKeeperApi(connection, [...HANDLED_KINDS, ...rollouts]),
      new Set(),
    );
    expect(report.failures).toBe(0);
    expect(seen.map(({ url }) => url)).toContain(
      '/apis/argoproj.io/v1alpha1/namespaces/team/rollouts?limit=500',
    );
    expect(snapshotNow()?.metadata.ownerReferences).toEqual([owner('Deployment', 'web')]);
  });

  it('a snapshot changed or gone since it was listed is a conflict, not a failure', async () => {
    const listed = putSnapshot();
    const api = keeperApi();
    const [snapshot] = await api.listSnapshots(new AbortController().signal);
    put('configmaps', {
      ...listed,
      metadata: { ...listed.metadata, ownerReferences: [owner('Deployment', 'web')] },
    });
    const signal = new AbortController().signal;
    expect(await api.setOwners(snapshot!, [owner('ReplicaSet', 'web-1')], signal)).toEqual({
      status: 'conflict',
    });
    expect(await api.delete(snapshot!, signal)).toEqual({ status: 'conflict' });
    objects.clear();
    expect(await api.delete(snapshot!, signal)).toEqual({ status: 'gone' });
  });

  it('the fence’s 422 and RBAC’s 403 are failures that name their reason; a namespace that cannot be listed is skipped', async () => {
    putSnapshot();
    put('replicasets', replicaSet('web-1', SNAP));
    const fence =
      "ValidatingAdmissionPolicy 'confighash-snapshot-fence' with binding 'confighash-snapshot-fence' denied request: only ownerReferences";
    faults.set(
      `PATCH ${CONFIGMAPS}/${SNAP}?fieldManager=confighash`,
      status(422, 'Invalid', fence),
    );
    const api = keeperApi();
    const denied = await resync(api, new Set());
    expect(denied.report).toMatchObject({
      failures: 1,
      conflicts: 0,
      firstError: `cannot set-owners ConfigMap team/${SNAP}: HTTP 422: ${fence}`,
    });
    faults.set(
      'GET /apis/apps/v1/namespaces/team/controllerrevisions?limit=500',
      status(403, 'Forbidden', 'controllerrevisions.apps is forbidden'),
    );
    const unread = await resync(api, new Set());
    expect(unread.report).toMatchObject({
      namespaces: 1,
      namespacesRead: 0,
      failures: 1,
      firstError:
        'cannot list controllerrevisions.apps in team: HTTP 403: controllerrevisions.apps is forbidden',
    });
    expect(unread.unnamed).toEqual(new Set());
  });

  it('a ConfigMap labelled a snapshot by hand, not named after its snapshot-of, is never written', async () => {
    putSnapshot('settings', { ownerReferences: [owner('ReplicaSet', 'gone')] });
    const first = await resync(keeperApi(), new Set(['uid-settings']));
    expect(first.actions).toEqual([]);
    expect(seen.filter(({ method }) => method !== 'GET')).toEqual([]);
  });
});

describe('serve --snapshots', () => {
  it('resyncs within --snapshot-resync of starting, a failure a warn line; SIGTERM still exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'confighash-keeper-'));
    expect(await runConfighash(['dev-certs', '--dir', dir]).exited).toBe(0);
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      kubeconfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
    // A serving account without the snapshots' RBAC: the warn line names it.
    faults.set(`GET ${LIST_SNAPSHOTS}`, status(403, 'Forbidden', 'configmaps is forbidden'));
    const served = runConfighash(
      [
        'serve',
        `--port=${await freePort()}`,
        '--host=127.0.0.1',
        `--tls-cert-file=${join(dir, 'tls.crt')}`,
        `--tls-key-file=${join(dir, 'tls.key')}`,
        `--hash-key-file=${join(dir, 'hash.key')}`,
        '--snapshots',
        '--snapshot-resync=1',
      ],
      { KUBECONFIG: kubeconfig },
    );
    await expect
      .poll(() => served.output.stdout.includes('snapshot resync incomplete'), { timeout: 15_000 })
      .toBe(true);
    const line = served.output.stdout.split('\n').find((l) => l.includes('snapshot resync'))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 'warn',
      failures: 1,
      firstError: 'cannot list snapshots: HTTP 403: configmaps is forbidden',
    });
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });
});
