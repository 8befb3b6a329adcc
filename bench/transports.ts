// `npx tsx bench/transports.ts [--rounds=5] [--reviews=20000] [--concurrency=32]`:
// what a review's three GETs cost through each HTTP client Node.js offers —
// node:http (what confighash and floor (b) use), undici, node:http2 — each in a
// fresh process, runs alternating, medians. Why confighash stays on node:http:
// BENCHMARKS.md, issue 14 (CPU).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProcesses } from './lib/build.js';
import { forkHelper } from './lib/children.js';
import { median } from './lib/stats.js';
import type { Transport } from './procs/transport.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=', 2);
    return [name, value ?? ''] as const;
  }),
);
const rounds = Number(args.get('rounds') ?? 5);
const count = Number(args.get('reviews') ?? 20_000);
const concurrency = Number(args.get('concurrency') ?? 32);
const TRANSPORTS: readonly Transport[] = ['node:http', 'undici', 'node:http2'];

interface Run {
  readonly cpuUsPerReview: number;
  readonly reviewsPerS: number;
  readonly rssMb: number;
}

const log = (line: string) => process.stderr.write(`[transports] ${line}\n`);
await buildProcesses(log);
const work = await mkdtemp(join(tmpdir(), 'confighash-transports-'));
const server = forkHelper('transport', join(work, 'server.log'));
try {
  const ports = await server.call('serve');
  const runs = new Map<Transport, Run[]>(TRANSPORTS.map((t) => [t, []]));
  for (let round = 0; round < rounds; round++) {
    for (const transport of TRANSPORTS) {
      const client = forkHelper('transport', join(work, 'client.log'), {
        execArgv: ['--expose-gc'],
      });
      try {
        const run = await client.call<Run>('measure', { transport, ports, count, concurrency });
        runs.get(transport)!.push(run);
        log(
          `round ${round + 1} ${transport.padEnd(10)} ${run.cpuUsPerReview.toFixed(1)} µs CPU / review, ${run.reviewsPerS.toFixed(0)} reviews/s, RSS ${run.rssMb.toFixed(1)} MB`,
        );
      } finally {
        await client.stop();
      }
    }
  }
  process.stdout.write(
    `\n${count} reviews of 3 GETs, c=${concurrency}, ${rounds} rounds, medians:\n\n` +
      '| transport | CPU µs / review | reviews/s | RSS after use |\n|---|--:|--:|--:|\n',
  );
  for (const [transport, list] of runs) {
    const of = (pick: (run: Run) => number) => median(list.map(pick));
    process.stdout.write(
      `| ${transport} | ${of((r) => r.cpuUsPerReview).toFixed(1)} | ${of((r) => r.reviewsPerS).toFixed(0)} | ${of((r) => r.rssMb).toFixed(1)} MB |\n`,
    );
  }
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
