// The bounds of docs/design.md §4 on a real HTTPS listener (test/support/bounds-server.ts):
// a template with 3,000 sources reads nothing; 256 sources read 256, 16 at a time; a burst
// of 7 MiB bodies is answered and the server survives, and what one address sends past its
// bound is refused at once; under a flood of trickled large bodies that fills the budget,
// every small review is answered within a second. Bodies sent slowly otherwise:
// bounds-trickled.test.ts. The RSS such a burst costs is measured by the bench (scenario 9),
// never asserted here.

import { describe, expect, it } from 'vitest';
import { MAX_LOOKUPS_PER_EVALUATION, MAX_SOURCES } from '../../src/evaluate/index.js';
import {
  LARGE_BODY_BYTES_IN_FLIGHT,
  LARGE_BODY_BYTES_PER_ADDRESS,
  MAX_BODY_BYTES,
  REQUEST_ARRIVAL_MS,
  SMALL_BODY_BYTES,
  SMALL_BODY_BYTES_IN_FLIGHT,
} from '../../src/server/limits.js';
import { type Answer, response, reviewOfSize, useBoundsServer } from '../support/bounds-server.js';
import { floodRounds, loopbackAddress, startFlood } from '../support/flood.js';
import { admissionReview, workload } from '../support/workloads.js';

const server = useBoundsServer();

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

describe('sources per template', () => {
  it(`3,000 sources: answered before the deadline with no GET, "too many sources"`, async () => {
    server.t.api.delayMs = 5;
    const before = server.t.api.requests.length;
    const answer = await server.post(reviewWithSources(3_000));
    expect(answer.status).toBe(200);
    expect(server.t.api.requests.length - before).toBe(0);
    expect(response(answer).allowed).toBe(true);
    expect(response(answer).patch).toBeUndefined();
    expect(response(answer).warnings).toEqual([
      `confighash: too many sources (3000, at most ${MAX_SOURCES}); none read, no hash written`,
    ]);
  });

  it(`${MAX_SOURCES} sources: ${MAX_SOURCES} GETs, never more than ${MAX_LOOKUPS_PER_EVALUATION} in flight`, async () => {
    server.t.api.delayMs = 5;
    const before = server.t.api.requests.length;
    const answer = await server.post(reviewWithSources(MAX_SOURCES));
    expect(answer.status).toBe(200);
    const gets = server.t.api.requests.slice(before);
    expect(gets.length).toBe(MAX_SOURCES);
    expect(new Set(gets).size).toBe(MAX_SOURCES);
    expect(server.t.api.maxInFlight).toBe(MAX_LOOKUPS_PER_EVALUATION);
    expect(response(answer).allowed).toBe(true);
  });
});

describe('a burst of 7 MiB bodies', () => {
  /** How many bodies of the largest size one address may hold or wait for. */
  const perAddress = Math.floor(LARGE_BODY_BYTES_PER_ADDRESS / MAX_BODY_BYTES);

  it('answers those within the limit from addresses within their bound, 413 above it, and keeps serving', async () => {
    const within = reviewOfSize(MAX_BODY_BYTES);
    const above = reviewOfSize(MAX_BODY_BYTES + 1);
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => server.post(within, loopbackAddress(i % 4))),
      ...Array.from({ length: 4 }, () => server.post(above)),
    ]);
    expect(answers.map((a) => a.status)).toEqual([...Array(8).fill(200), ...Array(4).fill(413)]);
    for (const answer of answers.slice(0, 8)) expect(response(answer).allowed).toBe(true);
    const after = await server.post(JSON.stringify(admissionReview()));
    expect(after.status).toBe(200);
    expect(response(after).patch).toBeDefined();
  });

  it(`from one address, those past its bound (${perAddress} of them) are refused at once with 503`, async () => {
    const within = reviewOfSize(MAX_BODY_BYTES);
    const answers = await Promise.all(
      Array.from({ length: perAddress + 2 }, () => server.post(within, loopbackAddress(0))),
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
      const flood = startFlood({ port: server.port, ca: server.ca }, rounds);
      await flood.started;
      // The large control: the flood does hold the budget for large bodies.
      const large = server.post(reviewOfSize(SMALL_BODY_BYTES * 4));
      const small = JSON.stringify(admissionReview());
      const answers: Promise<Answer>[] = [];
      for (let i = 0; i < SMALL_REVIEWS; i++) {
        answers.push(server.post(small));
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
