// `npx tsx bench/inprocess.ts --baseline=/tmp/old/dist [--rounds=4] [--reviews=20000]`:
// CPU per review of this build and a previous one (its compiled dist/), each
// measured inside its own process (bench/procs/inprocess.ts), runs alternating,
// medians and their ratio. For a machine too loaded for the end-to-end figures
// of scenario 2 to mean much (BENCHMARKS.md, issue 14).

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { BUILD_DIR, buildProcesses } from './lib/build.js';
import { forkHelper } from './lib/children.js';
import { median } from './lib/stats.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=', 2);
    return [name, value ?? ''] as const;
  }),
);
const baseline = args.get('baseline');
if (!baseline)
  throw new Error('usage: bench/inprocess.ts --baseline=DIST_DIR [--rounds=N] [--reviews=N]');
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
  const builds = [
    { id: 'this build', root: join(BUILD_DIR, 'src') },
    { id: 'baseline', root: resolve(baseline) },
  ];
  const results = new Map<string, number[]>(builds.map((b) => [b.id, []]));
  for (let round = 0; round < rounds; round++) {
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const { stdout } = await promisify(execFile)(process.execPath, [
        join(BUILD_DIR, 'bench/procs/inprocess.js'),
        build.root,
        kubeconfig,
        String(reviews),
      ]);
      const { cpuUsPerReview } = JSON.parse(stdout) as { cpuUsPerReview: number };
      results.get(build.id)?.push(cpuUsPerReview);
      log(`${build.id}: ${cpuUsPerReview.toFixed(1)} µs CPU per review`);
    }
  }
  const [now, before] = builds.map((b) => median(results.get(b.id) ?? []));
  process.stdout.write(
    `CPU per review, medians of ${rounds}: this build ${now!.toFixed(1)} µs, baseline ${before!.toFixed(1)} µs, ratio ${(now! / before!).toFixed(3)} ×\n`,
  );
} finally {
  await stub.stop();
  await rm(work, { recursive: true, force: true });
}
