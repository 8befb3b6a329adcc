// Credentials that change while the webhook runs, against a real kube-apiserver:
// client-node resolves them in a child process (src/kube/credentials.ts), and a
// 401 asks it again and sends the request once more. Rotation is made real by
// deleting the old token's ServiceAccount, which the apiserver then refuses.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestJson } from '../../src/kube/client.js';
import { connectToCluster } from '../../src/kube/connection.js';
import { TrackedSession } from '../../src/kube/http2.js';
import { httpRequest } from '../../tools/cluster/http.js';
import { credentialsFromFile } from '../support/credentials.js';
import {
  type ClusterAccess,
  localKubeconfig,
  type SharedControlPlane,
  useSharedControlPlane,
  waitUntil,
} from '../support/e2e.js';

const NS = 'credentials';
const PROBE = `/api/v1/namespaces/${NS}/configmaps/probe`;

let shared: SharedControlPlane;
let controlPlane: ClusterAccess;
let k: (args: readonly string[]) => Promise<string>;
let dir: string;

beforeAll(async () => {
  shared = await useSharedControlPlane();
  controlPlane = shared.controlPlane;
  k = shared.k;
  dir = await mkdtemp(join(tmpdir(), 'confighash-credentials-'));
  await k(['create', 'namespace', NS]);
  await k(['create', 'configmap', 'probe', '-n', NS, '--from-literal=k=v']);
  await k(['create', 'role', 'reader', '-n', NS, '--verb=get', '--resource=configmaps']);
});

afterAll(async () => {
  await shared?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A ServiceAccount allowed to read ConfigMaps in NS, and a token of it. */
async function serviceAccountToken(name: string): Promise<string> {
  await k(['create', 'serviceaccount', name, '-n', NS]);
  await k([
    'create',
    'rolebinding',
    name,
    '-n',
    NS,
    '--role=reader',
    `--serviceaccount=${NS}:${name}`,
  ]);
  return (await k(['create', 'token', name, '-n', NS, '--duration=1h'])).trim();
}

function kubeconfig(user: object): string {
  return localKubeconfig(controlPlane, 'rotating', user, NS);
}

/** The status the apiserver answers a GET of the probe with this token (no retry, no client-node). */
async function statusWithToken(token: string): Promise<number> {
  const response = await httpRequest(new URL(PROBE, controlPlane.server), {
    ca: controlPlane.caCert,
    headers: { authorization: `Bearer ${token}` },
  });
  return response.status;
}

/** Deletes the ServiceAccount and waits until the apiserver refuses its token. */
async function revoke(name: string, token: string): Promise<void> {
  await k(['delete', 'serviceaccount', name, '-n', NS]);
  await waitUntil(async () => (await statusWithToken(token)) === 401, `${name}'s token refused`);
}

describe('credentials that rotate', () => {
  it('the token file (the auth provider client-node gives a pod): a 401 reads the new token and the GET succeeds', async () => {
    const [before, after] = [
      await serviceAccountToken('file-a'),
      await serviceAccountToken('file-b'),
    ];
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, before, { mode: 0o600 });
    const file = join(dir, 'token-file.kubeconfig');
    await writeFile(
      file,
      kubeconfig({ 'auth-provider': { name: 'tokenFile', config: { tokenFile } } }),
      { mode: 0o600 },
    );
    const credentials = await credentialsFromFile(file, { renewIntervalMs: 0 });
    expect(credentials.current().namespace).toBe(NS);
    const connection = connectToCluster(credentials);
    try {
      await requestJson(connection, { method: 'GET', path: PROBE });
      // kube-apiserver chose h2 in the handshake: the reads, and the 401's retry, go over HTTP/2.
      expect(await connection.http2?.session()).toBeInstanceOf(TrackedSession);
      const generation = connection.generation;

      await writeFile(tokenFile, after, { mode: 0o600 });
      await revoke('file-a', before);
      const probe = await requestJson<{ data: Record<string, string> }>(connection, {
        method: 'GET',
        path: PROBE,
      });
      expect(probe.data).toEqual({ k: 'v' });
      expect(connection.generation).toBeGreaterThan(generation);
      expect(connection.headers.authorization).toBe(`Bearer ${after}`);
    } finally {
      connection.close();
    }
  });

  it('an exec plugin: run again on a 401, its new token used for the retry', async () => {
    const [before, after] = [
      await serviceAccountToken('exec-a'),
      await serviceAccountToken('exec-b'),
    ];
    const current = join(dir, 'exec-token');
    const runs = join(dir, 'exec-runs');
    await writeFile(current, before);
    await writeFile(runs, '');
    const plugin = join(dir, 'plugin.mjs');
    await writeFile(
      plugin,
      `import { appendFileSync, readFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(runs)}, 'run\\n');
process.stdout.write(JSON.stringify({
  apiVersion: 'client.authentication.k8s.io/v1',
  kind: 'ExecCredential',
  status: { token: readFileSync(${JSON.stringify(current)}, 'utf8').trim() },
}));
`,
    );
    const file = join(dir, 'exec.kubeconfig');
    await writeFile(
      file,
      kubeconfig({
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [plugin],
          interactiveMode: 'Never',
        },
      }),
      { mode: 0o600 },
    );
    const credentials = await credentialsFromFile(file, { renewIntervalMs: 0 });
    const connection = connectToCluster(credentials);
    const runCount = async () => (await readFile(runs, 'utf8')).split('\n').filter(Boolean).length;
    try {
      // Many GETs, one run: credentials are resolved once, not per request.
      for (let i = 0; i < 20; i++) await requestJson(connection, { method: 'GET', path: PROBE });
      expect(await runCount()).toBe(1);

      await writeFile(current, after);
      await revoke('exec-a', before);
      // GETs in parallel meet the 401 together: one new run serves them all.
      await Promise.all(
        Array.from({ length: 8 }, () => requestJson(connection, { method: 'GET', path: PROBE })),
      );
      expect(await runCount()).toBe(2);
      expect(connection.headers.authorization).toBe(`Bearer ${after}`);
    } finally {
      connection.close();
    }
  });

  it('a revoked static token stays a 401 (asked again, nothing newer to send)', async () => {
    const token = await serviceAccountToken('static');
    const file = join(dir, 'static.kubeconfig');
    await writeFile(file, kubeconfig({ token }), { mode: 0o600 });
    const connection = connectToCluster(await credentialsFromFile(file, { renewIntervalMs: 0 }));
    try {
      await requestJson(connection, { method: 'GET', path: PROBE });
      await revoke('static', token);
      await expect(requestJson(connection, { method: 'GET', path: PROBE })).rejects.toMatchObject({
        status: 401,
      });
    } finally {
      connection.close();
    }
  });
});
