// Another release's `src/`, taken from the repository's history into build/ (git-ignored,
// inside the repository so that its imports resolve against the repository's
// node_modules), to run it beside the current one: a hash upgrade, say.

import { execFile } from 'node:child_process';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './repo.js';

const exec = promisify(execFile);

/** The path of that release's src/main.ts; extracted once per commit. */
export async function releaseMain(commit: string): Promise<string> {
  const dir = join(REPO_ROOT, 'build', `release-${commit}`);
  const main = join(dir, 'src', 'main.ts');
  if (await exists(main)) return main;
  try {
    await exec('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: REPO_ROOT });
  } catch {
    throw new Error(
      `commit ${commit} is not in this clone (shallow? run git fetch --unshallow): its source cannot be run`,
    );
  }
  // Extracted beside and renamed into place, so that a run stopped half-way leaves nothing used.
  const staging = `${dir}.${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  await exec('bash', ['-c', 'git archive "$1" src | tar -x -C "$2"', 'bash', commit, staging], {
    cwd: REPO_ROOT,
  });
  await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
    // Another run put it there first: theirs is the same commit.
    await rm(staging, { recursive: true, force: true });
    if (!(await exists(main))) throw error;
  });
  return main;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
