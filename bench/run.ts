// `npm run bench [-- --quick] [--only=2,6] [--profile]`: what confighash costs a
// write, side by side with the floor, every figure a ratio measured in the same
// run (issue 6, BENCHMARKS.md). Writes bench/results/<timestamp>.json and .svg
// and prints the Markdown tables. All load goes to 127.0.0.1, bounded in time.

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { generateCertificateAuthority, generateServingCertificate } from '../src/certs/generate.js';
import { REPO_ROOT } from '../tools/cluster/repo.js';
import { buildProcesses } from './lib/build.js';
import { panelsOf, renderChart } from './lib/chart.js';
import { forkHelper } from './lib/children.js';
import { clusterScenarios } from './lib/cluster-scenarios.js';
import { type Context, FULL, log, parseOptions, QUICK, wants } from './lib/context.js';
import { hashingScenario } from './lib/hashing.js';
import { buildPeers } from './lib/peers.js';
import { type BenchReport, renderMarkdown, type Scenario } from './lib/report.js';
import { scaleScenario } from './lib/scale.js';
import { renderRssChart, rssSeries } from './lib/scale-chart.js';
import type { ScaleRow } from './lib/scale-report.js';
import { round } from './lib/stats.js';
import { peersRun, stubScenarios } from './lib/stub-scenarios.js';

// --- main -------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const plan = options.quick ? QUICK : FULL;
  const startedAt = new Date();
  const started = Date.now();
  const resultsDir = join(REPO_ROOT, 'bench/results');
  await mkdir(resultsDir, { recursive: true });
  log(`${options.quick ? 'quick' : 'full'} run; compiling src/ and bench/procs/`);
  await buildProcesses(log);
  const work = await mkdtemp(join(tmpdir(), 'confighash-bench-'));
  const authority = await generateCertificateAuthority('confighash bench CA', 1);
  const serving = await generateServingCertificate(authority, ['localhost', '127.0.0.1'], 1);
  await writeFile(join(work, 'tls.crt'), serving.cert);
  await writeFile(join(work, 'tls.key'), serving.key, { mode: 0o600 });
  const hashKeyFile = join(work, 'hash.key');
  await writeFile(hashKeyFile, randomBytes(32), { mode: 0o600 });
  if (options.peers) log('peers: building wave and Reloader (bench/build-peers.sh)');
  const peers = options.peers ? await buildPeers() : undefined;
  const loadgen = forkHelper('loadgen', join(work, 'loadgen.log'));
  const context: Context = {
    plan,
    options,
    work,
    certs: { ca: authority.cert, cert: serving.cert, key: serving.key },
    hashKeyFile,
    loadgen,
    resultsDir,
    peers,
    helpers: [],
    webhooks: [],
  };
  const scenarios: Scenario[] = [];
  try {
    if (wants(options, '1', '2', '5a', '5b', '7', '8', '9'))
      await stubScenarios(context, scenarios);
    if (wants(options, '6')) scenarios.push(await hashingScenario(context));
    if (wants(options, '3', '4', '5c')) await clusterScenarios(context, scenarios);
    if (peers && wants(options, 'peers')) scenarios.push(await peersRun(context, peers));
    if (options.only?.has('scale'))
      scenarios.push(await scaleScenario(context, options.scaleSizes));
  } finally {
    for (const webhook of context.webhooks) await webhook.stop();
    for (const helper of context.helpers) await helper.stop();
    await loadgen.stop();
    if (process.env.CONFIGHASH_BENCH_KEEP) log(`work directory kept: ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
  const order = ['1', '2', '3', '4', '5a', '5b', '5c', '6', '7', '8', '9', 'peers', 'scale'];
  scenarios.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  const stamp = startedAt
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const name = `${stamp}${options.quick ? '-quick' : ''}`;
  const scale = scenarios.find((s) => s.id === 'scale');
  const report: BenchReport = {
    meta: {
      startedAt: startedAt.toISOString(),
      durationS: round((Date.now() - started) / 1000, 1),
      mode: options.quick ? 'quick' : 'full',
      only: options.only ? [...options.only] : undefined,
      node: process.version,
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      memoryGiB: round(totalmem() / 1024 ** 3, 1),
      loadGenerator: 'autocannon 9.0.0 (separate process, keep-alive, pipelining 1)',
      plan,
      chart: `${name}.svg`,
      ...(scale ? { scaleChart: `${name}-scale.svg` } : {}),
    },
    scenarios,
  };
  await writeFile(join(resultsDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  const panels = panelsOf(report);
  if (panels.length > 0) {
    await writeFile(
      join(resultsDir, `${name}.svg`),
      renderChart(
        panels,
        `confighash latency distributions, ${report.meta.mode} run ${startedAt.toISOString().slice(0, 16)}Z (${report.meta.cores} cores, ${report.meta.node})`,
      ),
    );
  }
  if (scale) {
    await writeFile(
      join(resultsDir, `${name}-scale.svg`),
      renderRssChart(
        rssSeries(scale.details?.rows as ScaleRow[]),
        `RSS against cluster size, same objects, ${startedAt.toISOString().slice(0, 16)}Z (${report.meta.cores} cores)`,
      ),
    );
  }
  process.stdout.write(`${renderMarkdown(report)}\n`);
  log(
    `wrote bench/results/${name}.json${panels.length > 0 ? ` and ${name}.svg` : ''} in ${report.meta.durationS} s`,
  );
  const broken = scenarios.flatMap((s) =>
    s.targets.filter((t) => !t.holds).map((t) => `${s.id}: ${t.name}`),
  );
  if (broken.length > 0) log(`targets not held: ${broken.join('; ')}`);
}

main().catch((error: Error) => {
  process.stderr.write(`[bench] failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
