// Helm 3 and Helm 4 as tools/build-helm.sh builds them (Go modules, cached outside the
// repository). Tests that need them skip, saying so, when they are not built; with
// CI=true that is a failure (.ci/run builds them first).

import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

export type HelmMajor = 3 | 4;
export type HelmBinaries = Readonly<Record<HelmMajor, string>>;

export const CHART = join(REPO_ROOT, 'charts/confighash');

/** The built binaries, or why there are none (never builds: that takes minutes). */
function findHelm(): HelmBinaries | string {
  try {
    const out = execFileSync('bash', [join(REPO_ROOT, 'tools/build-helm.sh'), '--find'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const dir = out.trim();
    if (dir) return { 3: join(dir, 'helm3'), 4: join(dir, 'helm4') };
  } catch {
    // exit 1: not built
  }
  return 'Helm 3 and Helm 4 are not built (run `bash tools/build-helm.sh`, a few minutes once)';
}

/**
 * The binaries, or undefined after saying plainly why the suite is skipped; with
 * CI=true a missing Helm throws instead, so CI never passes by skipping.
 */
export function helmOrSkip(suite: string): HelmBinaries | undefined {
  const found = findHelm();
  if (typeof found !== 'string') return found;
  if (process.env.CI === 'true') {
    throw new Error(`${suite}: cannot run: ${found} — with CI=true that is a failure`);
  }
  console.warn(`${suite} SKIPPED: ${found}`);
  return undefined;
}

/** Runs helm; rejects with its stderr on a non-zero exit. */
export async function runHelm(
  binary: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(binary, args, {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')}: ${stderr?.trim() || message}`);
  }
}

/**
 * helm against one cluster: its kubeconfig, and Helm's cache, config and data under the
 * run's own directory (never the user's ~/.cache/helm, ~/.config/helm).
 */
export function helmAgainst(binaries: HelmBinaries, kubeconfig: string, dir: string) {
  const env = {
    HELM_CACHE_HOME: join(dir, 'helm/cache'),
    HELM_CONFIG_HOME: join(dir, 'helm/config'),
    HELM_DATA_HOME: join(dir, 'helm/data'),
  };
  return (major: HelmMajor, namespace: string, args: readonly string[]) =>
    runHelm(binaries[major], [...args, '--kubeconfig', kubeconfig, '-n', namespace], env);
}
