// The Fastify application: routes and error handling. Never listens, reads the
// environment or touches files; main.ts does that and passes everything in.

import type { FastifyError, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type Mutator, WEBHOOK_TIMEOUT_MS } from '../admission/index.js';
import type { AdmissionMetrics } from './admission-metrics.js';
import { openDoor, type TlsOptions } from './door.js';
import { addProbeRoutes, type Readiness } from './probes.js';
import { reviewHandler } from './review-route.js';

export type { Readiness } from './probes.js';

/** The one route that reads a body: every other body, on any port, is refused unread. */
const REVIEW_ROUTE = 'POST /mutate';

interface AppOptions {
  readonly mutator: Mutator;
  readonly metrics: AdmissionMetrics;
  readonly logger: Logger;
  readonly readiness: Readiness;
  /** Serving certificate and key; without them the app serves plain HTTP (inject tests). */
  readonly tls?: TlsOptions;
  /**
   * --webhook-timeout, the registration's timeoutSeconds (default WEBHOOK_TIMEOUT_MS): no
   * review runs longer, whatever the `?timeout=` of whoever POSTed it.
   */
  readonly reviewTimeoutMs?: number;
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { mutator, metrics, readiness, logger } = options;
  // Fastify gets no logger: it would make a child logger per request for lines
  // we never let it write. The routes log themselves, with the review's fields.
  const app = openDoor({
    ...(options.tls ? { tls: options.tls } : {}),
    bodyRoutes: [REVIEW_ROUTE],
    registry: metrics.registry,
  });

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
    reviewHandler(mutator, metrics, logger, options.reviewTimeoutMs ?? WEBHOOK_TIMEOUT_MS),
  );

  addProbeRoutes(app, readiness, metrics.registry);
  return app;
}

/**
 * With --client-ca-file, the kubelet's probes and Prometheus, which present no client
 * certificate, are answered here instead: /healthz, /readyz and /metrics, over TLS with the
 * serving certificate, on a port of their own — never /mutate. It answers anyone who can
 * reach it, so the same door holds it: it reads no body at all.
 */
export function buildTlsProbeApp(
  options: Pick<AppOptions, 'metrics' | 'readiness'> & {
    readonly tls: { readonly cert: Buffer | string; readonly key: Buffer | string };
  },
): FastifyInstance {
  const { cert, key } = options.tls;
  const app = openDoor({ tls: { cert, key }, registry: options.metrics.registry });
  addProbeRoutes(app, options.readiness, options.metrics.registry);
  return app;
}

function oneLine(message: string): string {
  return message.split('\n', 1)[0] ?? 'bad request';
}
