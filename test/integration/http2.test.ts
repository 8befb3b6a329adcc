// One-shot requests over HTTP/2 (src/kube/http2.ts, src/kube/client.ts), against real TLS
// servers on loopback: one that offers h2 and http/1.1 as kube-apiserver does, one that
// speaks HTTP/1.1 only. The faults a real server does not make on demand — a connection
// that goes silent, a handshake that never finishes — come from a TCP relay that stops
// relaying and a listener that never answers.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import type http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { exchange, requestJson } from '../../src/kube/client.js';
import { type ApiConnection, connectToCluster } from '../../src/kube/connection.js';
import type { ClusterAccess } from '../../src/kube/credentials.js';
import { type Http2RouteOptions, http2Route, TrackedSession } from '../../src/kube/http2.js';

interface Answer {
  readonly httpVersion: string;
  readonly method: string;
  readonly path: string;
  readonly contentType?: string;
  readonly body: string;
}

let ca: string;
let tlsPair: { cert: string; key: string };
const closers: (() => void)[] = [];

beforeAll(async () => {
  const authority = await generateCertificateAuthority('http2 test CA', 1);
  const serving = await generateServingCertificate(authority, ['127.0.0.1'], 1);
  ca = authority.cert;
  tlsPair = { cert: serving.cert, key: serving.key };
});

afterEach(() => {
  for (const close of closers.splice(0)) close();
});

afterAll(() => {
  for (const close of closers.splice(0)) close();
});

/** Answers every request with what it saw; `/slow` after 300 ms. */
async function echo(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  let body = '';
  for await (const chunk of request) body += chunk;
  if (request.url === '/slow') await new Promise((resolve) => setTimeout(resolve, 300));
  const answer: Answer = {
    httpVersion: request.httpVersion,
    method: request.method ?? '',
    path: request.url ?? '',
    contentType: request.headers['content-type'],
    body,
  };
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(answer));
}

interface TestServer {
  readonly url: URL;
  /** TCP connections accepted. */
  connections(): number;
  /** HTTP/2 sessions begun. */
  sessions(): number;
  /** Ends every HTTP/2 session now, as a server that restarts does. */
  dropSessions(): void;
}

async function listen(server: net.Server): Promise<URL> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => server.close());
  return new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

/** Offers h2 and http/1.1, as kube-apiserver does. */
async function http2Server(): Promise<TestServer> {
  const server = http2.createSecureServer(
    { ...tlsPair, allowHTTP1: true },
    echo as unknown as Parameters<typeof http2.createSecureServer>[1],
  );
  let connections = 0;
  const sessions = new Set<http2.ServerHttp2Session>();
  let begun = 0;
  server.on('connection', () => connections++);
  server.on('session', (session) => {
    begun++;
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  closers.push(() => {
    for (const session of sessions) session.destroy();
  });
  return {
    url: await listen(server),
    connections: () => connections,
    sessions: () => begun,
    dropSessions: () => {
      for (const session of sessions) session.destroy();
    },
  };
}

/** HTTP/1.1 only: chooses no h2 in the handshake. */
async function http1Server(): Promise<TestServer> {
  const server = https.createServer(tlsPair, echo);
  let connections = 0;
  server.on('connection', () => connections++);
  closers.push(() => server.closeAllConnections());
  return {
    url: await listen(server),
    connections: () => connections,
    sessions: () => 0,
    dropSessions: () => {},
  };
}

function accessTo(url: URL): ClusterAccess {
  return {
    server: url,
    tls: { ca: Buffer.from(ca), rejectUnauthorized: true },
    headers: { authorization: 'Bearer test' },
  };
}

function connectTo(url: URL): ApiConnection {
  const access = accessTo(url);
  const connection = connectToCluster({
    current: () => access,
    generation: 0,
    renew: async () => {},
  });
  closers.push(() => connection.close());
  return connection;
}

/** A connection whose HTTP/2 route has these options (short timeouts, few streams). */
function connectWith(url: URL, options: Http2RouteOptions): ApiConnection {
  const base = connectTo(url);
  const route = http2Route(url, accessTo(url).tls, options);
  closers.push(() => route.close());
  return {
    server: base.server,
    basePath: base.basePath,
    agent: base.agent,
    http2: route,
    headers: base.headers,
    generation: 0,
    renewAfterUnauthorized: async () => false,
    close: () => route.close(),
  };
}

const get = (connection: ApiConnection, path: string, signal?: AbortSignal) =>
  requestJson<Answer>(connection, { method: 'GET', path, signal });

describe('one-shot requests over HTTP/2', () => {
  it('a server that offers h2 is read over HTTP/2, every request on one connection', async () => {
    const server = await http2Server();
    const connection = connectTo(server.url);

    const answers = await Promise.all(['/a', '/b', '/c'].map((path) => get(connection, path)));

    expect(answers.map((answer) => [answer.httpVersion, answer.path])).toEqual([
      ['2.0', '/a'],
      ['2.0', '/b'],
      ['2.0', '/c'],
    ]);
    await get(connection, '/d');
    expect(server.connections()).toBe(1);
    expect(server.sessions()).toBe(1);
  });

  it('a write goes over HTTP/2 with its body, content type and method', async () => {
    const server = await http2Server();
    const connection = connectTo(server.url);

    const answer = await requestJson<Answer>(connection, {
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/n/deployments/d',
      body: { metadata: { annotations: { a: 'b' } } },
      contentType: 'application/merge-patch+json',
    });

    expect(answer).toEqual({
      httpVersion: '2.0',
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/n/deployments/d',
      contentType: 'application/merge-patch+json',
      body: '{"metadata":{"annotations":{"a":"b"}}}',
    });
  });

  it('a server that speaks HTTP/1.1 only is read over HTTP/1.1 through the agent', async () => {
    const server = await http1Server();
    const connection = connectTo(server.url);

    const answers = await Promise.all(['/a', '/b'].map((path) => get(connection, path)));

    expect(answers.map((answer) => answer.httpVersion)).toEqual(['1.1', '1.1']);
    expect(await connection.http2?.session()).toBeUndefined();
    expect((await get(connection, '/c')).httpVersion).toBe('1.1');
  });

  it('the answer is the status and headers the server sent', async () => {
    const server = await http2Server();
    const connection = connectTo(server.url);

    const answer = await exchange(connection, { method: 'GET', path: '/a' });

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect((JSON.parse(answer.body.toString('utf8')) as Answer).httpVersion).toBe('2.0');
  });

  it('a lost session is forgotten: the next request opens another', async () => {
    const server = await http2Server();
    const connection = connectTo(server.url);
    await get(connection, '/a');
    const first = await connection.http2?.session();

    server.dropSessions();
    await expect.poll(() => first instanceof TrackedSession && !first.usable).toBe(true);
    const answer = await get(connection, '/b');

    expect(answer.httpVersion).toBe('2.0');
    expect(server.sessions()).toBe(2);
  });

  it('a session that has carried its share of streams is closed; the next request opens another', async () => {
    const server = await http2Server();
    const connection = connectWith(server.url, { streamsPerSession: 2 });

    for (const path of ['/a', '/b', '/c']) await get(connection, path);

    expect(server.sessions()).toBe(2);
  });

  it('a connection gone silent is closed once an aborted request finds no PING answered', async () => {
    const server = await http2Server();
    const relay = await tcpRelay(server.url);
    const connection = connectWith(relay.url, { pingTimeoutMs: 200 });
    await get(connection, '/a');
    const first = await connection.http2?.session();

    relay.silence();
    const aborted = get(connection, '/b', AbortSignal.timeout(100));
    await expect(aborted).rejects.toThrow(/aborted/);
    await expect.poll(() => first instanceof TrackedSession && !first.usable).toBe(true);
    relay.resume();

    expect((await get(connection, '/c')).httpVersion).toBe('2.0');
    expect(server.sessions()).toBe(2);
  });

  it('a handshake that never finishes: a request gives up at its deadline, the opening at its own', async () => {
    const silent = net.createServer(() => {});
    const url = await listen(silent);
    const connection = connectWith(url, { connectTimeoutMs: 300 });

    await expect(get(connection, '/a', AbortSignal.timeout(50))).rejects.toThrow(/aborted/);
    await expect(get(connection, '/b')).rejects.toThrow(/no TLS handshake .* within 300 ms/);
  });

  it('holds the process while a request is in flight, and not once it is answered', async () => {
    const server = await http2Server();
    const dir = tmpdir();
    const script = join(dir, `confighash-http2-exit-${process.pid}.mts`);
    const client = new URL('../../src/kube/client.ts', import.meta.url).pathname;
    const connectionModule = new URL('../../src/kube/connection.ts', import.meta.url).pathname;
    await writeFile(
      script,
      `import { requestJson } from ${JSON.stringify(client)};
import { connectToCluster } from ${JSON.stringify(connectionModule)};
const access = { server: new URL(${JSON.stringify(server.url.href)}), tls: { ca: Buffer.from(${JSON.stringify(ca)}), rejectUnauthorized: true }, headers: {} };
const connection = connectToCluster({ current: () => access, generation: 0, renew: async () => {} });
const answer = await requestJson(connection, { method: 'GET', path: '/slow' });
console.log(answer.httpVersion, answer.path);
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    const killer = setTimeout(() => child.kill(), 15_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(killer);

    expect({ code, output: output.trim() }).toEqual({ code: 0, output: '2.0 /slow' });
  });
});

/** What the server does with a stream that arrives: answer it, or one of the ways a server refuses. */
type Receipt =
  | 'answer'
  | 'slow'
  | 'refuse'
  | 'reset-internal'
  | 'goaway-below'
  | 'goaway-below-with-error'
  | 'answer-then-reset';

interface ScriptedServer {
  readonly url: URL;
  /** Streams received, by path, and the session (1, 2, …) each arrived on. */
  readonly receipts: { path: string; session: number }[];
  sessions(): number;
}

/**
 * An h2 server that treats the n-th stream received for a path as `script(path, n)` says:
 * a reset with REFUSED_STREAM (never processed), with INTERNAL_ERROR, an answer begun then
 * reset, or a GOAWAY whose last stream id is below the stream's (a server going away).
 */
async function scriptedServer(
  script: (path: string, n: number) => Receipt,
): Promise<ScriptedServer> {
  const server = http2.createSecureServer(tlsPair);
  const receipts: { path: string; session: number }[] = [];
  const numbers = new WeakMap<http2.ServerHttp2Session, number>();
  const open = new Set<http2.ServerHttp2Session>();
  let begun = 0;
  server.on('session', (session) => {
    numbers.set(session, ++begun);
    open.add(session);
    session.on('close', () => open.delete(session));
    session.on('error', () => {});
  });
  server.on('stream', (stream, headers) => {
    const path = String(headers[':path']);
    const session = numbers.get(stream.session as http2.ServerHttp2Session) ?? 0;
    receipts.push({ path, session });
    stream.on('error', () => {});
    const answer = () => {
      if (stream.destroyed) return;
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(
        JSON.stringify({ httpVersion: '2.0', method: 'GET', path, body: `session ${session}` }),
      );
    };
    switch (script(path, receipts.filter((receipt) => receipt.path === path).length)) {
      case 'answer':
        return answer();
      case 'slow':
        return void setTimeout(answer, 300);
      case 'refuse':
        return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      case 'reset-internal':
        return stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      case 'goaway-below':
        return goAwayBelow(stream);
      case 'goaway-below-with-error':
        return goAwayBelow(stream, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      // The answer begun, the stream then reset (destroyed: INTERNAL_ERROR, the data not ended).
      case 'answer-then-reset':
        stream.respond({ ':status': 200, 'content-type': 'application/json' });
        stream.write('{"partial":');
        return void setTimeout(() => stream.destroy(new Error('gone')), 20);
    }
  });
  closers.push(() => {
    for (const session of open) session.destroy();
  });
  return { url: await listen(server), receipts, sessions: () => begun };
}

/** A GOAWAY whose last stream id is the one before `stream`'s (client streams are odd). */
function goAwayBelow(
  stream: http2.ServerHttp2Stream,
  code: number = http2.constants.NGHTTP2_NO_ERROR,
): void {
  stream.session?.goaway(code, (stream.id ?? 1) - 2);
}

describe('a stream the server refused unprocessed is sent once more', () => {
  it('reset with REFUSED_STREAM: sent again once and answered', async () => {
    const server = await scriptedServer((_path, n) => (n === 1 ? 'refuse' : 'answer'));
    const connection = connectTo(server.url);

    const answer = await get(connection, '/a');

    expect(answer.path).toBe('/a');
    expect(server.receipts.map(({ path }) => path)).toEqual(['/a', '/a']);
  });

  it('refused twice: fails, with no third send', async () => {
    const server = await scriptedServer(() => 'refuse');
    const connection = connectTo(server.url);

    await expect(get(connection, '/a')).rejects.toThrow(/REFUSED_STREAM/);
    expect(server.receipts.map(({ path }) => path)).toEqual(['/a', '/a']);
  });

  it('a GOAWAY below its stream id: sent again on a new session, which the next requests use, while an accepted stream finishes on the old one', async () => {
    const server = await scriptedServer((path, n) =>
      path === '/slow' ? 'slow' : path === '/b' && n === 1 ? 'goaway-below' : 'answer',
    );
    const connection = connectTo(server.url);
    await get(connection, '/a');
    const slow = get(connection, '/slow');
    await expect.poll(() => server.receipts.length).toBe(2);

    const answer = await get(connection, '/b');
    const later = await get(connection, '/c');

    expect((await slow).body).toBe('session 1');
    expect([answer.body, later.body]).toEqual(['session 2', 'session 2']);
    expect(server.receipts).toEqual([
      { path: '/a', session: 1 },
      { path: '/slow', session: 1 },
      { path: '/b', session: 1 },
      { path: '/b', session: 2 },
      { path: '/c', session: 2 },
    ]);
    expect(server.sessions()).toBe(2);
  });

  it('a GOAWAY with an error code: the stream below it fails, the one above is sent again on a new session', async () => {
    const server = await scriptedServer((path, n) =>
      path === '/slow' ? 'slow' : path === '/b' && n === 1 ? 'goaway-below-with-error' : 'answer',
    );
    const connection = connectTo(server.url);
    const slow = get(connection, '/slow').then(
      () => 'answered',
      (error: Error) => error.message,
    );
    await expect.poll(() => server.receipts.length).toBe(1);

    const answer = await get(connection, '/b');

    expect(await slow).toBe('Session closed with error code 11');
    expect(answer.body).toBe('session 2');
    expect(server.receipts).toEqual([
      { path: '/slow', session: 1 },
      { path: '/b', session: 1 },
      { path: '/b', session: 2 },
    ]);
  });

  it.each([
    ['reset with INTERNAL_ERROR', 'reset-internal' as const, /INTERNAL_ERROR/],
    ['answered in part, then reset', 'answer-then-reset' as const, /INTERNAL_ERROR/],
  ])('%s: not sent again (the server may have acted on it)', async (_name, receipt, error) => {
    const server = await scriptedServer(() => receipt);
    const connection = connectTo(server.url);

    await expect(get(connection, '/a')).rejects.toThrow(error);
    expect(server.receipts.map(({ path }) => path)).toEqual(['/a']);
  });
});

/** Relays TCP to `target`; silence() stops relaying both ways (the connections stay open). */
async function tcpRelay(target: URL): Promise<{ url: URL; silence(): void; resume(): void }> {
  let silent = false;
  const relay = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port), target.hostname);
    inbound.on('data', (chunk) => {
      if (!silent) outbound.write(chunk);
    });
    outbound.on('data', (chunk) => {
      if (!silent) inbound.write(chunk);
    });
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
    inbound.on('error', () => {});
    outbound.on('error', () => {});
    closers.push(() => {
      inbound.destroy();
      outbound.destroy();
    });
  });
  return {
    url: await listen(relay),
    silence: () => {
      silent = true;
    },
    resume: () => {
      silent = false;
    },
  };
}
