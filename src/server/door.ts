// The door of every port of both processes (docs/design.md §4 "Bounds"): every Fastify
// instance that listens is made here, so that each arrival is held to the same limits
// before any route runs — connections in total and per client address, header bytes,
// the arrival deadline and the TLS handshake's, and one rule for bodies (body-limits.ts):
// a body is read only on a route that reads one, within the budget; any other is refused
// unread. Every refusal is counted, by reason.

import type { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { type Clock, systemClock } from '../runtime/index.js';
import { limitBodies } from './body-limits.js';
import { createFastify } from './fastify.js';
import {
  ARRIVAL_LIMIT_MS,
  CONNECTIONS_PER_ADDRESS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_BODY_BYTES,
  MAX_CONNECTIONS,
  MAX_HEADER_BYTES,
  TIMEOUT_CHECK_INTERVAL_MS,
  TLS_HANDSHAKE_TIMEOUT_MS,
} from './limits.js';
import { type CountRefusal, refusalCounter } from './refusals.js';
import { secureContextOptions } from './tls.js';

export interface TlsOptions {
  readonly cert: Buffer | string;
  readonly key: Buffer | string;
  /**
   * --client-ca-file: a connection without a client certificate signed by this CA fails
   * its TLS handshake, before any HTTP (probes then use a port of their own).
   */
  readonly clientCa?: Buffer | string;
}

interface DoorOptions {
  /** Without it the port serves plain HTTP (the follower's probes, inject tests). */
  readonly tls?: TlsOptions;
  /** `METHOD url` of the routes that read a body; a body anywhere else is refused unread (413). */
  readonly bodyRoutes?: readonly string[];
  /** Where the refusals are counted (confighash_requests_refused_total). */
  readonly registry: Registry;
  /** The timer that ends a wait for body budget (default the system clock). */
  readonly clock?: Clock;
}

/** A Fastify instance held to the door's limits; its routes are the caller's. */
export function openDoor(options: DoorOptions): FastifyInstance {
  const app = createFastify({
    // Never reached: a body larger than this is refused before Fastify reads it.
    bodyLimit: MAX_BODY_BYTES,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // Fastify's default requestTimeout 0 turns Node's off.
    requestTimeout: ARRIVAL_LIMIT_MS,
    // A request that arrives while this replica stops is answered, never refused: a 503
    // would fail a review open (drain.ts).
    return503OnClosing: false,
    ...serverOptions(options.tls),
  });
  // Only JSON is an AdmissionReview; anything else is 415, not a parse error.
  app.removeContentTypeParser('text/plain');
  const countRefusal = refusalCounter(options.registry);
  limitConnections(app.server, countRefusal);
  limitBodies(app, options.bodyRoutes ?? [], countRefusal, options.clock ?? systemClock);
  return app;
}

/** Node's options for the listener: TLS when `tls` is given, else plain HTTP. */
function serverOptions(tls: TlsOptions | undefined) {
  const arrival = {
    headersTimeout: ARRIVAL_LIMIT_MS,
    // Node checks those timeouts on a timer; limits.ts says why this often.
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    maxHeaderSize: MAX_HEADER_BYTES,
  };
  if (!tls) return { http: arrival };
  return {
    https: {
      ...secureContextOptions(tls),
      // With a client CA, the handshake itself refuses a caller without its certificate.
      ...(tls.clientCa ? { requestCert: true, rejectUnauthorized: true } : {}),
      handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
      ...arrival,
    },
  };
}

/**
 * At most MAX_CONNECTIONS open at once (Node drops the rest as they arrive) and
 * CONNECTIONS_PER_ADDRESS from one client address (closed before their TLS handshake), and
 * the listener's own refusals counted: handshakes, header sizes, arrival deadlines.
 */
function limitConnections(server: Server, countRefusal: CountRefusal): void {
  server.maxConnections = MAX_CONNECTIONS;
  server.on('drop', () => countRefusal('connections'));
  const perAddress = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const open = (perAddress.get(address) ?? 0) + 1;
    if (open > CONNECTIONS_PER_ADDRESS) {
      countRefusal('connections-per-address');
      socket.destroy();
      return;
    }
    perAddress.set(address, open);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  server.on('tlsClientError', () => countRefusal('tls-handshake'));
  server.on('clientError', (error: Error & { code?: string }) => {
    if (error.code === 'HPE_HEADER_OVERFLOW') countRefusal('headers-too-large');
    else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') countRefusal('arrival-timeout');
  });
}
