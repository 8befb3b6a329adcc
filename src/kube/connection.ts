// One long-lived connection to the API server, built from the cluster access
// @kubernetes/client-node resolves (credentials.ts). client-node 1.4 opens a new
// connection (a new TLS handshake) per request, so every request goes through this
// one instead: one-shot requests over HTTP/2 when the server speaks it (http2.ts),
// watches and the rest through a keep-alive HTTP/1.1 agent.
//
// The hot path reads no credentials: the headers of every request are built
// once per credential change, and a refresh happens in the background when one
// is due, or right after a 401 (then the request is sent once more).

import type { Agent } from 'node:http';
import https from 'node:https';
import { type Clock, systemClock } from '../runtime/index.js';
import { type ClusterAccess, childProcessResolver, type ResolveAccess } from './credentials.js';
import { type Http2Route, http2Route } from './http2.js';
import { http } from './node-http.js';
import { clientTlsOptions, tlsDiffers, tlsFingerprint } from './tls-options.js';

export interface ApiConnection {
  readonly server: URL;
  /** The server URL's path without a trailing slash: the prefix of every request path. */
  readonly basePath: string;
  /** The pool for the current TLS material (a new one if a refresh changed it). */
  readonly agent: Agent;
  /** One-shot requests' HTTP/2 route for the current TLS material; none for a plain-HTTP server. */
  readonly http2: Http2Route | undefined;
  /** Credentials plus `accept: application/json`: the headers of a GET, rebuilt only when they change. */
  readonly headers: Readonly<Record<string, string>>;
  /** Changes whenever the credentials do: what a request sent with, to tell whether a 401 is news. */
  readonly generation: number;
  /**
   * After a 401 to a request sent with `generation`: true when there are other
   * credentials to retry with (asking client-node again unless it was asked moments ago).
   */
  renewAfterUnauthorized(generation: number): Promise<boolean>;
  /** Told of every one-shot request once it is answered or fails (the CLI's -v 6); none in serve. */
  readonly onExchange?: ExchangeObserver;
  close(): void;
}

/** One request as `-v 6` logs it: no header, no body. */
export interface ExchangeRecord {
  readonly method: string;
  readonly url: string;
  /** 0 when no answer came (`error` says why). */
  readonly status: number;
  readonly durationMs: number;
  readonly error?: string;
}

export type ExchangeObserver = (record: ExchangeRecord) => void;

/** The cluster access shared by every connection of a process, refreshed in one place. */
export interface ClusterCredentials {
  /** The latest access; starts a background refresh when one is due. */
  current(): ClusterAccess;
  /** Counts the refreshes that changed something. */
  readonly generation: number;
  /** Asks client-node again now (one ask at a time; at most every RENEW_INTERVAL_MS after a 401). */
  renew(): Promise<void>;
}

/** A 401 asks again at most this often: a revoked credential must not start a process per request. */
const RENEW_INTERVAL_MS = 10_000;
/** In-flight requests of a replaced pool finish within the lookup deadline; then it closes. */
const RETIRED_POOL_LINGER_MS = 60_000;

export interface CredentialOptions {
  readonly resolve?: ResolveAccess;
  /** How soon after an ask a 401 may ask again (RENEW_INTERVAL_MS). */
  readonly renewIntervalMs?: number;
  /** A background refresh failed: the previous credentials stay in use and it is retried later. */
  readonly onRefreshError?: (error: Error) => void;
}

export async function loadCredentials({
  resolve = childProcessResolver(),
  renewIntervalMs = RENEW_INTERVAL_MS,
  onRefreshError = () => {},
}: CredentialOptions = {}): Promise<ClusterCredentials> {
  let access = await resolve();
  let generation = 0;
  let renewedAt = Date.now();
  let pending: Promise<void> | undefined;
  const renew = () => {
    pending ??= resolve()
      .then((next) => {
        if (fingerprint(next) !== fingerprint(access)) generation++;
        access = next;
      })
      .finally(() => {
        renewedAt = Date.now();
        pending = undefined;
      });
    return pending;
  };
  return {
    current() {
      if (access.refreshAt !== undefined && Date.now() >= access.refreshAt && !pending) {
        renew().catch((error: Error) => {
          access = { ...access, refreshAt: Date.now() + renewIntervalMs };
          onRefreshError(error);
        });
      }
      return access;
    },
    get generation() {
      return generation;
    },
    async renew() {
      if (pending) return pending;
      if (Date.now() - renewedAt < renewIntervalMs) return;
      return renew();
    },
  };
}

function fingerprint(access: ClusterAccess): string {
  return JSON.stringify([access.server.href, access.headers, tlsFingerprint(access.tls)]);
}

export interface ConnectionOptions {
  /** Upper bound on parallel sockets; idle ones stay open for reuse. */
  readonly maxSockets?: number;
  /** The timers of its connections: a retired pool's linger, an HTTP/2 session's PING. */
  readonly clock?: Clock;
  /** Sent with every request besides the credentials' (the CLI's --as: Impersonate-User). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly onExchange?: ExchangeObserver;
}

export function connectToCluster(
  credentials: ClusterCredentials,
  { maxSockets = 64, clock = systemClock, headers: extra = {}, onExchange }: ConnectionOptions = {},
): ApiConnection {
  let access = credentials.current();
  const server = access.server;
  let generation = credentials.generation;
  let agent = createAgent(access, maxSockets);
  let route = createHttp2Route(access, clock);
  let headers = requestHeaders(access, extra);
  // Switches to the latest access once it changes: new headers, new connections if the TLS material did.
  const adoptLatest = () => {
    const latest = credentials.current();
    if (latest === access) return;
    if (tlsDiffers(latest.tls, access.tls)) {
      const retired = { agent, route };
      const retire = () => {
        retired.agent.destroy();
        retired.route?.close();
      };
      clock.setTimer(RETIRED_POOL_LINGER_MS, retire, { keepAlive: false });
      agent = createAgent(latest, maxSockets);
      route = createHttp2Route(latest, clock);
    }
    headers = requestHeaders(latest, extra);
    generation = credentials.generation;
    access = latest;
  };
  return {
    server,
    basePath: server.pathname.replace(/\/$/, ''),
    get agent() {
      adoptLatest();
      return agent;
    },
    get http2() {
      adoptLatest();
      return route;
    },
    get headers() {
      adoptLatest();
      return headers;
    },
    get generation() {
      adoptLatest();
      return generation;
    },
    async renewAfterUnauthorized(sentWith) {
      adoptLatest();
      if (generation === sentWith) {
        await credentials.renew();
        adoptLatest();
      }
      return generation !== sentWith;
    },
    ...(onExchange ? { onExchange } : {}),
    close: () => {
      agent.destroy();
      route?.close();
    },
  };
}

function createHttp2Route(access: ClusterAccess, clock: Clock): Http2Route | undefined {
  return access.server.protocol === 'https:'
    ? http2Route(access.server, access.tls, { clock })
    : undefined;
}

function createAgent(access: ClusterAccess, maxSockets: number): Agent {
  const options = { keepAlive: true, maxSockets, scheduling: 'lifo' as const };
  if (access.server.protocol !== 'https:') return new http.Agent(options);
  return new https.Agent({ ...options, ...clientTlsOptions(access.tls) });
}

function requestHeaders(
  access: ClusterAccess,
  extra: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  return Object.freeze({ ...access.headers, ...extra, accept: 'application/json' });
}
