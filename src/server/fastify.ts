// Every Fastify instance of confighash is made here: without Fastify's schema compilers. No
// route has a schema (admission/decode.ts checks a review itself), and Fastify's default
// compilers load ajv and its kin when an instance is made: 4 MB of resident memory in a bare
// process on the image's Node.

import type { ServerOptions as HttpsServerOptions } from 'node:https';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';

type ServerOptions = Omit<FastifyServerOptions, 'schemaController'> & {
  readonly https?: HttpsServerOptions | null;
};

export function createFastify(options: ServerOptions): FastifyInstance {
  return Fastify({
    ...options,
    schemaController: {
      compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas },
    },
  } as FastifyServerOptions) as unknown as FastifyInstance;
}

function noSchemas(): never {
  throw new Error(
    "confighash's routes take no schemas: a route checks its own input (admission/decode.ts)",
  );
}
