// A vitest globalSetup: src/ compiled once for the whole run, with the esbuild that tsx itself
// transforms it with, so that every confighash the tests start runs this source without paying
// tsx's transform on each start (tools/cluster/confighash-command.ts). The tree sits beside
// links to the repository's package.json and node_modules, at the depth src/ has in the
// repository: src/main.ts reads ../package.json, and packages resolve as they do from src/.
// The JavaScript of src/ (the credential child, src/kube/resolver*.mjs) is copied as it is, as
// tsc copies it into dist/: it is run by its path, beside the module that names it.

import { cp, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { COMPILED_MAIN_ENV } from '../../tools/cluster/confighash-command.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

type Esbuild = typeof import('esbuild');

/** tsx's own esbuild: the compiler that would otherwise transform each module on load. */
function tsxEsbuild(): Esbuild {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  return fromTsx('esbuild') as Esbuild;
}

async function sourceFiles(dir: string, extension: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => join(entry.parentPath, entry.name));
}

export async function compileSource(): Promise<{ main: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'confighash-compiled-'));
  await symlink(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  const src = join(REPO_ROOT, 'src');
  await tsxEsbuild().build({
    entryPoints: await sourceFiles(src, '.ts'),
    outdir: join(dir, 'src'),
    outbase: src,
    format: 'esm',
    platform: 'node',
    // As tsx targets it: the Node.js that runs the tests.
    target: `node${process.versions.node}`,
    tsconfig: join(REPO_ROOT, 'tsconfig.json'),
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  for (const script of await sourceFiles(src, '.mjs')) {
    await cp(script, join(dir, 'src', relative(src, script)));
  }
  return { main: join(dir, 'src/main.js'), dir };
}

export default async function setup(): Promise<() => Promise<void>> {
  const { main, dir } = await compileSource();
  // Read by the workers, which vitest forks with this process's environment.
  process.env[COMPILED_MAIN_ENV] = main;
  return () => rm(dir, { recursive: true, force: true });
}
