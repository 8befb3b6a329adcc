// `npx tsx bench/transports.ts [--rounds=5] [--reviews=20000] [--concurrency=32]`:
// what a review's three GETs cost through each HTTP client Node.js offers —
// node:http (floor (b)), undici, node:http2 (confighash and floor (c), when the server speaks
// h2) — each in a fresh process, runs alternating, medians; over plain HTTP (HTTP/1.1 and h2c)
// and over TLS (the server offering h2 and http/1.1, as kube-apiserver does). Why confighash
// reads over HTTP/2: BENCHMARKS.md, "The transports, plain and over TLS". Writes bench/results/transports-<timestamp>.json.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificateAuthority, generateServingCertificate } from '../src/certs/generate.js';
import { REPO_ROOT } from '../tools/cluster/repo.js';
import { buildProcesses } from './lib/build.js';
import { forkHelper, type Helper } from './lib/children.js';
import { median } from './lib/stats.js';
import type { Ports, Transport } from './procs/transport.js';

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
const LINKS = ['plain', 'TLS'] as const;
type Link = (typeof LINKS)[number];

interface Run {
  readonly cpuUsPerReview: number;
  readonly reviewsPerS: number;
  readonly rssMb: number;
}

const log = (line: string) => process.stderr.write(`[transports] ${line}\n`);

/** One transport over one link, in a fresh client process. */
async function measureOnce(
  work: string,
  transport: Transport,
  server: { readonly ports: Ports; readonly ca?: string },
): Promise<Run> {
  const client = forkHelper('transport', join(work, 'client.log'), { execArgv: ['--expose-gc'] });
  try {
    return await client.call<Run>('measure', { transport, server, count, concurrency });
  } finally {
    await client.stop();
  }
}

/** Every transport over every link, `rounds` times, alternating. */
async function measureAll(work: string, ports: Ports, ca: string): Promise<Map<string, Run[]>> {
  const runs = new Map<string, Run[]>();
  for (let round = 0; round < rounds; round++) {
    for (const link of LINKS) {
      for (const transport of TRANSPORTS) {
        const run = await measureOnce(work, transport, link === 'TLS' ? { ports, ca } : { ports });
        const key = `${link} ${transport}`;
        runs.set(key, [...(runs.get(key) ?? []), run]);
        log(
          `round ${round + 1} ${link.padEnd(5)} ${transport.padEnd(10)} ${run.cpuUsPerReview.toFixed(1)} µs CPU / review, ${run.reviewsPerS.toFixed(0)} reviews/s, RSS ${run.rssMb.toFixed(1)} MB`,
        );
      }
    }
  }
  return runs;
}

/** Every run and the medians, as bench/results/transports-<timestamp>.json. */
async function writeResult(runs: ReadonlyMap<string, Run[]>, startedAt: Date): Promise<string> {
  const name = `transports-${startedAt
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z')}.json`;
  const medians = Object.fromEntries(
    [...runs].map(([key, list]) => [
      key,
      {
        cpuUsPerReview: median(list.map((r) => r.cpuUsPerReview)),
        reviewsPerS: median(list.map((r) => r.reviewsPerS)),
        rssMb: median(list.map((r) => r.rssMb)),
      },
    ]),
  );
  const report = {
    meta: { startedAt: startedAt.toISOString(), node: process.version, rounds, count, concurrency },
    medians,
    runs: Object.fromEntries(runs),
  };
  await writeFile(join(REPO_ROOT, 'bench/results', name), `${JSON.stringify(report, null, 2)}\n`);
  return name;
}

function printTable(runs: ReadonlyMap<string, Run[]>): void {
  process.stdout.write(
    `\n${count} reviews of 3 GETs, c=${concurrency}, ${rounds} rounds, medians:\n\n` +
      '| link | transport | CPU µs / review | reviews/s | RSS after use |\n|---|---|--:|--:|--:|\n',
  );
  for (const [key, list] of runs) {
    const [link, transport] = key.split(' ') as [Link, Transport];
    const of = (pick: (run: Run) => number) => median(list.map(pick));
    process.stdout.write(
      `| ${link} | ${transport} | ${of((r) => r.cpuUsPerReview).toFixed(1)} | ${of((r) => r.reviewsPerS).toFixed(0)} | ${of((r) => r.rssMb).toFixed(1)} MB |\n`,
    );
  }
}

await buildProcesses(log);
const work = await mkdtemp(join(tmpdir(), 'confighash-transports-'));
const authority = await generateCertificateAuthority('confighash transports CA', 1);
const serving = await generateServingCertificate(authority, ['localhost', '127.0.0.1'], 1);
const server: Helper = forkHelper('transport', join(work, 'server.log'));
try {
  const ports = await server.call<Ports>('serve', {
    tls: { cert: serving.cert, key: serving.key },
  });
  const startedAt = new Date();
  const runs = await measureAll(work, ports, authority.cert);
  printTable(runs);
  log(`wrote bench/results/${await writeResult(runs, startedAt)}`);
} finally {
  await server.stop();
  await rm(work, { recursive: true, force: true });
}
