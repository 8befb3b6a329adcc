// The processes under test run compiled JavaScript, as in production (no tsx
// loader thread in their memory or their profiles): src/ and bench/procs/ are
// compiled, incrementally, into node_modules/.cache/confighash-bench/.

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

export const BUILD_DIR = join(REPO_ROOT, 'node_modules/.cache/confighash-bench');

export async function buildProcesses(log: (line: string) => void): Promise<string> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const project = join(REPO_ROOT, 'bench/tsconfig.procs.json');
  await promisify(execFile)(process.execPath, [tsc, '-p', project], { cwd: REPO_ROOT }).catch(
    (error: { code?: number; stdout?: string; message: string }) => {
      // Exit code 2: type errors, but the JavaScript was written (`npx tsc --noEmit` is the gate).
      if (error.code === 2) {
        log(`type errors while compiling (JavaScript written anyway):\n${error.stdout ?? ''}`);
        return;
      }
      throw new Error(`compiling the bench processes failed:\n${error.stdout ?? error.message}`);
    },
  );
  // Under node_modules/ the repo's package.json no longer applies: say ESM here.
  await writeFile(join(BUILD_DIR, 'package.json'), '{ "type": "module" }\n');
  return BUILD_DIR;
}
