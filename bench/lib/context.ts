// The bench's plan (full or quick), its command-line options, the context every
// scenario shares, and the standard workload's names.

import { resolve } from 'node:path';
import type { Helper, Webhook } from './children.js';
import type { ContainerRuntime } from './container.js';
import type { PeerBinaries } from './peers.js';

export interface Plan {
  readonly warmupS: number;
  readonly measureS: number;
  /** Load runs of one target are split into rounds, interleaved with the other targets'. */
  readonly rounds: number;
  readonly concurrencies: readonly number[];
  readonly realConcurrencies: readonly number[];
  readonly scaleConcurrencies: readonly number[];
  readonly sources: readonly number[];
  readonly bytes: readonly number[];
  readonly unrelated: readonly number[];
  readonly applies: number;
  readonly hashRounds: number;
  readonly soakS: number;
  readonly soakRate: number;
  /**
   * The ratio run: the reviews that settle each fresh server, the length of one block, and the
   * block pairs per concurrency (at least 5).
   */
  readonly ratioSettleReviews: number;
  readonly ratioBlockS: number;
  readonly ratioPairs: number;
}

export const KIB = 1024;
export const FULL: Plan = {
  warmupS: 1,
  measureS: 4,
  rounds: 3,
  concurrencies: [1, 8, 32],
  realConcurrencies: [1, 8, 32],
  scaleConcurrencies: [1, 8],
  sources: [1, 4, 16, 64],
  bytes: [KIB, 16 * KIB, 256 * KIB, 1024 * KIB],
  unrelated: [0, 1_000, 10_000],
  applies: 200,
  hashRounds: 30,
  soakS: 60,
  soakRate: 500,
  ratioSettleReviews: 20_000,
  ratioBlockS: 4,
  ratioPairs: 6,
};
export const QUICK: Plan = {
  warmupS: 0.25,
  measureS: 0.8,
  rounds: 1,
  concurrencies: [1, 8, 32],
  realConcurrencies: [1, 32],
  scaleConcurrencies: [8],
  sources: [1, 16],
  bytes: [KIB, 256 * KIB],
  unrelated: [0, 500],
  applies: 20,
  hashRounds: 5,
  soakS: 4,
  soakRate: 200,
  ratioSettleReviews: 5_000,
  ratioBlockS: 1,
  ratioPairs: 5,
};

/** The standard workload of scenarios 1–4 and 7: 3 sources of 1 KiB. */
export const STANDARD_SOURCES = 3;
export const STANDARD_BYTES = KIB;
export const NAMESPACE = 'bench';
export const NAMESPACE_OFF = 'bench-off';
export const ADMISSION_TIMEOUT = '5s';

export interface Options {
  readonly quick: boolean;
  readonly profile: boolean;
  readonly only: ReadonlySet<string> | undefined;
  /** A previous build's compiled main.js, measured next to this one (scenarios 2 and 8). */
  readonly baseline: string | undefined;
  /** Also measure wave and Reloader (opt-in: needs WAVE_SRC and RELOADER_SRC). */
  readonly peers: boolean;
  /** The follow namespaces at each size of the `scale` scenario, growing. */
  readonly scaleSizes: readonly number[];
}

export const SCALE_SIZES = [10, 100, 1_000] as const;

export interface Context {
  readonly plan: Plan;
  readonly options: Options;
  readonly work: string;
  readonly certs: { readonly ca: string; readonly cert: string; readonly key: string };
  readonly hashKeyFile: string;
  /** How the serving container runs `confighash serve`: every webhook the bench starts runs so. */
  readonly serve: ContainerRuntime;
  readonly loadgen: Helper;
  readonly resultsDir: string;
  /** wave and Reloader, built (or found in the cache) when `--peers` is given. */
  readonly peers: PeerBinaries | undefined;
  readonly helpers: Helper[];
  readonly webhooks: Webhook[];
}

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

export function parseOptions(argv: readonly string[]): Options {
  let quick = false;
  let profile = false;
  let only: Set<string> | undefined;
  let baseline: string | undefined;
  let peers = false;
  let scaleSizes: readonly number[] = SCALE_SIZES;
  for (const arg of argv) {
    if (arg === '--quick') quick = true;
    else if (arg === '--peers') peers = true;
    else if (arg.startsWith('--baseline=')) baseline = resolve(arg.slice('--baseline='.length));
    else if (arg === '--profile') profile = true;
    else if (arg.startsWith('--scale-sizes=')) scaleSizes = parseSizes(arg);
    else if (arg.startsWith('--only=')) only = new Set(arg.slice('--only='.length).split(','));
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(
        'usage: npm run bench [-- --quick] [--only=1,2,3,4,5,5a,5b,5c,6,7,8,9,peers,scale,ratio] [--profile] [--baseline=MAIN_JS] [--peers] [--scale-sizes=10,100,1000]\n' +
          '  --quick     under a minute: shorter runs, fewer points\n' +
          '  --only      run these scenarios (1 and 2 always run together; scale and ratio only when named)\n' +
          '  --profile   write V8 CPU profiles of the webhook to bench/results/\n' +
          '  --baseline  a previous build (its compiled src/main.js), measured next to this one in 2 and 8\n' +
          "  --peers     also wave and Reloader (WAVE_SRC, RELOADER_SRC: see bench/build-peers.sh): their RSS, and wave's webhook in 4\n" +
          '  --scale-sizes  follow namespaces at each size of scale, growing (default 10,100,1000; Reloader beside it with RELOADER_SRC)\n',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  return { quick, profile, only, baseline, peers, scaleSizes };
}

/** `--scale-sizes=10,100`: whole numbers of at least 1, growing. */
export function parseSizes(arg: string): number[] {
  const text = arg.slice(arg.indexOf('=') + 1);
  const sizes = text.split(',').map(Number);
  const growing = sizes.every(
    (n, i) => Number.isInteger(n) && n >= 1 && (i === 0 || n > sizes[i - 1]!),
  );
  if (sizes.length === 0 || !growing) {
    throw new Error(
      `--scale-sizes takes growing whole numbers of at least 1, such as 10,100,1000; got '${text}'`,
    );
  }
  return sizes;
}

/** Scenario ids: 1–9 and peers (with --peers); 5 stands for 5a, 5b and 5c; scale and ratio only by name. */
export const wants = (options: Options, ...ids: string[]) =>
  options.only === undefined ||
  ids.some((id) => options.only?.has(id) || (id.startsWith('5') && options.only?.has('5')));
