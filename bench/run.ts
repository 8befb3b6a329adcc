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
import { serveContainer } from './lib/container.js';
import {
  type Context,
  FULL,
  log,
  type Options,
  parseOptions,
  QUICK,
  wants,
} from './lib/context.js';
import { hashingScenario } from './lib/hashing.js';
import { buildPeers } from './lib/peers.js';
import { ratioScenario } from './lib/ratio-run.js';
import { type BenchReport, renderMarkdown, type Scenario } from './lib/report.js';
import { scaleScenario } from './lib/scale.js';
import { renderRssChart, rssSeries } from './lib/scale-chart.js';
import type { ScaleRow } from './lib/scale-report.js';
import { round } from './lib/stats.js';
import { peersRun, stubScenarios } from './lib/stub-scenarios.js';

// --- main -------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = new Date();
  const started = Date.now();
  const context = await prepareContext(options);
  const scenarios = await runScenarios(context);
  const name = `${fileStamp(startedAt)}${options.quick ? '-quick' : ''}`;
  const report = reportOf(context, scenarios, { startedAt, started, name });
  const charted = await writeResults(context.resultsDir, name, report, startedAt);
  printSummary(report, name, charted);
}

/** Compiles the processes, writes the webhook's keys to a fresh work directory, forks loadgen. */
async function prepareContext(options: Options): Promise<Context> {
  const resultsDir = join(REPO_ROOT, 'bench/results');
  await mkdir(resultsDir, { recursive: true });
  log(`${options.quick ? 'quick' : 'full'} run; compiling src/ and bench/procs/`);
  await buildProcesses(log);
  const work = await mkdtemp(join(tmpdir(), 'confighash-bench-'));
  const { certs, hashKeyFile } = await writeServingKeys(work);
  if (options.peers) log('peers: building wave and Reloader (bench/build-peers.sh)');
  const peers = options.peers ? await buildPeers() : undefined;
  const loadgen = forkHelper('loadgen', join(work, 'loadgen.log'));
  return {
    plan: options.quick ? QUICK : FULL,
    options,
    work,
    certs,
    hashKeyFile,
    serve: await serveContainer(),
    loadgen,
    resultsDir,
    peers,
    helpers: [],
    webhooks: [],
  };
}

/** The serving certificate and hash key, as files in `work`, as `confighash serve` reads them. */
async function writeServingKeys(
  work: string,
): Promise<{ readonly certs: Context['certs']; readonly hashKeyFile: string }> {
  const authority = await generateCertificateAuthority('confighash bench CA', 1);
  const serving = await generateServingCertificate(authority, ['localhost', '127.0.0.1'], 1);
  await writeFile(join(work, 'tls.crt'), serving.cert);
  await writeFile(join(work, 'tls.key'), serving.key, { mode: 0o600 });
  const hashKeyFile = join(work, 'hash.key');
  await writeFile(hashKeyFile, randomBytes(32), { mode: 0o600 });
  return { certs: { ca: authority.cert, cert: serving.cert, key: serving.key }, hashKeyFile };
}

const SCENARIO_ORDER = [
  '1',
  '2',
  'ratio',
  '3',
  '4',
  '5a',
  '5b',
  '5c',
  '6',
  '7',
  '8',
  '9',
  'peers',
  'scale',
];

/** The scenarios asked for, in table order; every child process is stopped however they end. */
async function runScenarios(context: Context): Promise<Scenario[]> {
  const { options, peers } = context;
  const scenarios: Scenario[] = [];
  try {
    if (wants(options, '1', '2', '5a', '5b', '7', '8', '9'))
      await stubScenarios(context, scenarios);
    if (options.only?.has('ratio')) scenarios.push(await ratioScenario(context));
    if (wants(options, '6')) scenarios.push(await hashingScenario(context));
    if (wants(options, '3', '4', '5c')) await clusterScenarios(context, scenarios);
    if (peers && wants(options, 'peers')) scenarios.push(await peersRun(context, peers));
    if (options.only?.has('scale'))
      scenarios.push(await scaleScenario(context, options.scaleSizes));
  } finally {
    await stopAndCleanUp(context);
  }
  scenarios.sort((a, b) => SCENARIO_ORDER.indexOf(a.id) - SCENARIO_ORDER.indexOf(b.id));
  return scenarios;
}

async function stopAndCleanUp(context: Context): Promise<void> {
  for (const webhook of context.webhooks) await webhook.stop();
  for (const helper of context.helpers) await helper.stop();
  await context.loadgen.stop();
  if (process.env.CONFIGHASH_BENCH_KEEP) log(`work directory kept: ${context.work}`);
  else await rm(context.work, { recursive: true, force: true });
}

/** `2026-12-01T13:25:27.123Z` → `2026-12-01T13-25-27Z`: a file name on every system. */
function fileStamp(startedAt: Date): string {
  return startedAt
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
}

const scaleIn = (scenarios: readonly Scenario[]) => scenarios.find((s) => s.id === 'scale');

function reportOf(
  context: Context,
  scenarios: Scenario[],
  run: { readonly startedAt: Date; readonly started: number; readonly name: string },
): BenchReport {
  const { options, plan } = context;
  const { startedAt, started, name } = run;
  return {
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
      ...experimentOf(process.env),
      ...(scaleIn(scenarios) ? { scaleChart: `${name}-scale.svg` } : {}),
    },
    scenarios,
  };
}

/** The experiment variables a run was given, so that its result file says what it varied. */
function experimentOf(env: NodeJS.ProcessEnv): { experiment?: Record<string, string> } {
  const names = ['CONFIGHASH_BENCH_WEBHOOK_FLAGS', 'CONFIGHASH_BENCH_CONTAINER_ENV'];
  const set = names.filter((name) => env[name]).map((name) => [name, env[name]!] as const);
  return set.length > 0 ? { experiment: Object.fromEntries(set) } : {};
}

/**
 * NAME.json, NAME.svg (when any scenario has latency panels) and NAME-scale.svg (after
 * scale); whether NAME.svg was written.
 */
async function writeResults(
  resultsDir: string,
  name: string,
  report: BenchReport,
  startedAt: Date,
): Promise<boolean> {
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
  const scale = scaleIn(report.scenarios);
  if (scale) {
    await writeFile(
      join(resultsDir, `${name}-scale.svg`),
      renderRssChart(
        rssSeries(scale.details?.rows as ScaleRow[]),
        `RSS against cluster size, same objects, ${startedAt.toISOString().slice(0, 16)}Z (${report.meta.cores} cores)`,
      ),
    );
  }
  return panels.length > 0;
}

/** The Markdown tables on stdout; what was written and the targets not held on stderr. */
function printSummary(report: BenchReport, name: string, charted: boolean): void {
  process.stdout.write(`${renderMarkdown(report)}\n`);
  log(
    `wrote bench/results/${name}.json${charted ? ` and ${name}.svg` : ''} in ${report.meta.durationS} s`,
  );
  const broken = report.scenarios.flatMap((s) =>
    s.targets.filter((t) => !t.holds).map((t) => `${s.id}: ${t.name}`),
  );
  if (broken.length > 0) log(`targets not held: ${broken.join('; ')}`);
}

main().catch((error: Error) => {
  process.stderr.write(`[bench] failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
