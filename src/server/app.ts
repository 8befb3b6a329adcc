// The Fastify application: routes and error handling. Never listens, reads the
// environment or touches files; main.ts does that and passes everything in.

import type { FastifyError, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Mutator } from '../admission/index.js';
import { limitBodiesInFlight } from './body-limits.js';
import { createFastify } from './fastify.js';
import {
  ARRIVAL_LIMIT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_BODY_BYTES,
  TIMEOUT_CHECK_INTERVAL_MS,
  TLS_HANDSHAKE_TIMEOUT_MS,
} from './limits.js';
import type { AdmissionMetrics } from './metrics.js';
import { addProbeRoutes, type Readiness } from './probes.js';
import { reviewHandler } from './review-route.js';
import { secureContextOptions } from './tls.js';

const ARRIVAL_OPTIONS = {
  headersTimeout: ARRIVAL_LIMIT_MS,
  connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
} as const;

export type { Readiness } from './probes.js';

export interface AppOptions {
  readonly mutator: Mutator;
  readonly metrics: AdmissionMetrics;
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Serving certificate and key; without them the app serves plain HTTP (inject tests). */
  readonly tls?: {
    readonly cert: Buffer | string;
    readonly key: Buffer | string;
    /**
     * --client-ca-file: a connection without a client certificate signed by this CA fails
     * its TLS handshake, before any HTTP (probes then use buildTlsProbeApp's port).
     */
    readonly clientCa?: Buffer | string;
  };
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { mutator, metrics, readiness, logger } = options;
  // Fastify gets no logger: it would make a child logger per request for lines
  // we never let it write. The routes log themselves, with the review's fields.
  const app = createFastify({
    bodyLimit: MAX_BODY_BYTES,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // A review that arrives while this replica stops is answered, never refused:
    // a 503 would fail open (drain.ts).
    return503OnClosing: false,
    ...arrivalLimited(options.tls),
  });

  // Only JSON is an AdmissionReview; anything else is 415, not a parse error.
  app.removeContentTypeParser('text/plain');

  limitBodiesInFlight(app);

  // An unready replica (starting, or stopping) asks each client not to reuse its
  // connection, so that the clients close them all, never racing a request (drain.ts).
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!readiness.isReady()) reply.header('connection', 'close');
    done(null, payload);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      logger.error({ method: request.method, url: request.url, err: error }, 'request failed');
      return reply.code(500).send({ error: 'internal error' });
    }
    if (request.url.startsWith('/mutate')) metrics.observeReview('invalid', 0, false);
    return reply.code(status).send({ error: oneLine(error.message) });
  });

  app.post<{ Querystring: { timeout?: string } }>(
    '/mutate',
    reviewHandler(mutator, metrics, logger),
  );

  addProbeRoutes(app, readiness, metrics.registry);
  return app;
}

/**
 * With --client-ca-file, the kubelet's probes and Prometheus, which present no client
 * certificate, are answered here instead: /healthz, /readyz and /metrics, over TLS with the
 * serving certificate, on a port of their own — never /mutate.
 */
export function buildTlsProbeApp(
  options: Pick<AppOptions, 'metrics' | 'readiness'> & {
    readonly tls: { readonly cert: Buffer | string; readonly key: Buffer | string };
  },
): FastifyInstance {
  // The same arrival limits as /mutate's port: this one answers anyone who can reach it too.
  const app = createFastify(arrivalLimited({ cert: options.tls.cert, key: options.tls.key }));
  addProbeRoutes(app, options.readiness, options.metrics.registry);
  return app;
}

/**
 * Fastify's and Node's options that hold a request to the arrival limits (Fastify's
 * default requestTimeout 0 turns Node's off): TLS when `tls` is given, else plain HTTP.
 */
function arrivalLimited(tls: AppOptions['tls']) {
  return {
    requestTimeout: ARRIVAL_LIMIT_MS,
    ...(tls
      ? {
          https: {
            ...httpsOptions(tls),
            handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
            ...ARRIVAL_OPTIONS,
          },
        }
      : { http: ARRIVAL_OPTIONS }),
  };
}

/** With a client CA, the handshake itself refuses a caller without its certificate. */
function httpsOptions(tls: NonNullable<AppOptions['tls']>) {
  return {
    ...secureContextOptions(tls),
    ...(tls.clientCa ? { requestCert: true, rejectUnauthorized: true } : {}),
  };
}

function oneLine(message: string): string {
  return message.split('\n', 1)[0] ?? 'bad request';
}
