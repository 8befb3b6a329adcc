// The bounds of docs/design.md §4 on a real HTTPS listener, the real adapter and the
// fake API (it injects the slowness that shows how many GETs are in flight):
// a slow body is cut off while other reviews are served; a template with 3,000
// sources reads nothing; 256 sources read 256, 16 at a time; a burst of 7 MiB
// bodies is answered and the server survives, and what one address sends past its
// bound is refused at once; under a flood of trickled large bodies that fills the
// budget, every small review is answered within a second. The RSS such a burst
// costs is measured by the bench (scenario 9), never asserted here.

import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type CertificateAuthority,
  generateCertificateAuthority,
  generateServingCertificate,
} from '../../src/certs/generate.js';
import { MAX_LOOKUPS_PER_EVALUATION, MAX_SOURCES } from '../../src/evaluate/index.js';
import {
  LARGE_BODY_BYTES_IN_FLIGHT,
  LARGE_BODY_BYTES_PER_ADDRESS,
  MAX_BODY_BYTES,
  REQUEST_ARRIVAL_MS,
  SMALL_BODY_BYTES,
  SMALL_BODY_BYTES_IN_FLIGHT,
  SMALL_BODY_BYTES_PER_ADDRESS,
} from '../../src/server/limits.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { floodRounds, loopbackAddress, startFlood } from '../support/flood.js';
import { admissionReview, workload } from '../support/workloads.js';

let authority: CertificateAuthority;
let t: TestApp;
let port: number;

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
  t.api.delayMs = 0;
  t.api.maxInFlight = 0;
});

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/**
 * POSTs `body` on a connection of its own, from the loopback address `from`; a reset
 * after the answer started is not an error.
 */
function post(body: string | Buffer, from = '127.0.0.1'): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mutate?timeout=5s',
        method: 'POST',
        ca: authority.cert,
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

/** A review of a Deployment whose one container names `count` ConfigMaps by envFrom. */
function reviewWithSources(count: number): string {
  const podSpec = {
    containers: [
      {
        name: 'app',
        image: 'app:1',
        envFrom: Array.from({ length: count }, (_, i) => ({ configMapRef: { name: `cm-${i}` } })),
      },
    ],
  };
  return JSON.stringify(admissionReview({ object: workload({ podSpec }) }));
}

function response(answer: Answer) {
  return (
    JSON.parse(answer.body) as {
      response: { allowed: boolean; patch?: string; warnings?: string[] };
    }
  ).response;
}

describe('a client that trickles its body', () => {
  it(
    `is cut off within ${REQUEST_ARRIVAL_MS / 1000} s while other reviews are served`,
    async () => {
      const started = Date.now();
      const socket = tls.connect({ host: '127.0.0.1', port, ca: authority.cert });
      await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
      socket.write(
        `POST /mutate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${MAX_BODY_BYTES - 1}\r\n\r\n{`,
      );
      const trickle = setInterval(() => socket.write(' '), 200);
      let answered = '';
      socket.on('data', (chunk: Buffer) => {
        answered += chunk.toString();
      });
      const closed = new Promise<number>((resolve) =>
        socket.once('close', () => resolve(Date.now() - started)),
      );
      socket.on('error', () => {});
      // Meanwhile, reviews come and go as usual.
      const others: Answer[] = [];
      while (Date.now() - started < REQUEST_ARRIVAL_MS - 2_000) {
        others.push(await post(JSON.stringify(admissionReview())));
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      // Given up at 5 s past the limit: without the bound, the trickle would go on for ever.
      const elapsed = await Promise.race([
        closed,
        new Promise<number>((resolve) => setTimeout(() => resolve(-1), REQUEST_ARRIVAL_MS + 5_000)),
      ]);
      clearInterval(trickle);
      socket.destroy();
      expect(elapsed).toBeGreaterThan(0);
      // The limit plus what a loaded machine's timers may add; the bench is where speed is measured.
      expect(elapsed).toBeLessThan(REQUEST_ARRIVAL_MS + 1_000);
      expect(answered).toMatch(/^HTTP\/1\.1 408 /);
      expect(others.length).toBeGreaterThan(5);
      for (const other of others) expect(other.status).toBe(200);
    },
    REQUEST_ARRIVAL_MS + 15_000,
  );
});

describe('sources per template', () => {
  it(`3,000 sources: answered before the deadline with no GET, "too many sources"`, async () => {
    t.api.delayMs = 5;
    const before = t.api.requests.length;
    const answer = await post(reviewWithSources(3_000));
    expect(answer.status).toBe(200);
    expect(t.api.requests.length - before).toBe(0);
    expect(response(answer).allowed).toBe(true);
    expect(response(answer).patch).toBeUndefined();
    expect(response(answer).warnings).toEqual([
      `confighash: too many sources (3000, at most ${MAX_SOURCES}); none read, no hash written`,
    ]);
  });

  it(`${MAX_SOURCES} sources: ${MAX_SOURCES} GETs, never more than ${MAX_LOOKUPS_PER_EVALUATION} in flight`, async () => {
    t.api.delayMs = 5;
    const before = t.api.requests.length;
    const answer = await post(reviewWithSources(MAX_SOURCES));
    expect(answer.status).toBe(200);
    const gets = t.api.requests.slice(before);
    expect(gets.length).toBe(MAX_SOURCES);
    expect(new Set(gets).size).toBe(MAX_SOURCES);
    expect(t.api.maxInFlight).toBe(MAX_LOOKUPS_PER_EVALUATION);
    expect(response(answer).allowed).toBe(true);
  });
});

/** A valid review of exactly `bytes` bytes: a Deployment with one long annotation. */
function reviewOfSize(bytes: number): Buffer {
  const shell = admissionReview({ object: workload({ annotations: { padding: '' } }) });
  const empty = Buffer.byteLength(JSON.stringify(shell));
  const object = workload({ annotations: { padding: 'x'.repeat(bytes - empty) } });
  const body = Buffer.from(JSON.stringify(admissionReview({ object })));
  expect(body.length).toBe(bytes);
  return body;
}

describe('a burst of 7 MiB bodies', () => {
  /** How many bodies of the largest size one address may hold or wait for. */
  const perAddress = Math.floor(LARGE_BODY_BYTES_PER_ADDRESS / MAX_BODY_BYTES);

  it('answers those within the limit from addresses within their bound, 413 above it, and keeps serving', async () => {
    const within = reviewOfSize(MAX_BODY_BYTES);
    const above = reviewOfSize(MAX_BODY_BYTES + 1);
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => post(within, loopbackAddress(i % 4))),
      ...Array.from({ length: 4 }, () => post(above)),
    ]);
    expect(answers.map((a) => a.status)).toEqual([...Array(8).fill(200), ...Array(4).fill(413)]);
    for (const answer of answers.slice(0, 8)) expect(response(answer).allowed).toBe(true);
    const after = await post(JSON.stringify(admissionReview()));
    expect(after.status).toBe(200);
    expect(response(after).patch).toBeDefined();
  });

  it(`from one address, those past its bound (${perAddress} of them) are refused at once with 503`, async () => {
    const within = reviewOfSize(MAX_BODY_BYTES);
    const answers = await Promise.all(
      Array.from({ length: perAddress + 2 }, () => post(within, loopbackAddress(0))),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(perAddress).fill(200), 503, 503]);
    const refused = answers.filter((a) => a.status === 503);
    for (const answer of refused) {
      expect(JSON.parse(answer.body)).toEqual({ error: 'too many large bodies from this address' });
    }
    // Not queued: answered before any body let in has been read and reviewed.
    const admitted = answers.filter((a) => a.status === 200);
    expect(Math.max(...refused.map((a) => a.ms))).toBeLessThan(
      Math.min(...admitted.map((a) => a.ms)),
    );
  });
});

describe('a flood of small bodies from one address, declared to fill the small share, trickled', () => {
  const SMALL_REVIEWS = 100;
  const FLOOD_MS = 4_000;
  /** Enough of the largest small size to fill the whole small share, and two more. */
  const lengths = Array(SMALL_BODY_BYTES_IN_FLIGHT / SMALL_BODY_BYTES + 2).fill(SMALL_BODY_BYTES);
  const bound = SMALL_BODY_BYTES_PER_ADDRESS / SMALL_BODY_BYTES;

  it(`holds at most ${bound} of them; the rest are refused at once, and other reviews stay on time`, async () => {
    const flood = startFlood({ port, ca: authority.cert }, [lengths], {
      oneAddress: true,
      connectionsEach: 1,
    });
    await flood.started;
    const small = JSON.stringify(admissionReview());
    const answers: Promise<Answer>[] = [];
    for (let i = 0; i < SMALL_REVIEWS; i++) {
      answers.push(post(small));
      await new Promise((resolve) => setTimeout(resolve, FLOOD_MS / SMALL_REVIEWS));
    }
    const late = (await Promise.all(answers)).filter((a) => a.status !== 200 || a.ms >= 1_000);
    const report = flood.stop();
    expect(late).toEqual([]);
    expect(report.ends['503']).toBe(lengths.length - bound);
  });
});

describe('a flood of large bodies declared to fill the budget, trickled, back when cut', () => {
  const SMALL_REVIEWS = 200;
  /** Past the first cut (the arrival limit) and the reconnections after it. */
  const FLOOD_MS = REQUEST_ARRIVAL_MS + 2_000;
  /**
   * The large share filled exactly, then the rest of the whole budget (what one pool for
   * every size would hold), then waiters: whichever way the budget were split, it is full.
   */
  const rounds = floodRounds(
    [LARGE_BODY_BYTES_IN_FLIGHT, SMALL_BODY_BYTES_IN_FLIGHT],
    MAX_BODY_BYTES,
    SMALL_BODY_BYTES,
  );
  const connections = rounds.flat().length;

  it(
    `each of ${SMALL_REVIEWS} small reviews is answered within 1 s; a large one meanwhile waits`,
    async () => {
      const flood = startFlood({ port, ca: authority.cert }, rounds);
      await flood.started;
      // The large control: the flood does hold the budget for large bodies.
      const large = post(reviewOfSize(SMALL_BODY_BYTES * 4));
      const small = JSON.stringify(admissionReview());
      const answers: Promise<Answer>[] = [];
      for (let i = 0; i < SMALL_REVIEWS; i++) {
        answers.push(post(small));
        await new Promise((resolve) => setTimeout(resolve, FLOOD_MS / SMALL_REVIEWS));
      }
      const smallAnswers = await Promise.all(answers);
      const report = flood.stop();
      const control = await large;

      const late = smallAnswers
        .map((answer, i) => ({ i, status: answer.status, ms: answer.ms }))
        .filter((answer) => answer.status !== 200 || answer.ms >= 1_000);
      expect(late).toEqual([]);
      expect(control.status !== 200 || control.ms >= 1_000).toBe(true);
      // Every connection of the flood was cut off (408, or 503 for a wait given up) and came back.
      const cuts = (report.ends['408'] ?? 0) + (report.ends['503'] ?? 0);
      expect(cuts).toBeGreaterThanOrEqual(connections);
      expect(report.connections).toBeGreaterThan(connections);
    },
    FLOOD_MS + 30_000,
  );
});
