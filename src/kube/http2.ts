// One HTTP/2 connection to the API server for its one-shot requests, when it speaks
// HTTP/2 (kube-apiserver does; client-go talks to it so). Every request of a review
// is a stream on one TLS connection: the GETs of many reviews leave in one socket write
// and come back in one read, where over HTTP/1.1 each GET costs a write and a read on a
// socket of its own (BENCHMARKS.md, "HTTP/2 to the API server", has the figures). A
// server that does not choose h2 in the TLS handshake is sent HTTP/1.1 through the agent,
// and so is a plain-HTTP one. Watches stay on HTTP/1.1: a stream that lasts for hours
// holds its own socket. A stream the server refused unprocessed (refused()) is safe to
// send again, as client-go does; client.ts sends it once more, on the session the route
// gives then.

import http2, {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type OutgoingHttpHeaders,
} from 'node:http2';
import { isIP } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import { type Clock, systemClock } from '../runtime/index.js';
import type { ClientTls as TlsMaterial } from './credentials.js';
import { clientTlsOptions } from './tls-options.js';

/** The session to send on now; undefined: the server speaks HTTP/1.1 only. */
type Http2Choice = TrackedSession | undefined;

/** The HTTP/2 side of one ApiConnection, for one TLS material. */
export interface Http2Route {
  /** Synchronous once a session is open, so a review's request adds no promise. */
  session(): Http2Choice | Promise<Http2Choice>;
  close(): void;
}

/** A TLS connection that does not finish its handshake in this long is given up. */
const CONNECT_TIMEOUT_MS = 10_000;
/** After a request was aborted, a session that does not answer a PING in this long is closed. */
const PING_TIMEOUT_MS = 5_000;
/**
 * Stream ids are odd and below 2^31: a session carries about 1.07 billion requests, which a
 * busy webhook reaches in hours. A session that has carried this many is closed (its streams
 * finish) and the next request opens another.
 */
const STREAMS_PER_SESSION = 2 ** 29;

/** One open session, held by the process only while a request is in flight on it. */
export class TrackedSession {
  #inFlight = 0;
  #streams = 0;
  #pinging = false;
  /** The last stream id a GOAWAY said the server may process; undefined until one arrives. */
  #lastAccepted: number | undefined;

  constructor(
    readonly session: ClientHttp2Session,
    private readonly streamsPerSession: number,
    private readonly pingTimeoutMs: number,
    private readonly clock: Clock = systemClock,
  ) {
    session.unref();
    session.once('goaway', (_code: number, lastStreamId: number) => {
      this.#lastAccepted = lastStreamId;
    });
  }

  /** Node closes a session that receives GOAWAY (destroys it, for an error code): then unusable. */
  get usable(): boolean {
    return !this.session.closed && !this.session.destroyed;
  }

  /**
   * Whether the server never processed `stream` (RFC 9113 §8.7): it reset it with
   * REFUSED_STREAM, or a GOAWAY's last stream id is below it (a server going away, an
   * apiserver restarting gracefully). Only such a stream may be sent again; one the server may
   * have acted on never is.
   */
  refused(stream: ClientHttp2Stream): boolean {
    if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return true;
    return (
      this.#lastAccepted !== undefined && stream.id !== undefined && stream.id > this.#lastAccepted
    );
  }

  /** It has carried its share of streams: the route closes it and opens another. */
  get spent(): boolean {
    return this.#streams >= this.streamsPerSession;
  }

  /** A stream for one request, counted in flight until it closes. */
  request(headers: OutgoingHttpHeaders, endStream: boolean): ClientHttp2Stream {
    const stream = this.session.request(headers, { endStream });
    if (this.#inFlight++ === 0) this.session.ref();
    this.#streams++;
    stream.once('close', this.#streamClosed);
    return stream;
  }

  readonly #streamClosed = (): void => {
    if (--this.#inFlight === 0) this.session.unref();
  };

  /**
   * A request gave up waiting: if the connection itself is dead (the server gone without a
   * FIN), every later request would wait on it too. A PING tells; no answer closes it. A
   * property, so that every request passes the same function.
   */
  readonly checkAlive = (): void => {
    if (this.#pinging || !this.usable) return;
    this.#pinging = true;
    const cancel = this.clock.setTimer(this.pingTimeoutMs, () => this.session.destroy(), {
      keepAlive: false,
    });
    this.session.ping((error) => {
      this.#pinging = false;
      cancel();
      if (error) this.session.destroy();
    });
  };
}

export interface Http2RouteOptions {
  readonly connectTimeoutMs?: number;
  readonly streamsPerSession?: number;
  readonly pingTimeoutMs?: number;
  readonly clock?: Clock;
}

/** HTTP/2 to an https `server` with `material`, opened on first use and again after a loss. */
export function http2Route(
  server: URL,
  material: TlsMaterial,
  {
    connectTimeoutMs = CONNECT_TIMEOUT_MS,
    streamsPerSession = STREAMS_PER_SESSION,
    pingTimeoutMs = PING_TIMEOUT_MS,
    clock = systemClock,
  }: Http2RouteOptions = {},
): Http2Route {
  let current: TrackedSession | undefined;
  let opening: Promise<Http2Choice> | undefined;
  let http1Only = false;
  let closed = false;
  const open = (): Promise<Http2Choice> => {
    opening ??= negotiate(server, material, connectTimeoutMs)
      .then((socket) => {
        if (socket === undefined) {
          http1Only = true;
          return undefined;
        }
        if (closed) {
          socket.destroy();
          return undefined;
        }
        const session = http2.connect(server.origin, { createConnection: () => socket });
        // A lost session is forgotten; its streams fail with it, and the next request opens another.
        session.on('error', () => {});
        const opened = new TrackedSession(session, streamsPerSession, pingTimeoutMs, clock);
        current = opened;
        return opened;
      })
      .finally(() => {
        opening = undefined;
      });
    return opening;
  };
  return {
    session() {
      if (http1Only || closed) return undefined;
      if (current?.usable && !current.spent) return current;
      // Closing lets the streams in flight finish (after a GOAWAY: those the server accepted).
      current?.session.close();
      current = undefined;
      return open();
    },
    close() {
      closed = true;
      current?.session.close();
      current = undefined;
    },
  };
}

/** A TLS connection offering h2 and http/1.1; resolves undefined when the server chose the latter. */
function negotiate(
  server: URL,
  material: TlsMaterial,
  timeoutMs: number,
): Promise<TLSSocket | undefined> {
  const host = server.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve, reject) => {
    const options = clientTlsOptions(material);
    const socket = tls.connect({
      host,
      port: Number(server.port || 443),
      ...options,
      servername: options.servername ?? (isIP(host) === 0 ? host : undefined),
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`no TLS handshake with ${server.host} within ${timeoutMs} ms`)),
    );
    // Stays on: an error after the handshake, before the session takes the socket, is let go.
    socket.on('error', reject);
    socket.once('secureConnect', () => {
      socket.setTimeout(0);
      if (socket.alpnProtocol === 'h2') {
        resolve(socket);
      } else {
        socket.destroy();
        resolve(undefined);
      }
    });
  });
}
