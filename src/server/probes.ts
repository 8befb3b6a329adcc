// /healthz, /readyz and /metrics: the routes every process of confighash serves,
// the webhook beside /mutate (app.ts), `confighash follow` alone on plain HTTP.

import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { openDoor } from './door.js';

export interface Readiness {
  isReady(): boolean;
}

export function addProbeRoutes(
  app: FastifyInstance,
  readiness: Readiness,
  registry: Registry,
): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) =>
    readiness.isReady() ? { status: 'ready' } : reply.code(503).send({ status: 'not ready' }),
  );
  app.get('/metrics', async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}

/**
 * `confighash follow`'s listener: the probes and Prometheus, nothing else. Plain HTTP:
 * it answers no one's request with anything secret (metric names and counts only). Anyone
 * who reaches the pod reaches it, so it is held to the same door as the webhook's ports: it
 * reads no body at all.
 */
export function buildProbeApp(readiness: Readiness, registry: Registry): FastifyInstance {
  const app = openDoor({ registry });
  addProbeRoutes(app, readiness, registry);
  return app;
}
