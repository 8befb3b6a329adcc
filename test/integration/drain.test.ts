// Shutdown never drops a review (src/server/drain.ts): after SIGTERM the server
// closes no connection itself — a kept-alive connection that sits idle stays
// open, and the next review on it is answered (never a 503) with
// `Connection: close`; the process exits once the client has closed it.

import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { putStandardSources } from '../support/app.js';
import { type FakeApi, kubeconfigFor, startFakeApi } from '../support/fake-api.js';
import { freePort, type RunningProcess, runConfighash } from '../support/process.js';
import { admissionReview, NAMESPACE } from '../support/workloads.js';

let api: FakeApi | undefined;
afterAll(async () => {
  await api?.close();
});

interface Served {
  readonly server: RunningProcess;
  readonly port: number;
  /** The CA of the server's certificate. */
  readonly ca: Buffer;
}

/** `confighash serve` on the fake apiserver with the standard sources, once it says it is ready. */
async function serveOnFakeApi(): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'confighash-drain-'));
  api = await startFakeApi();
  putStandardSources(api, NAMESPACE);
  const certs = join(dir, 'certs');
  expect(await runConfighash(['dev-certs', '--dir', certs]).exited).toBe(0);
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigFor(api.url));
  const port = await freePort();
  const server = runConfighash(
    [
      'serve',
      `--port=${port}`,
      '--host=127.0.0.1',
      `--tls-cert-file=${join(certs, 'tls.crt')}`,
      `--tls-key-file=${join(certs, 'tls.key')}`,
      `--hash-key-file=${join(certs, 'hash.key')}`,
      '--shutdown-timeout=60',
    ],
    { KUBECONFIG: kubeconfig },
  );
  await expect
    .poll(() => server.output.stdout.includes('"msg":"ready"'), { timeout: 15_000 })
    .toBe(true);
  return { server, port, ca: await readFile(join(certs, 'ca.crt')) };
}

interface Review {
  readonly status: number;
  readonly connection: unknown;
  readonly uid: string;
}

/** A client of one connection, and every socket its reviews went over. */
interface KeptAliveClient {
  readonly agent: https.Agent;
  readonly sockets: Set<unknown>;
  post(uid: string): Promise<Review>;
}

/** One connection, kept alive by the client as long as the test wants it (like the apiserver's 90 s). */
function keptAliveClient({ port, ca }: Served): KeptAliveClient {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, timeout: 120_000 });
  const sockets = new Set<unknown>();
  const post = (uid: string) =>
    new Promise<Review>((resolve, reject) => {
      const request = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/mutate',
          method: 'POST',
          ca,
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => {
            text += chunk.toString();
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              connection: response.headers.connection,
              uid: JSON.parse(text).response?.uid,
            }),
          );
        },
      );
      request.on('socket', (socket) => sockets.add(socket));
      request.on('error', reject);
      request.end(JSON.stringify(admissionReview({ uid })));
    });
  return { agent, sockets, post };
}

/** A review before SIGTERM leaves the connection open; whether the server closes it later. */
async function reviewKeepingConnection(client: KeptAliveClient): Promise<() => boolean> {
  const before = await client.post('drain-1');
  expect(before).toMatchObject({ status: 200, uid: 'drain-1' });
  expect(before.connection).not.toBe('close');
  const [socket] = [...client.sockets] as Socket[];
  let closedByServer = false;
  socket!.on('end', () => {
    closedByServer = true;
  });
  return () => closedByServer;
}

/** SIGTERM: the server says it is shutting down and leaves the idle connection alone. */
async function sigtermLeavesIdleConnection(
  server: RunningProcess,
  closedByServer: () => boolean,
): Promise<void> {
  server.child.kill('SIGTERM');
  await expect
    .poll(() => server.output.stdout.includes('shutting down'), { timeout: 10_000 })
    .toBe(true);
  // Longer than any close the server might do at once; it must not touch the idle connection.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(closedByServer()).toBe(false);
}

/** The next review on the same connection is answered, with `Connection: close`. */
async function reviewClosingConnection(client: KeptAliveClient): Promise<void> {
  const after = await client.post('drain-2');
  expect(after).toMatchObject({ status: 200, uid: 'drain-2', connection: 'close' });
  expect(client.sockets.size).toBe(1); // the same connection carried it
}

async function expectDrainedExit(server: RunningProcess): Promise<void> {
  const [code] = await once(server.child, 'exit');
  expect(code).toBe(0);
  expect(server.output.stdout).toContain('"remaining":0');
  expect(server.output.stdout).toContain('connections drained');
}

it('after SIGTERM, keeps an idle kept-alive connection open and answers the next review on it with Connection: close', async () => {
  const served = await serveOnFakeApi();
  const client = keptAliveClient(served);
  const closedByServer = await reviewKeepingConnection(client);
  await sigtermLeavesIdleConnection(served.server, closedByServer);
  await reviewClosingConnection(client);
  await expectDrainedExit(served.server);
  client.agent.destroy();
});
