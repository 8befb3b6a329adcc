// The project's build scripts, run from the harness: progress (stderr) goes to
// the log line by line, and the result is what the script prints on stdout.

import { spawn } from 'node:child_process';
import { outputOf } from './child-output.js';
import { REPO_ROOT } from './repo.js';

/** Runs `bash SCRIPT` in the repository; resolves with its stdout, or fails with its stderr's tail. */
export function runScript(
  script: string,
  what: string,
  log: (line: string) => void = () => {},
): Promise<string> {
  const child = spawn('bash', [script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const logLines = (chunk: string) => {
    for (const line of chunk.split('\n').filter(Boolean)) log(line);
  };
  return outputOf(child, logLines).then(({ code, stdout, stderr }) => {
    if (code === 0 && stdout.trim()) return stdout.trim();
    throw new Error(`${what} failed (exit ${code}):\n${stderr.slice(-4000)}`);
  });
}
