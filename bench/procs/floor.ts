// The floors of scenario 1, in their own process:
//  (a) the smallest Fastify HTTPS server that parses an AdmissionReview and
//      answers `allowed` with no patch;
//  (b) the same, plus the GETs the review needs, in parallel, through one bare
//      keep-alive agent, each response read and parsed as JSON (a webhook that
//      reads its sources must at least do that) — and nothing else;
//  (c) the same GETs over ONE bare node:http2 session to the same TLS server (ALPN h2,
//      as confighash reads the API stub), each answer read and parsed, nothing else.
// Whatever confighash costs beyond (c) is its own work; (b) is kept for the record.

import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import Fastify from 'fastify';
import { serveRequests } from './ipc.js';

interface FloorOptions {
  readonly tls: { readonly cert: string; readonly key: string };
  /** Absent: floor (a). */
  readonly api?: {
    readonly url: string;
    readonly ca?: string;
    readonly cert?: string;
    readonly key?: string;
    /** Floor (c): the GETs as streams of one HTTP/2 session, not through an agent. */
    readonly http2?: boolean;
  };
}

let get: ((path: string) => Promise<unknown>) | undefined;
/** The objects one review reads (scenario 5 changes them between runs). */
let paths: readonly string[] = [];

function connect(api: NonNullable<FloorOptions['api']>): (path: string) => Promise<unknown> {
  const server = new URL(api.url);
  const secure = server.protocol === 'https:';
  const transport = secure ? https : http;
  const agent = secure
    ? new https.Agent({ keepAlive: true, ca: api.ca, cert: api.cert, key: api.key })
    : new http.Agent({ keepAlive: true });
  return (path) =>
    new Promise((resolve, reject) => {
      const request = transport.request(
        { hostname: server.hostname, port: server.port, path, agent, method: 'GET' },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            if (response.statusCode !== 200) {
              reject(new Error(`GET ${path}: HTTP ${response.statusCode}`));
              return;
            }
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end();
    });
}

/**
 * Floor (c): one session, opened on first use and again if it is lost (the stub keeps it for
 * the whole run); each GET a stream, its body read whole and parsed.
 */
function connectHttp2(api: NonNullable<FloorOptions['api']>): (path: string) => Promise<unknown> {
  let session: http2.ClientHttp2Session | undefined;
  const current = () => {
    if (session && !session.closed && !session.destroyed) return session;
    session = http2.connect(api.url, { ca: api.ca, cert: api.cert, key: api.key });
    session.on('error', () => {});
    return session;
  };
  return (path) =>
    new Promise((resolve, reject) => {
      const stream = current().request({ ':path': path }, { endStream: true });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (status !== 200) {
          reject(new Error(`GET ${path}: HTTP ${status}`));
          return;
        }
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      });
      stream.on('error', reject);
    });
}

serveRequests({
  async listen(message) {
    const options = message.options as FloorOptions;
    const app = Fastify({
      https: { cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' },
      keepAliveTimeout: 120_000,
      bodyLimit: 7 * 1024 * 1024,
    });
    get = options.api
      ? options.api.http2
        ? connectHttp2(options.api)
        : connect(options.api)
      : undefined;
    app.post('/mutate', async (request, reply) => {
      const review = request.body as { request?: { uid?: unknown } } | null;
      const uid = review?.request?.uid;
      if (typeof uid !== 'string') return reply.code(400).send({ error: 'no request.uid' });
      if (get) {
        const fetch = get;
        await Promise.all(paths.map((path) => fetch(path)));
      }
      return {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid, allowed: true },
      };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return { port: address.port };
  },
  paths(message) {
    paths = message.paths as string[];
    return { paths: paths.length };
  },
});
