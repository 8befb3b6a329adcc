// `npx tsx bench/inprocess.ts --baseline=/tmp/old/dist [--rounds=4] [--reviews=20000]`:
// CPU per review of this build and a previous one (its compiled dist/), each
// measured inside its own process (bench/procs/inprocess.ts), runs alternating,
// medians and their ratio. For a machine too loaded for the end-to-end figures
// of scenario 2 to mean much (BENCHMARKS.md, issue 14).
//
// `npx tsx bench/inprocess.ts --parts [--rounds=8]`: this build taken apart
// (the PARTS of bench/procs/inprocess.ts), to show where a review's CPU goes.

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { BUILD_DIR, buildProcesses } from './lib/build.js';
import { forkHelper } from './lib/children.js';
import { PARTS, type Part } from './lib/inprocess-parts.js';
import { median } from './lib/stats.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=', 2);
    return [name, value ?? ''] as const;
  }),
);
const baseline = args.get('baseline');
const parts = args.has('parts');
if (!baseline && !parts) {
  throw new Error(
    'usage: bench/inprocess.ts --baseline=DIST_DIR | --parts [--rounds=N] [--reviews=N]',
  );
}
const rounds = Number(args.get('rounds') ?? 4);
const reviews = Number(args.get('reviews') ?? 20_000);

const log = (line: string) => process.stderr.write(`[inprocess] ${line}\n`);
await buildProcesses(log);
const work = await mkdtemp(join(tmpdir(), 'confighash-inprocess-'));
const stub = forkHelper('api-stub', join(work, 'api-stub.log'));
try {
  const { url } = await stub.call<{ url: string }>('listen');
  await stub.call('seed', { namespace: 'bench', count: 3, bytes: 1024, bump: false, unrelated: 0 });
  const kubeconfig = join(work, 'kubeconfig');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'stub', cluster: { server: url } }],
      users: [{ name: 'bench', user: { token: 'bench-token' } }],
      contexts: [{ name: 'stub', context: { cluster: 'stub', user: 'bench' } }],
      'current-context': 'stub',
    }),
  );
  const thisBuild = join(BUILD_DIR, 'src');
  const runs = baseline
    ? [
        { id: 'this build', root: thisBuild, part: 'confighash' as Part },
        { id: 'baseline', root: resolve(baseline), part: 'confighash' as Part },
      ]
    : PARTS.map((part) => ({ id: part, root: thisBuild, part }));
  const results = new Map<string, number[]>(runs.map((r) => [r.id, []]));
  for (let round = 0; round < rounds; round++) {
    for (const run of round % 2 === 0 ? runs : [...runs].reverse()) {
      const { stdout } = await promisify(execFile)(process.execPath, [
        join(BUILD_DIR, 'bench/procs/inprocess.js'),
        run.root,
        kubeconfig,
        String(reviews),
        run.part,
      ]);
      const { cpuUsPerReview } = JSON.parse(stdout) as { cpuUsPerReview: number };
      results.get(run.id)?.push(cpuUsPerReview);
      log(`${run.id}: ${cpuUsPerReview.toFixed(1)} µs CPU per review`);
    }
  }
  const medianOf = (id: string) => median(results.get(id) ?? []);
  if (baseline) {
    const [now, before] = [medianOf('this build'), medianOf('baseline')];
    process.stdout.write(
      `CPU per review, medians of ${rounds}: this build ${now.toFixed(1)} µs, baseline ${before.toFixed(1)} µs, ratio ${(now / before).toFixed(3)} ×\n`,
    );
  } else {
    process.stdout.write(`CPU µs per review, medians of ${rounds} (÷ floor-b):\n`);
    for (const { id } of runs) {
      const runsOf = (results.get(id) ?? []).map((us) => us.toFixed(0)).join(' ');
      process.stdout.write(
        `  ${id.padEnd(12)} ${medianOf(id).toFixed(1).padStart(7)}  ${(medianOf(id) / medianOf('floor-b')).toFixed(2)} ×  (${runsOf})\n`,
      );
    }
  }
} finally {
  await stub.stop();
  await rm(work, { recursive: true, force: true });
}
