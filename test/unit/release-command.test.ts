// `npm run release` (tools/release/release.sh) refuses bad input before it builds or
// pushes anything: each mistake gets its own error line and exit status 2.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

const run = promisify(execFile);
const RELEASE = join(REPO_ROOT, 'tools/release/release.sh');

const NPM_STEP = join(REPO_ROOT, 'tools/release/npm.sh');

async function release(
  args: string[],
  script = RELEASE,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('bash', [script, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('npm run release: bad input', () => {
  it.each([
    { name: 'no --registry', args: [], error: '--registry is required' },
    { name: '--registry without a value', args: ['--registry'], error: '--registry needs a value' },
    {
      name: 'a host with a character no reference takes',
      args: ['--registry', 'my_registry!'],
      error: "--registry 'my_registry!' is not HOST or HOST:PORT",
    },
    {
      name: 'a port out of range',
      args: ['--registry', '127.0.0.1:70000'],
      error: "--registry '127.0.0.1:70000' is not HOST or HOST:PORT",
    },
    {
      name: 'a path after the host',
      args: ['--registry', 'ghcr.io/confighash'],
      error: "--registry 'ghcr.io/confighash' is not HOST or HOST:PORT",
    },
    {
      name: 'a tag with a leading v',
      args: ['--registry', 'ghcr.io', '--tag', 'v0.1.0'],
      error: "--tag 'v0.1.0' is not a version",
    },
    {
      name: 'a tag that is not MAJOR.MINOR.PATCH',
      args: ['--registry', 'ghcr.io', '--tag', '0.1'],
      error: "--tag '0.1' is not a version",
    },
    {
      name: 'a tag with build metadata, which no OCI tag can hold',
      args: ['--registry', 'ghcr.io', '--tag', '0.1.0+build.1'],
      error: "--tag '0.1.0+build.1' is not a version",
    },
    {
      name: 'an unknown flag',
      args: ['--registry', 'ghcr.io', '--push-everything'],
      error: "unknown argument '--push-everything'",
    },
    {
      name: 'an npm registry that is no URL',
      args: ['--registry', 'ghcr.io', '--npm-registry', 'registry.npmjs.org'],
      error: "--npm-registry 'registry.npmjs.org' is not an http:// or https:// URL",
    },
    {
      name: '--npm-registry without a value',
      args: ['--registry', 'ghcr.io', '--npm-registry'],
      error: '--npm-registry needs a value',
    },
  ])('$name: exit 2 and one error line', async ({ args, error }) => {
    const result = await release(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`release: ${error}`);
  });

  it('--help prints the usage and exits 0', async () => {
    const result = await release(['--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(
      '--registry HOST[:PORT] [--tag VERSION] [--plain-http] [--npm-registry URL]',
    );
  });
});

describe('the npm step (tools/release/npm.sh): bad input', () => {
  it.each([
    { name: 'no step', args: [], error: 'say pack or publish' },
    { name: 'pack without --out', args: ['pack', '--version', '0.1.0'], error: 'pack needs --out' },
    {
      name: 'publish of a tarball that does not exist',
      args: ['publish', '/nonexistent.tgz', '--npm-registry', 'http://127.0.0.1:1/'],
      error: 'publish needs a tarball that exists',
    },
    {
      name: 'publish to no URL',
      args: ['publish', NPM_STEP, '--npm-registry', 'ftp://registry.example'],
      error: "--npm-registry 'ftp://registry.example' is not an http:// or https:// URL",
    },
  ])('$name: exit 2 and one error line', async ({ args, error }) => {
    const result = await release(args, NPM_STEP);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`release: ${error}`);
  });
});
