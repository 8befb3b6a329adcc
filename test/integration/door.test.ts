// The door of every port (docs/design.md §4 "Bounds", docs/security.md "Slow bodies, huge bodies, thousands of sources"),
// on real listeners: the webhook's TLS port, the TLS probe port of --client-ca-file and the
// follower's plain-HTTP port. A body is read only by POST /mutate: any other method, any other
// path and every body on a probe port is answered 413 while most of its declared bytes are
// still unsent. One address holds at most its share of connections; headers past their bound
// are refused; a caller's `?timeout=30s` is cut to the registration's timeoutSeconds. Each
// refusal is counted by reason.

import net from 'node:net';
import tls from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { buildTlsProbeApp } from '../../src/server/app.js';
import {
  CONNECTIONS_PER_ADDRESS,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
} from '../../src/server/limits.js';
import { buildProbeApp } from '../../src/server/probes.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { loopbackAddress } from '../support/flood.js';
import { admissionReview } from '../support/workloads.js';

/** The registration's timeoutSeconds the webhook is started with here. */
const WEBHOOK_TIMEOUT_MS = 2_000;

let authority: CertificateAuthority;
let webhook: TestApp;
let tlsProbes: FastifyInstance;
let followProbes: FastifyInstance;
const followRegistry = new Registry();

interface Port {
  readonly name: string;
  readonly port: () => number;
  readonly tls: boolean;
  readonly registry: () => Registry;
}

const portOf = (app: FastifyInstance) => (app.server.address() as net.AddressInfo).port;

const PORTS: Port[] = [
  {
    name: 'the webhook port',
    port: () => portOf(webhook.app),
    tls: true,
    registry: () => webhook.metrics.registry,
  },
  {
    name: 'the TLS probe port',
    port: () => portOf(tlsProbes),
    tls: true,
    registry: () => webhook.metrics.registry,
  },
  {
    name: "the follower's port",
    port: () => portOf(followProbes),
    tls: false,
    registry: () => followRegistry,
  },
];

beforeAll(async () => {
  authority = await generateCertificateAuthority('door CA', 1);
  const serving = await generateServingCertificate(authority, ['127.0.0.1'], 1);
  webhook = await startTestApp({ tls: serving, reviewTimeoutMs: WEBHOOK_TIMEOUT_MS });
  await webhook.app.listen({ port: 0, host: '127.0.0.1' });
  tlsProbes = buildTlsProbeApp({
    metrics: webhook.metrics,
    readiness: { isReady: () => true },
    tls: serving,
  });
  await tlsProbes.listen({ port: 0, host: '127.0.0.1' });
  followProbes = buildProbeApp({ isReady: () => true }, followRegistry);
  await followProbes.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await Promise.all([tlsProbes?.close(), followProbes?.close(), webhook?.close()]);
});

/**
 * Connects to `port` from the loopback address `from`: each address is a client of its own to
 * the per-address bound. Resolves when a request can be written (after the TLS handshake).
 */
function connect(port: Port, from = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const raw = net.connect({ host: '127.0.0.1', port: port.port(), localAddress: from });
    const socket = port.tls
      ? tls.connect({ socket: raw, host: '127.0.0.1', ca: authority.cert })
      : raw;
    socket.once(port.tls ? 'secureConnect' : 'connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Sends `head` and then `sent` bytes of the body it declares, and resolves with the answer's
 * status code, or "closed" if the connection ends without one.
 */
async function ask(port: Port, head: string, sent = 0, from?: string): Promise<string> {
  const socket = await connect(port, from);
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const code = /^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1];
      if (code) {
        resolve(code);
        socket.destroy();
      }
    });
    socket.on('error', () => resolve('closed'));
    socket.once('close', () => resolve('closed'));
    socket.write(head + ' '.repeat(sent));
  });
}

/** A request line and headers declaring a body of `length` bytes. */
function declaring(method: string, path: string, length: number): string {
  return `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
}

async function refused(port: Port, reason: string): Promise<number> {
  const metric = await port.registry().getSingleMetric('confighash_requests_refused_total')?.get();
  return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

describe.each(PORTS)('$name', (port) => {
  const elsewhere = [
    ['PUT', '/mutate'],
    ['PATCH', '/mutate'],
    ['DELETE', '/mutate'],
    ['OPTIONS', '/mutate'],
    ['POST', '/no-such-path'],
    ['PUT', '/no-such-path'],
    ['GET', '/healthz'],
    ['GET', '/metrics'],
    ['QUERY', '/mutate'],
  ] as const;

  it.each(elsewhere)(
    'a %s %s declaring 7 MiB is answered 413 with 1 KiB of it sent',
    async (method, path) => {
      const before = await refused(port, 'body-not-read');
      expect(await ask(port, declaring(method, path, MAX_BODY_BYTES), 1024)).toBe('413');
      expect(await refused(port, 'body-not-read')).toBe(before + 1);
    },
  );

  it('a chunked body of unknown length is refused unread too', async () => {
    const head = `PUT /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n400\r\n`;
    expect(await ask(port, head, 1024)).toBe('413');
  });

  it('a request without a body is answered as before', async () => {
    expect(await ask(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')).toBe('200');
  });

  it(`headers past ${MAX_HEADER_BYTES} bytes are refused (431), and counted`, async () => {
    const before = await refused(port, 'headers-too-large');
    const head = `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`;
    expect(await ask(port, head)).toBe('431');
    expect(await refused(port, 'headers-too-large')).toBe(before + 1);
  });

  it(`one address holds at most ${CONNECTIONS_PER_ADDRESS} connections; another address still gets in`, async () => {
    const from = loopbackAddress(40);
    const before = await refused(port, 'connections-per-address');
    const held = await Promise.all(
      Array.from({ length: CONNECTIONS_PER_ADDRESS }, () => connect(port, from)),
    );
    try {
      expect(
        await ask(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n', 0, from).catch(
          () => 'closed',
        ),
      ).toBe('closed');
      expect(await refused(port, 'connections-per-address')).toBe(before + 1);
      const other = loopbackAddress(41);
      expect(await ask(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n', 0, other)).toBe(
        '200',
      );
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

describe('the webhook port', () => {
  const webhookPort = PORTS[0]!;

  it('still reads and answers a review POSTed to /mutate', async () => {
    const body = JSON.stringify(admissionReview());
    const head = declaring('POST', '/mutate?timeout=5s', Buffer.byteLength(body));
    const socket = await connect(webhookPort);
    const status = await new Promise<string>((resolve) => {
      socket.on('data', (chunk: Buffer) => resolve(chunk.toString('latin1').slice(9, 12)));
      socket.write(head + body);
    });
    socket.destroy();
    expect(status).toBe('200');
  });

  it(`a caller's ?timeout=30s is cut to the registration's ${WEBHOOK_TIMEOUT_MS} ms: lookups that never answer end within it`, {
    timeout: 15_000,
  }, async () => {
    webhook.api.delayMs = 60_000;
    try {
      const response = await webhook.app.inject({
        method: 'POST',
        url: '/mutate?timeout=30s',
        payload: admissionReview(),
      });
      expect(response.statusCode).toBe(200);
      expect(JSON.stringify(response.json().response.warnings)).toMatch(/time|deadline/i);
    } finally {
      webhook.api.delayMs = 0;
    }
  });
});
