// The CLI as users get it (README: `npm install -g confighash`): the release's npm step
// (tools/release/npm.sh, which `npm run release -- --npm-registry URL` runs) packs and
// publishes to a real registry — Verdaccio on loopback, with htpasswd auth and a user
// created through its adduser API — and a clean prefix installs it from there, its
// dependencies proxied from npm's registry. The installed `confighash` then plans against
// this file's control plane, and kubectl finds it as a plugin.

import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../tools/cluster/ports.js';
import {
  type ManagedProcess,
  startProcess,
  waitUntilReady,
} from '../../tools/cluster/processes.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { builtToolOrSkip } from '../support/built-tool.js';
import { configMap, e2eFile, namespace, workload, yamlDocuments } from '../support/e2e.js';

const exec = promisify(execFile);
const VERSION = (
  JSON.parse(execFileSync('cat', [join(REPO_ROOT, 'package.json')], { encoding: 'utf8' })) as {
    version: string;
  }
).version;
/** The one package the registry serves itself; everything else it proxies from npm's. */
const PACKAGE = 'confighash';

const verdaccio = builtToolOrSkip('npm release', 'build-verdaccio.sh', 'verdaccio');

let dir: string;
let registry: ManagedProcess | undefined;
let url: string;
const file = e2eFile([], {
  skip: !verdaccio,
  async setup() {
    dir = await mkdtemp(join(tmpdir(), 'confighash-npm-release-'));
    url = await startRegistry(dir);
  },
});
afterAll(() => registry?.stop());

/** Verdaccio on 127.0.0.1 with a config of this file's: its own storage and htpasswd. */
async function startRegistry(root: string): Promise<string> {
  const port = await freePort();
  const config = join(root, 'verdaccio.yaml');
  await writeFile(
    config,
    JSON.stringify({
      storage: join(root, 'storage'),
      auth: { htpasswd: { file: join(root, 'htpasswd'), max_users: 1 } },
      uplinks: { npmjs: { url: 'https://registry.npmjs.org/', timeout: '60s' } },
      packages: {
        [PACKAGE]: { access: '$all', publish: '$authenticated' },
        '**': { access: '$all', publish: '$authenticated', proxy: 'npmjs' },
      },
      log: { type: 'stdout', format: 'json', level: 'warn' },
    }),
  );
  const listen = `127.0.0.1:${port}`;
  registry = startProcess(
    'verdaccio',
    verdaccio!,
    ['--config', config, '--listen', listen],
    join(root, 'verdaccio.log'),
  );
  const base = `http://${listen}/`;
  await waitUntilReady(registry, async () => {
    const response = await fetch(`${base}-/ping`).catch(() => undefined);
    return response?.ok === true;
  });
  return base;
}

/** The registry's adduser API (what `npm adduser` calls): a new user, and its token. */
async function addUser(name: string, password: string): Promise<string> {
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password, type: 'user', roles: [], date: new Date() }),
  });
  expect(response.status).toBe(201);
  const { token } = (await response.json()) as { token?: string };
  expect(token).toMatch(/\S{16,}/);
  return token!;
}

/** npm with no user configuration of whoever runs the tests. */
function npm(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return exec('npm', [...args, '--userconfig', join(dir, 'empty.npmrc')], {
    cwd: dir,
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

describe.skipIf(!verdaccio)(
  'npm install -g confighash from a registry the release published to',
  () => {
    it('publishes dist/, LICENSE and README only; a clean prefix installs it; it runs, plans, and is a kubectl plugin', async () => {
      await writeFile(join(dir, 'empty.npmrc'), '');
      await exec('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT });
      const out = join(dir, 'release');
      const step = (args: string[], env: NodeJS.ProcessEnv = {}) =>
        exec('bash', [join(REPO_ROOT, 'tools/release/npm.sh'), ...args], {
          cwd: REPO_ROOT,
          env: { ...process.env, ...env },
        });

      const packed = await step(['pack', '--out', out, '--version', VERSION]);
      const tarball = /^npm: (\S+) sha256:[0-9a-f]{64}$/m.exec(packed.stdout)?.[1];
      expect(tarball).toBe(join(out, `${PACKAGE}-${VERSION}.tgz`));
      const { stdout: listing } = await exec('tar', ['tzf', tarball!]);
      const topLevel = new Set(
        listing
          .trim()
          .split('\n')
          .map((entry) => entry.split('/')[1]),
      );
      // package.json is npm's own and always there; nothing else beside the three.
      expect([...topLevel].sort()).toEqual(['LICENSE', 'README.md', 'dist', 'package.json']);

      // Without a token the registry refuses the publish; with one it takes it.
      await expect(step(['publish', tarball!, '--npm-registry', url])).rejects.toMatchObject({
        code: 2,
      });
      const token = await addUser('release-bot', 'a-password-for-the-test');
      const published = await step(['publish', tarball!, '--npm-registry', url], {
        NPM_TOKEN: token,
      });
      expect(published.stdout.trim()).toBe(`npm-published: ${PACKAGE}@${VERSION} ${url}`);
      expect(published.stdout + published.stderr).not.toContain(token);

      const prefix = join(dir, 'prefix');
      await npm([
        'install',
        '--global',
        PACKAGE,
        '--registry',
        url,
        '--prefix',
        prefix,
        '--no-audit',
        '--no-fund',
      ]);
      const bin = join(prefix, 'bin');
      const { stdout: version } = await exec(join(bin, 'confighash'), ['--version']);
      expect(version).toBe(`${VERSION}\n`);

      // The installed CLI against the control plane, chosen by --kubeconfig alone.
      const ns = 'npm-release';
      await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
      const manifests = join(dir, 'app.yaml');
      await writeFile(
        manifests,
        yamlDocuments(configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }), workload(ns, 'web')),
      );
      const plan = await exec(join(bin, 'confighash'), [
        'plan',
        '-f',
        manifests,
        '--kubeconfig',
        file.e2e.controlPlane.kubeconfig,
        '-o',
        'json',
      ]).catch((error: { code: number; stdout: string }) => error);
      expect(JSON.parse(plan.stdout)).toMatchObject({
        apiVersion: 'v1',
        kind: 'List',
        items: [{ kind: 'Deployment', namespace: ns, name: 'web' }],
      });

      // kubectl finds `kubectl-confighash` on PATH: the same program.
      const plugin = await exec('kubectl', ['confighash', '--version'], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      expect(plugin.stdout).toBe(`${VERSION}\n`);
    }, 600_000);
  },
);
