// The project's build scripts, run from the harness: progress (stderr) goes to
// the log line by line, and the result is what the script prints on stdout.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `bash SCRIPT` in the repository; resolves with its stdout, or fails with its stderr's tail. */
export function runScript(
  script: string,
  what: string,
  log: (line: string) => void = () => {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) log(line);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0 && out.trim()) resolve(out.trim());
      else reject(new Error(`${what} failed (exit ${code}):\n${err.slice(-4000)}`));
    });
  });
}
