// The bounds of docs/design.md §4 against bodies sent slowly, on a real HTTPS listener
// (test/support/bounds-server.ts): a client that trickles its body is cut off while other
// reviews are served; a flood of small trickled bodies from one address holds at most its
// bound, and other reviews stay on time. The other bounds: bounds.test.ts.

import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import {
  MAX_BODY_BYTES,
  REQUEST_ARRIVAL_MS,
  SMALL_BODY_BYTES,
  SMALL_BODY_BYTES_IN_FLIGHT,
  SMALL_BODY_BYTES_PER_ADDRESS,
} from '../../src/server/limits.js';
import { type Answer, useBoundsServer } from '../support/bounds-server.js';
import { startFlood } from '../support/flood.js';
import { admissionReview } from '../support/workloads.js';

const server = useBoundsServer();

describe('a client that trickles its body', () => {
  it(
    `is cut off within ${REQUEST_ARRIVAL_MS / 1000} s while other reviews are served`,
    async () => {
      const started = Date.now();
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: server.ca });
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
        others.push(await server.post(JSON.stringify(admissionReview())));
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

describe('a flood of small bodies from one address, declared to fill the small share, trickled', () => {
  const SMALL_REVIEWS = 100;
  const FLOOD_MS = 4_000;
  /** Enough of the largest small size to fill the whole small share, and two more. */
  const lengths = Array(SMALL_BODY_BYTES_IN_FLIGHT / SMALL_BODY_BYTES + 2).fill(SMALL_BODY_BYTES);
  const bound = SMALL_BODY_BYTES_PER_ADDRESS / SMALL_BODY_BYTES;

  it(`holds at most ${bound} of them; the rest are refused at once, and other reviews stay on time`, async () => {
    const flood = startFlood({ port: server.port, ca: server.ca }, [lengths], {
      oneAddress: true,
      connectionsEach: 1,
    });
    await flood.started;
    const small = JSON.stringify(admissionReview());
    const answers: Promise<Answer>[] = [];
    for (let i = 0; i < SMALL_REVIEWS; i++) {
      answers.push(server.post(small));
      await new Promise((resolve) => setTimeout(resolve, FLOOD_MS / SMALL_REVIEWS));
    }
    const late = (await Promise.all(answers)).filter((a) => a.status !== 200 || a.ms >= 1_000);
    const report = flood.stop();
    expect(late).toEqual([]);
    expect(report.ends['503']).toBe(lengths.length - bound);
  });
});
