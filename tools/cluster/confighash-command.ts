// How the harness starts confighash from this source: through tsx, or — in a test run that
// compiled the source once (test/support/compiled-source.ts) — from that compiled tree. tsx
// transforms every module again on each start, through a loader thread; a suite starts
// confighash a hundred times and more (plan, explain, dev-certs, serve, follow).

import { join } from 'node:path';
import { REPO_ROOT } from './repo.js';

/** Names src/main.js of this run's compiled tree, when a test run compiled one. */
export const COMPILED_MAIN_ENV = 'CONFIGHASH_COMPILED_MAIN';

/** Node's arguments that run `confighash ARGS` from this source (spawn with process.execPath). */
export function confighashNodeArgs(args: readonly string[]): string[] {
  const compiled = process.env[COMPILED_MAIN_ENV];
  const main = compiled ? [compiled] : ['--import', 'tsx', join(REPO_ROOT, 'src/main.ts')];
  return [...main, ...args];
}
