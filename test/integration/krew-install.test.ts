// `kubectl krew install` of the release's krew manifest and archive, as krew-index users
// get them: tools/krew/archive.sh builds the archive, tools/release/krew-manifest.py fills
// .krew.yaml as krew-release-bot does, and krew (built from Go modules,
// tools/build-krew.sh) installs both into a KREW_ROOT of this file's own. Then kubectl
// finds the plugin through krew's bin/ symlink. Skipped, saying so, when krew is not built
// (a failure with CI=true).

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { builtToolOrSkip } from '../support/built-tool.js';

const exec = promisify(execFile);

const krew = builtToolOrSkip('krew install', 'build-krew.sh', 'krew');

let dir: string;
let archive: string;
let manifest: string;
let version: string;
beforeAll(async () => {
  if (!krew) return;
  dir = await mkdtemp(join(tmpdir(), 'confighash-krew-'));
  version = (
    JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const { stdout } = await exec(
    'bash',
    [join(REPO_ROOT, 'tools/krew/archive.sh'), join(dir, 'out')],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const [path, sha256] = stdout.trim().split('\n');
  archive = path!;
  const filled = await exec('python3', [
    join(REPO_ROOT, 'tools/release/krew-manifest.py'),
    join(REPO_ROOT, '.krew.yaml'),
    `v${version}`,
    sha256!,
  ]);
  manifest = join(dir, 'out', 'confighash.yaml');
  await writeFile(manifest, filled.stdout);
  // kubectl runs `kubectl krew` as the executable kubectl-krew on PATH.
  await mkdir(join(dir, 'bin'));
  await symlink(krew, join(dir, 'bin', 'kubectl-krew'));
}, 300_000);

/** kubectl with krew's own bin/ and kubectl-krew on PATH, and a KREW_ROOT of this file's. */
function kubectl(args: readonly string[]) {
  const root = join(dir, 'krew-root');
  return exec('kubectl', [...args], {
    env: {
      ...process.env,
      KREW_ROOT: root,
      KREW_NO_UPGRADE_CHECK: '1',
      PATH: `${join(root, 'bin')}:${join(dir, 'bin')}:${process.env.PATH}`,
    },
  });
}

describe.skipIf(!krew)('kubectl krew install of the release’s manifest and archive', () => {
  it('installs, and `kubectl confighash` runs the CLI through krew’s symlink', async () => {
    const { stdout: listing } = await exec('tar', ['tzvf', archive], {
      maxBuffer: 64 * 1024 * 1024,
    });
    // krew refuses an archive at its first symlink: there must be none.
    expect(listing.split('\n').filter((line) => line.startsWith('l'))).toEqual([]);
    const install = await kubectl([
      'krew',
      'install',
      `--manifest=${manifest}`,
      `--archive=${archive}`,
    ]);
    expect(install.stderr).toMatch(/Installed plugin: confighash/);
    const help = await kubectl(['confighash', '--help']);
    expect(help.stdout.split('\n')[0]).toBe('Usage: confighash COMMAND [options]');
    expect((await kubectl(['confighash', 'version'])).stdout).toBe(`${version}\n`);
  }, 120_000);
});
