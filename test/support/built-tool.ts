// A tool a tools/build-*.sh script builds or installs outside the repository (cached): its
// binary, or undefined after saying plainly why the suite is skipped. With CI=true a missing
// tool throws instead, so CI never passes by skipping. Never builds: that takes a while.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

export function builtToolOrSkip(suite: string, script: string, binary: string): string | undefined {
  try {
    const dir = execFileSync('bash', [join(REPO_ROOT, 'tools', script), '--find'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return join(dir, binary);
  } catch {
    if (process.env.CI === 'true') {
      throw new Error(
        `${suite}: ${binary} is not built (tools/${script}) — with CI=true that is a failure`,
      );
    }
    console.warn(`${suite} SKIPPED: run \`bash tools/${script}\` once`);
    return undefined;
  }
}
