// The one way confighash talks to the API server: requests (over HTTP/2 when the
// server speaks it, http2.ts) and watch streams (HTTP/1.1) over an ApiConnection,
// one error type (ApiError, by status code)
// and one way to describe a failure in a line. Lookups, follow mode, the lease
// and self-managed certificates all use it. Also the field manager every write
// names.

import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { untilAborted } from '../runtime/index.js';
import { SOURCE_RESOURCE, type SourceKind } from '../sources/index.js';
import type { WorkloadKind } from '../workload/index.js';
import type { ApiConnection } from './connection.js';
import { TrackedSession } from './http2.js';
import { http } from './node-http.js';

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly accept?: string;
  readonly signal?: AbortSignal;
  /**
   * Counts the answer's bytes as they arrive: its content-length when it has one, else each
   * chunk. False: no room; the exchange stops reading and fails with AnswerOverBudget.
   */
  readonly countBytes?: (bytes: number) => boolean;
}

/** The field manager of every write confighash makes (managedFields, `kubectl … --show-managed-fields`). */
export const FIELD_MANAGER = 'confighash';

/** The field manager of `confighash plan`'s dry-run applies: never a real write's. */
export const PLAN_FIELD_MANAGER = 'confighash-plan';

/**
 * The field manager of `confighash halt`/`resume`: a person's write, so never the follower's
 * entry, which its fence lets own only the annotations confighash writes (docs/design.md §7).
 */
export const CONTROL_FIELD_MANAGER = 'confighash-control';

/** Who reports follow mode's Events (`reportingController`); plan and explain find them by it. */
export const REPORTING_CONTROLLER = 'confighash.dev/follow';

/** `?fieldManager=confighash`, to append to a write's path. */
export const FIELD_MANAGER_QUERY = `fieldManager=${encodeURIComponent(FIELD_MANAGER)}`;

/** Accept headers for metadata-only answers: the objects without their data or spec. */
export const METADATA_ONLY_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const METADATA_ONLY_OBJECT =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** An answer whose bytes found no room in its request's countBytes: left unread. */
export class AnswerOverBudget extends Error {
  constructor() {
    super('answer over the lookup byte budget');
    this.name = 'AnswerOverBudget';
  }
}

/**
 * Counts a response's bytes for `countBytes` (its content-length at once, when it declares one),
 * true while they fit. One per exchange, made only when the request counts.
 */
function answerCounter(
  countBytes: (bytes: number) => boolean,
  headers: IncomingHttpHeaders,
): (chunk: Buffer) => boolean {
  const declared = Number(headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared < 0) return (chunk) => countBytes(chunk.length);
  const fits = countBytes(declared);
  return () => fits;
}

/** True when `error` is an API answer with one of these status codes. */
export function isStatus(error: unknown, ...codes: number[]): error is ApiError {
  return error instanceof ApiError && codes.includes(error.status);
}

/** A failure as one line naming what was being done: `cannot read Secret ns/x: HTTP 403: …`. */
export function describeFailure(error: unknown, doing: string): Error {
  if (error instanceof ApiError) {
    const detail = error.message === `HTTP ${error.status}` ? '' : `: ${error.message}`;
    return new Error(`cannot ${doing}: HTTP ${error.status}${detail}`);
  }
  // A DOMException's code is a number (an abort's is 20): its message says more.
  const cause = error as Error & { code?: unknown };
  return new Error(
    `cannot ${doing}: ${typeof cause.code === 'string' ? cause.code : cause.message}`,
  );
}

/** Sends one request; resolves with the parsed JSON body of a 2xx, throws ApiError otherwise. */
export async function requestJson<T>(connection: ApiConnection, request: ApiRequest): Promise<T> {
  const { status, body } = await exchange(connection, request);
  if (status < 200 || status >= 300) throw apiError(status, body);
  return (body.length === 0 ? undefined : JSON.parse(body.toString('utf8'))) as T;
}

/** An answer read whole. */
export interface ApiAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Sends one request and reads its whole answer (sent again after a 401 as
 * sentAgainIfUnauthorized says). A review makes three of these: one promise
 * from request to body, as floor (b)'s GETs do (BENCHMARKS.md).
 */
export function exchange(connection: ApiConnection, request: ApiRequest): Promise<ApiAnswer> {
  const payload = payloadOf(request);
  const answered = sentAgainIfUnauthorized(
    connection,
    () => exchangeOnce(connection, request, payload),
    (answer) => answer.status,
  );
  return connection.onExchange ? observed(connection, request, answered) : answered;
}

/** Tells the connection's observer (the CLI's -v 6) of the request, once answered or failed. */
function observed(
  connection: ApiConnection,
  request: ApiRequest,
  answered: Promise<ApiAnswer>,
): Promise<ApiAnswer> {
  const started = performance.now();
  const url = `${connection.server.origin}${connection.basePath}${request.path}`;
  const tell = (status: number, error?: string) =>
    connection.onExchange?.({
      method: request.method,
      url,
      status,
      durationMs: Math.round(performance.now() - started),
      ...(error === undefined ? {} : { error }),
    });
  return answered.then(
    (answer) => {
      tell(answer.status);
      return answer;
    },
    (error: Error & { code?: unknown }) => {
      tell(0, typeof error.code === 'string' ? error.code : error.message);
      throw error;
    },
  );
}

/**
 * One exchange over the route's session now (HTTP/1.1 when the server does not offer h2).
 * A stream the server refused unprocessed (TrackedSession.refused) is sent again once,
 * here and nowhere else, on the session the route gives then (a new one when the first
 * received GOAWAY), under the same signal: it never reached the server's handlers, so
 * sending it again cannot do anything twice. Any other failure is the caller's.
 */
function exchangeOnce(
  connection: ApiConnection,
  request: ApiRequest,
  payload: Buffer | undefined,
  mayResend = true,
): Promise<ApiAnswer> {
  const choice = connection.http2?.session();
  if (choice === undefined) return exchangeOverHttp1(connection, request, payload);
  if (choice instanceof TrackedSession)
    return exchangeOverHttp2(choice, connection, request, payload, mayResend);
  return untilAborted(choice, request.signal, () =>
    Promise.reject(abortError(request.signal as AbortSignal)),
  ).then((session) =>
    session === undefined
      ? exchangeOverHttp1(connection, request, payload)
      : exchangeOverHttp2(session, connection, request, payload, mayResend),
  );
}

function exchangeOverHttp1(
  connection: ApiConnection,
  request: ApiRequest,
  payload: Buffer | undefined,
): Promise<ApiAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = openRequest(connection, request, payload, (response) => {
      const chunks: Buffer[] = [];
      const fits = request.countBytes && answerCounter(request.countBytes, response.headers);
      if (fits && !fits(EMPTY)) {
        outgoing.destroy(new AnswerOverBudget());
        return;
      }
      response.on('data', (chunk: Buffer) => {
        if (outgoing.destroyed) return;
        if (fits && !fits(chunk)) outgoing.destroy(new AnswerOverBudget());
        else chunks.push(chunk);
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: joined(chunks),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
  });
}

function exchangeOverHttp2(
  session: TrackedSession,
  connection: ApiConnection,
  request: ApiRequest,
  payload: Buffer | undefined,
  mayResend: boolean,
): Promise<ApiAnswer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(
      {
        ...headersOf(connection, request, payload),
        ':method': request.method,
        ':path': `${connection.basePath}${request.path}`,
      },
      payload === undefined,
    );
    let headers: IncomingHttpHeaders = {};
    let settled = false;
    let fits: ((chunk: Buffer) => boolean) | undefined;
    const chunks: Buffer[] = [];
    const overBudget = () => {
      failed(() => new AnswerOverBudget());
      stream.close(http2.constants.NGHTTP2_CANCEL);
    };
    stream.on('response', (answer) => {
      headers = answer;
      fits = request.countBytes && answerCounter(request.countBytes, answer);
      if (fits && !fits(EMPTY)) overBudget();
    });
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (fits && !fits(chunk)) overBudget();
      else chunks.push(chunk);
    });
    stream.on('end', () => {
      settled = true;
      resolve({ status: Number(headers[':status'] ?? 0), headers, body: joined(chunks) });
    });
    // Ended without its answer: sent again if the server refused it unprocessed, and may.
    const failed = (error: () => Error) => {
      if (settled) return;
      settled = true;
      if (mayResend && session.refused(stream)) {
        resolve(exchangeOnce(connection, request, payload, false));
      } else {
        reject(error());
      }
    };
    stream.on('error', (error) => failed(() => error));
    // Reset without an error code, before its end: no answer. (Made only then: an Error costs a stack.)
    stream.on('close', () =>
      failed(() => new Error(`stream closed before its answer (code ${stream.rstCode})`)),
    );
    if (request.signal) abortWith(request.signal, stream, session.checkAlive);
    if (payload) stream.end(payload);
  });
}

const EMPTY = Buffer.alloc(0);

function joined(chunks: readonly Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: {
    readonly metadata?: {
      readonly name?: string;
      readonly namespace?: string;
      readonly resourceVersion?: string;
      readonly labels?: Readonly<Record<string, string>>;
      readonly annotations?: Readonly<Record<string, string>>;
    };
    readonly code?: number;
    readonly message?: string;
  };
}

/**
 * Streams a watch until the server ends it or `signal` aborts. Calls `onEvent`
 * for each event in order. Throws ApiError for a non-200 answer (410 when the
 * resourceVersion is too old).
 */
export async function streamWatch(
  connection: ApiConnection,
  path: string,
  accept: string,
  onEvent: (event: WatchEvent) => void,
  signal: AbortSignal,
  /** Called when the stream has started (status 200), before any event. */
  onOpen: () => void = () => {},
): Promise<void> {
  const response = await sendRequest(connection, { method: 'GET', path, accept, signal });
  const status = response.statusCode ?? 0;
  if (status !== 200) throw apiError(status, await readBody(response));
  onOpen();
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) {
          try {
            onEvent(JSON.parse(line) as WatchEvent);
          } catch (error) {
            response.destroy();
            reject(error);
            return;
          }
        }
        newline = buffered.indexOf('\n');
      }
    });
    response.on('end', resolve);
    response.on('close', resolve);
    response.on('error', (error) => (signal.aborted ? resolve() : reject(error)));
  });
}

/** Sends a request; resolves with the response as it starts, for a watch to stream. */
function sendRequest(connection: ApiConnection, request: ApiRequest): Promise<IncomingMessage> {
  const payload = payloadOf(request);
  return sentAgainIfUnauthorized(
    connection,
    () =>
      new Promise<IncomingMessage>((resolve, reject) => {
        openRequest(connection, request, payload, resolve).on('error', reject);
      }),
    (response) => response.statusCode,
    (response) => response.resume(),
  );
}

/**
 * A 401 sent with credentials that have since changed (or change when asked
 * again) is sent once more with the new ones.
 */
async function sentAgainIfUnauthorized<T>(
  connection: ApiConnection,
  send: () => Promise<T>,
  statusOf: (answer: T) => number | undefined,
  discard: (answer: T) => void = () => {},
): Promise<T> {
  const generation = connection.generation;
  const answer = await send();
  if (statusOf(answer) !== 401 || !(await connection.renewAfterUnauthorized(generation))) {
    return answer;
  }
  discard(answer);
  return send();
}

function payloadOf(request: ApiRequest): Buffer | undefined {
  return request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
}

/** Starts `request` on the connection's agent, bound to its signal; `onResponse` gets the answer. */
function openRequest(
  connection: ApiConnection,
  request: ApiRequest,
  payload: Buffer | undefined,
  onResponse: (response: IncomingMessage) => void,
): ClientRequest {
  const { server } = connection;
  const outgoing = (server.protocol === 'https:' ? https : http).request(
    {
      protocol: server.protocol,
      hostname: server.hostname,
      port: server.port,
      path: `${connection.basePath}${request.path}`,
      method: request.method,
      agent: connection.agent,
      headers: headersOf(connection, request, payload),
    },
    onResponse,
  );
  if (request.signal) abortWith(request.signal, outgoing);
  outgoing.end(payload);
  return outgoing;
}

/** What a signal's abort ends: an HTTP/1.1 request or an HTTP/2 stream. */
interface Abortable {
  destroy(error: Error): void;
  once(event: 'close', listener: () => void): unknown;
}

/** The requests in flight under a signal, kept on the signal itself, with what to do on abort. */
const IN_FLIGHT = Symbol('confighash.inFlight');
type TrackedSignal = AbortSignal & { [IN_FLIGHT]?: Map<Abortable, (() => void) | undefined> };

/**
 * Destroys `outgoing` when `signal` aborts, then calls `onAborted`. A review's deadline
 * covers all of its requests: one abort listener per signal, not one per request
 * (http.request's `signal` option adds and removes an EventTarget listener for every
 * request). The map rides on the signal rather than in a WeakMap, and the listener is added
 * without options (the signal aborts once): cheaper per review, as measured in BENCHMARKS.md.
 */
function abortWith(signal: TrackedSignal, outgoing: Abortable, onAborted?: () => void): void {
  if (signal.aborted) {
    outgoing.destroy(abortError(signal));
    onAborted?.();
    return;
  }
  let requests = signal[IN_FLIGHT];
  if (!requests) {
    const pending = new Map<Abortable, (() => void) | undefined>();
    signal[IN_FLIGHT] = pending;
    signal.addEventListener('abort', () => {
      for (const [request, aborted] of pending) {
        request.destroy(abortError(signal));
        aborted?.();
      }
    });
    requests = pending;
  }
  const tracked = requests;
  tracked.set(outgoing, onAborted);
  outgoing.once('close', () => tracked.delete(outgoing));
}

function abortError(signal: AbortSignal): Error {
  return new DOMException(`request aborted: ${String(signal.reason)}`, 'AbortError');
}

/** A GET without its own accept header sends the connection's prepared headers as they are. */
function headersOf(
  connection: ApiConnection,
  request: ApiRequest,
  payload: Buffer | undefined,
): Readonly<Record<string, string>> {
  if (!payload && request.accept === undefined) return connection.headers;
  return {
    ...connection.headers,
    ...(request.accept === undefined ? {} : { accept: request.accept }),
    ...(payload
      ? {
          'content-type': request.contentType ?? 'application/json',
          'content-length': String(payload.length),
        }
      : {}),
  };
}

function readBody(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', reject);
  });
}

function apiError(status: number, body: Buffer): ApiError {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { message?: string; reason?: string };
    return new ApiError(status, parsed.message ?? `HTTP ${status}`, parsed.reason);
  } catch {
    return new ApiError(status, `HTTP ${status}`);
  }
}

/** The API path of one ConfigMap or Secret. */
export function sourcePath(kind: SourceKind, namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/${SOURCE_RESOURCE[kind]}/${encodeURIComponent(name)}`;
}

/** The API path of a workload kind's collection in `namespace`, or of one object in it. */
export function workloadPath(namespace: string, kind: WorkloadKind, name?: string): string {
  const collection = `/apis/${kind.group}/${kind.version}/namespaces/${encodeURIComponent(namespace)}/${kind.resource}`;
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`;
}
