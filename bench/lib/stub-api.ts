// The API stub as the stub scenarios (1, 2, 5a, 5b, 7–9) and the ratio run use it: its
// process, serving TLS with the bench's certificate as an apiserver does, a kubeconfig
// naming it, the sources seeded in it, and the load targets of floor (b) and confighash
// reading them.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { forkHelper, type Helper, type Webhook } from './children.js';
import { type Context, NAMESPACE } from './context.js';
import type { LoadTarget } from './load.js';
import { type Floor, wrongOutcomes } from './servers.js';
import { benchSources, sourcePath } from './workload.js';

export interface StubApi {
  readonly stub: Helper;
  readonly apiUrl: string;
  /** The CA that signed the stub's certificate, for a client that is not confighash. */
  readonly ca: string;
  readonly kubeconfig: string;
  /** Connections the stub has accepted so far (a counter). */
  stubConnections(): Promise<number>;
  /** `count` sources of `bytes` in the bench namespace; `bump`: a new resourceVersion on every read. */
  seed(count: number, bytes: number, bump: boolean): Promise<unknown>;
}

/** The stub in its own process (on `cpus` only, when given), listening, with a kubeconfig. */
export async function startStubApi(context: Context, cpus?: string): Promise<StubApi> {
  const stub = forkHelper('api-stub', join(context.work, 'api-stub.log'), { cpus });
  context.helpers.push(stub);
  const { cert, key, ca } = context.certs;
  const { url: apiUrl } = await stub.call<{ url: string }>('listen', { tls: { cert, key } });
  const kubeconfig = join(context.work, 'stub.kubeconfig');
  await writeFile(kubeconfig, stubKubeconfig(apiUrl, ca));
  return {
    stub,
    apiUrl,
    ca,
    kubeconfig,
    stubConnections: async () => (await stub.call<{ connections: number }>('stats')).connections,
    seed: (count, bytes, bump) =>
      stub.call('seed', { namespace: NAMESPACE, count, bytes, bump, unrelated: 0 }),
  };
}

/** A kubeconfig for the stub at `server`; `ca`: the CA its TLS certificate chains to. */
export function stubKubeconfig(server: string, ca: string): string {
  const authority = { 'certificate-authority-data': Buffer.from(ca).toString('base64') };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'stub', cluster: { server, ...authority } }],
    users: [{ name: 'bench', user: { token: 'bench-token' } }],
    contexts: [{ name: 'stub', context: { cluster: 'stub', user: 'bench' } }],
    'current-context': 'stub',
  });
}

/** A floor (b or c) reads what the review with `count` sources reads. */
export function setFloorReads(floor: Floor, count: number): Promise<unknown> {
  return floor.helper.call('paths', {
    paths: benchSources(count).map((s) => sourcePath(NAMESPACE, s)),
  });
}

/** floor (b) under load, reading from the stub. */
export function floorBTarget(floorB: Floor, api: StubApi, body: string): LoadTarget {
  return floorTarget('floor-b', floorB, api, body);
}

/** A floor under load (`id`: floor-b, floor-c), reading from the stub. */
export function floorTarget(id: string, floor: Floor, api: StubApi, body: string): LoadTarget {
  return {
    id,
    url: floor.url,
    body,
    apiConnections: api.stubConnections,
    serverPid: floor.helper.pid,
    apiPid: api.stub.pid,
  };
}

/** confighash under load, reading from the stub; every answer must be the hash patch. */
export function confighashTarget(webhook: Webhook, api: StubApi, body: string): LoadTarget {
  return {
    id: 'confighash',
    url: webhook.url,
    body,
    apiConnections: api.stubConnections,
    wrongOutcomes: wrongOutcomes(webhook, 'patched'),
    serverPid: webhook.pid,
    apiPid: api.stub.pid,
  };
}
