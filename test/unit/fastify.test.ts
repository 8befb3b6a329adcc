import { describe, expect, it } from 'vitest';
import { createFastify } from '../../src/server/fastify.js';

describe('createFastify', () => {
  it('serves a route without a schema', async () => {
    const app = createFastify({});
    app.post('/echo', async (request) => request.body);
    const response = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
    expect(response.json()).toEqual({ a: 1 });
    await app.close();
  });

  // Fastify's own compilers (ajv and its kin, 4 MB of resident memory) would compile this
  // schema; without them a schema is a clear error, never a silently unchecked body.
  it('refuses a route with a schema: no schema compiler is loaded', async () => {
    const app = createFastify({});
    app.post('/checked', { schema: { body: { type: 'object' } } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow("confighash's routes take no schemas");
    await app.close();
  });
});
