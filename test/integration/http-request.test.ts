// The harness's one request helper (tools/cluster/http.ts) against a real listener:
// what the readiness probes, the benchmarks and the CLI test rely on.

import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpRequest } from '../../tools/cluster/http.js';

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === '/hang') return; // never answers
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      response.writeHead(request.url === '/missing' ? 404 : 200, { 'x-method': request.method });
      response.end(`${request.headers['content-type'] ?? ''}|${body}`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('resolves with the status, the headers and the whole body, whatever the status', async () => {
  const answer = await httpRequest(`${base}/missing`);
  expect(answer.status).toBe(404);
  expect(answer.headers['x-method']).toBe('GET');
  expect(answer.body).toBe('|');
});

it('sends the method, the headers and the body it is given', async () => {
  const answer = await httpRequest(`${base}/mutate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
  });
  expect(answer.status).toBe(200);
  expect(answer.headers['x-method']).toBe('POST');
  expect(answer.body).toBe('application/json|{"a":1}');
});

it('fails, naming the request, when no answer comes within the timeout', async () => {
  await expect(httpRequest(`${base}/hang`, { timeoutMs: 200 })).rejects.toThrow(
    `GET ${base}/hang: no answer in 0.2 s`,
  );
});
