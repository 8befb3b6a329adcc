// One HTTPS confighash on loopback for the files of the bounds of docs/design.md §4
// (test/integration/bounds*.test.ts), with the real adapter and the fake API (which injects
// the slowness that shows how many GETs are in flight), and how those files talk to it.
// Two files, so that their slowest rows — each waits out a timer of seconds — run side by side.

import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import {
  type CertificateAuthority,
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { startTestApp, type TestApp } from './app.js';
import { admissionReview, workload } from './workloads.js';

export interface Answer {
  status: number;
  body: string;
  ms: number;
}

export interface BoundsServer {
  readonly t: TestApp;
  readonly port: number;
  /** The CA the server's certificate is signed by (PEM). */
  readonly ca: string;
  /**
   * POSTs `body` on a connection of its own, from the loopback address `from`; a reset
   * after the answer started is not an error.
   */
  post(body: string | Buffer, from?: string): Promise<Answer>;
}

/** Starts the server before the file's tests and stops it after them; usable inside tests. */
export function useBoundsServer(): BoundsServer {
  let authority: CertificateAuthority | undefined;
  let t: TestApp | undefined;
  let port = 0;
  beforeAll(async () => {
    authority = await generateCertificateAuthority('bounds CA', 1);
    const serving = await generateServingCertificate(authority, ['127.0.0.1'], 1);
    t = await startTestApp({ tls: serving });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    t!.api.delayMs = 0;
    t!.api.maxInFlight = 0;
  });
  return {
    get t() {
      return t!;
    },
    get port() {
      return port;
    },
    get ca() {
      return authority!.cert;
    },
    post: (body, from = '127.0.0.1') => post(port, authority!.cert, body, from),
  };
}

function post(port: number, ca: string, body: string | Buffer, from: string): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mutate?timeout=5s',
        method: 'POST',
        ca,
        agent: false,
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            ms: Date.now() - started,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export function response(answer: Answer) {
  return (
    JSON.parse(answer.body) as {
      response: { allowed: boolean; patch?: string; warnings?: string[] };
    }
  ).response;
}

/** A valid review of exactly `bytes` bytes: a Deployment with one long annotation. */
export function reviewOfSize(bytes: number): Buffer {
  const shell = admissionReview({ object: workload({ annotations: { padding: '' } }) });
  const empty = Buffer.byteLength(JSON.stringify(shell));
  const object = workload({ annotations: { padding: 'x'.repeat(bytes - empty) } });
  const body = Buffer.from(JSON.stringify(admissionReview({ object })));
  expect(body.length).toBe(bytes);
  return body;
}
