// Follow mode's requests against an apiserver that stops answering (docs/design.md §6:
// lists are paginated, every follower request has a timeout, a watch silent for
// 5 min is restarted, a 410 relists). A real apiserver cannot be made to accept a request and never
// answer it, so a real HTTP server on loopback plays that part, through the real
// adapters (src/kube/follow-api.ts, lease-store.ts, namespace-api.ts, secrets.ts). The timeouts are injected
// (hundreds of milliseconds instead of 10 s and 5 min); the defaults are checked
// to be DESIGN's.

import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import { createEvaluator, createSourceDigester } from '../../src/evaluate/index.js';
import {
  DEFAULT_FOLLOW_OPTIONS,
  DEFAULT_TIMING,
  type FollowApi,
  type LeaseStore,
  startFollowMode,
} from '../../src/follow/index.js';
import type { StoredLease, WorkloadEvent } from '../../src/follow/ports.js';
import { hashKeyId } from '../../src/hash/index.js';
import {
  type ApiConnection,
  connectToCluster,
  createFollowApi,
  createLeaseStore,
  createNamespaceApi,
  createSecretStore,
} from '../../src/kube/index.js';
import {
  API_TIMEOUTS,
  type ApiTimeouts,
  type ListWatchHandler,
  type ObjectEventType,
} from '../../src/runtime/index.js';
import { HANDLED_KINDS, type WorkloadKind } from '../../src/workload/index.js';
import { credentialsFromText } from '../support/credentials.js';
import { kubeconfigFor } from '../support/fake-api.js';
import { silentFollowMetrics } from '../support/follow-metrics.js';
import { MemoryFollowApi, withClusterVersions } from '../support/memory-follow-api.js';
import { MemorySource } from '../support/memory-source.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import { NAMESPACE, workload } from '../support/workloads.js';

const TIMEOUTS: ApiTimeouts = { requestMs: 300, watchSilenceMs: 400 };
const DEPLOYMENT = HANDLED_KINDS.find((kind) => kind.kind === 'Deployment')!;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/** Answers each request with `route`; the default never answers at all. */
let route: Route;
const NEVER_ANSWER: Route = () => {};
let server: http.Server;
let connection: ApiConnection;
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
    route(request, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  connection = connectToCluster(await credentialsFromText(kubeconfigFor(url)), {
    maxSockets: Number.POSITIVE_INFINITY,
  });
});
afterEach(() => {
  route = NEVER_ANSWER;
  seen.length = 0;
});
afterAll(async () => {
  connection.close();
  server.closeAllConnections();
  server.close();
});

const signal = () => new AbortController().signal;
const BOUNDS = { timeouts: TIMEOUTS };

/** A handler that keeps each list's pages and each event, as `describe` words them. */
function collect<T>(describe: (type: ObjectEventType, object: T) => string = (type) => type) {
  const pages: (readonly T[])[] = [];
  const events: string[] = [];
  const handler: ListWatchHandler<T> = {
    list: () => ({ page: (objects) => pages.push(objects), end: () => {} }),
    event: (type, object) => events.push(describe(type, object)),
  };
  return { pages, events, handler };
}
const ignore = collect<unknown>().handler;

it('the defaults are docs/design.md §6’s: 10 s per request, 5 min of watch silence', () => {
  expect(API_TIMEOUTS).toEqual({ requestMs: 10_000, watchSilenceMs: 300_000 });
  expect(DEFAULT_TIMING).toEqual({
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
});

describe('a request that is never answered fails at the request timeout', () => {
  const api = () => createFollowApi(connection, BOUNDS);
  const lease = () =>
    createLeaseStore(connection, 'confighash-system', 'confighash-follow', BOUNDS);
  const namespaces = () => createNamespaceApi(connection, connection, BOUNDS);
  const secrets = () => createSecretStore(connection, 'confighash-system', BOUNDS);
  const record = { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 };
  const event: WorkloadEvent = {
    kind: DEPLOYMENT,
    namespace: NAMESPACE,
    name: 'web',
    uid: 'u',
    type: 'Normal',
    reason: 'ConfigChanged',
    action: 'Touch',
    note: 'n',
  };
  it.each<[string, () => Promise<unknown>]>([
    ['GET of a workload', () => api().getWorkload(NAMESPACE, DEPLOYMENT, 'web', signal())],
    [
      'LIST of workloads',
      () => api().workloadObjects(NAMESPACE, DEPLOYMENT)(ignore).list(signal()),
    ],
    [
      'watch of workloads',
      () => api().workloadObjects(undefined, DEPLOYMENT)(ignore).watch('1', signal()),
    ],
    ['PATCH (the touch)', () => api().touch(NAMESPACE, DEPLOYMENT, 'web', signal())],
    ['Event POST', () => api().recordEvent(event, signal())],
    ['LIST of config', () => api().configObjects(undefined, 'configmaps')(ignore).list(signal())],
    ['LIST of namespaces', () => api().followNamespaces(ignore).list(signal())],
    [
      'LIST of opted-in namespaces (the webhook)',
      () => namespaces().optedIn(ignore).list(signal()),
    ],
    ['Secret GET (self-managed certificates)', () => secrets().read('certs')],
    ['Secret create', () => secrets().create('certs', 'Opaque', {})],
    ['Secret replace', () => secrets().replace('certs', 'Opaque', {}, '1')],
    ['Lease GET', () => lease().get(signal())],
    ['Lease create', () => lease().create(record, signal())],
    ['Lease update', () => lease().update(record, '1', signal())],
    [
      'watch whose stream never starts',
      () => api().configObjects(undefined, 'secrets')(ignore).watch('1', signal()),
    ],
  ])('%s', async (_name, request) => {
    const started = Date.now();
    await expect(request()).rejects.toThrow(/abort|timeout|no answer/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUTS.requestMs - 20);
    expect(seen).toHaveLength(1);
  });
});

it('lists in pages of 500, following the continue token, each page handed on as it comes', async () => {
  route = (request, response) => {
    const second = request.url?.includes('continue=page%202');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        metadata: { resourceVersion: '9', ...(second ? {} : { continue: 'page 2' }) },
        items: [{ metadata: { name: second ? 'b' : 'a', namespace: NAMESPACE } }],
      }),
    );
  };
  const { pages, handler } = collect<unknown>();
  const version = await createFollowApi(connection, BOUNDS)
    .workloadObjects(
      NAMESPACE,
      DEPLOYMENT,
    )(handler)
    .list(signal());
  expect(version).toBe('9');
  expect(pages).toEqual([
    [{ metadata: { name: 'a', namespace: NAMESPACE } }],
    [{ metadata: { name: 'b', namespace: NAMESPACE } }],
  ]);
  expect(seen).toEqual([
    `GET /apis/apps/v1/namespaces/${NAMESPACE}/deployments?limit=500`,
    `GET /apis/apps/v1/namespaces/${NAMESPACE}/deployments?limit=500&continue=page%202`,
  ]);
});

it('cluster-wide lists and watches use the paths of all namespaces; a 404 list is a kind not served', async () => {
  route = (request, response) => {
    if (request.url?.startsWith('/apis/argoproj.io')) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ kind: 'Status', code: 404, message: 'not found' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        metadata: { resourceVersion: '7' },
        items: [{ metadata: { name: 'app', namespace: NAMESPACE, resourceVersion: '5' } }],
      }),
    );
  };
  const api = createFollowApi(connection, BOUNDS);
  const { pages, handler } = collect<unknown>();
  expect(await api.configObjects(undefined, 'secrets')(handler).list(signal())).toBe('7');
  expect(pages.flat()).toEqual([{ namespace: NAMESPACE, name: 'app', resourceVersion: '5' }]);
  const rollout = {
    ...DEPLOYMENT,
    group: 'argoproj.io',
    version: 'v1alpha1',
    kind: 'Rollout',
    resource: 'rollouts',
  };
  expect(await api.workloadObjects(undefined, rollout)(ignore).list(signal())).toBeUndefined();
  expect(seen).toEqual([
    'GET /api/v1/secrets?limit=500',
    'GET /apis/argoproj.io/v1alpha1/rollouts?limit=500',
  ]);
});

describe('watches', () => {
  /** Starts a watch stream: status 200, then `events` as the apiserver writes them. */
  const stream = (response: http.ServerResponse, ...events: object[]) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    for (const event of events) response.write(`${JSON.stringify(event)}\n`);
  };
  const added = (resourceVersion: string) => ({
    type: 'ADDED',
    object: { metadata: { name: 'app', namespace: NAMESPACE, resourceVersion } },
  });
  const bookmark = (resourceVersion: string) => ({
    type: 'BOOKMARK',
    object: { metadata: { resourceVersion } },
  });

  it('ask for bookmarks, and one silent for watchSilenceMs ends as silent at its last resourceVersion', async () => {
    route = (_request, response) => stream(response, added('5'));
    const { events: changes, handler } = collect<{ name: string }>(
      (type, object) => `${type} ${object.name}`,
    );
    const end = await createFollowApi(connection, BOUNDS)
      .configObjects(
        NAMESPACE,
        'configmaps',
      )(handler)
      .watch('1', signal());
    expect(end).toEqual({ resourceVersion: '5', expired: false, silent: true });
    expect(changes).toEqual(['ADDED app']);
    expect(seen[0]).toMatch(/[?&]watch=1&allowWatchBookmarks=true&/);
    // The server ends it after 300 to 600 s, jittered (src/kube/watch.ts).
    const timeoutSeconds = Number(/[?&]timeoutSeconds=(\d+)/.exec(seen[0] ?? '')?.[1]);
    expect(timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(timeoutSeconds).toBeLessThan(600);
  });

  it('bookmarks keep a quiet watch open past watchSilenceMs', async () => {
    let version = 10;
    route = (_request, response) => {
      stream(response);
      const timer = setInterval(() => {
        response.write(`${JSON.stringify(bookmark(String(++version)))}\n`);
        if (version === 17) {
          clearInterval(timer);
          response.end(); // The server's own end, as at timeoutSeconds.
        }
      }, 100);
    };
    const started = Date.now();
    const end = await createFollowApi(connection, BOUNDS)
      .configObjects(
        NAMESPACE,
        'configmaps',
      )(ignore)
      .watch('10', signal());
    expect(Date.now() - started).toBeGreaterThan(TIMEOUTS.watchSilenceMs);
    expect(end).toEqual({ resourceVersion: '17', expired: false });
  });

  it('a 410 ends the watch as expired, for a relist', async () => {
    route = (_request, response) => {
      response.writeHead(410, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ kind: 'Status', code: 410, message: 'too old' }));
    };
    const end = await createFollowApi(connection, BOUNDS)
      .configObjects(
        NAMESPACE,
        'configmaps',
      )(ignore)
      .watch('1', signal());
    expect(end).toEqual({ resourceVersion: '1', expired: true });
  });
});

/** A Lease in memory with the API's optimistic concurrency. */
function memoryLease(): LeaseStore & { readonly current: () => StoredLease | undefined } {
  let lease: StoredLease | undefined;
  let version = 0;
  const write = (record: StoredLease['record']) => {
    lease = { record, resourceVersion: String(++version) };
    return true;
  };
  return {
    current: () => lease,
    get: async () => lease,
    create: async (record) => (lease ? false : write(record)),
    update: async (record, resourceVersion) =>
      lease?.resourceVersion === resourceVersion ? write(record) : false,
  };
}

/** The in-memory cluster, but the GET of workload `stuck` goes to the server that never answers. */
class OneHungGet extends MemoryFollowApi {
  readonly #real: FollowApi = createFollowApi(connection, BOUNDS);

  override async getWorkload(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    abort = new AbortController().signal,
  ): Promise<Record<string, unknown> | undefined> {
    if (name !== 'stuck') return super.getWorkload(namespace, kind, name);
    this.requests.push(`GET ${kind.kind} ${namespace}/${name}`);
    return (await this.#real.getWorkload(namespace, kind, name, abort)) as Record<string, unknown>;
  }
}

describe('the touch queue', () => {
  it('a GET that never answers fails at the request timeout and is retried, while other touches proceed and the leader keeps its Lease', async () => {
    const source = new MemorySource().configMap('app', { v: '1' });
    // The webhook and the follower read the versions the watches report, as on one apiserver.
    const config = new Map<string, string>();
    const configSource = withClusterVersions(source, config);
    const mutator = createMutator({
      configSource,
      hashKey: Buffer.alloc(32, 7),
      namespaces: everyNamespaceOptedIn,
    });
    const api = new OneHungGet(mutator, config).followNamespace(NAMESPACE);
    const podSpec = { volumes: [{ name: 'c', configMap: { name: 'app' } }], containers: [] };
    // `stuck` first: the queue runs due touches one at a time, in order.
    const names = ['stuck', 'web-1', 'web-2'];
    for (const name of names) {
      api.putWorkload(NAMESPACE, workload({ name, podSpec }));
      await api.write(NAMESPACE, DEPLOYMENT, name, signal()); // hashed, as the webhook left it
    }
    api.change(NAMESPACE, 'configmaps', 'app', 'ADDED');
    const leader: boolean[] = [];
    const metrics = silentFollowMetrics({ leader: (isLeader) => void leader.push(isLeader) });
    const leaseStore = memoryLease();
    const mode = startFollowMode({
      api,
      evaluate: createEvaluator({ configSource, hashKey: Buffer.alloc(32, 7) }),
      hashKeyId: hashKeyId(Buffer.alloc(32, 7)),
      digestSource: createSourceDigester({ configSource, hashKey: Buffer.alloc(32, 7) }),
      metrics,
      logger: quiet,
      options: {
        ...DEFAULT_FOLLOW_OPTIONS,
        debounceMs: 50,
        minIntervalMs: 0,
        ratePerSecond: 1000,
        burst: 1000,
        retryMs: 200,
        canaries: 0, // Every touch at once: the stuck GET must hold none of the others.
      },
      leaseStore,
      identity: 'leader',
      timing: { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100 },
    });
    try {
      // Taking the lead evaluates all three (stuck's GET hangs until its timeout).
      await waitFor(() => api.count('GET Deployment') >= 2, 'the first evaluations');
      source.configMap('app', { v: '2' });
      api.change(NAMESPACE, 'configmaps', 'app', 'MODIFIED');
      await waitFor(() => api.touches.length === 2, 'the two other workloads touched');
      expect(api.touches.map((t) => t.name)).toEqual(['web-1', 'web-2']);
      // Its GET gave up at the timeout and was sent again after retryMs, and again.
      await waitFor(() => stuckGets() >= 3, 'the hung GET to be retried');
      expect(leader).toEqual([true]);
      const renewed = leaseStore.current()!.record.renewTime;
      await waitFor(
        () => leaseStore.current()!.record.renewTime !== renewed,
        'the leader to renew again',
      );
      expect(leaseStore.current()!.record.holderIdentity).toBe('leader');
    } finally {
      await mode.stop();
    }
  });
});

const stuckGets = () =>
  seen.filter((line) => line.startsWith('GET ') && line.includes('/stuck')).length;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
