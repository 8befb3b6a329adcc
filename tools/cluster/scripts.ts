// The project's build scripts, run from the harness: progress (stderr) goes to
// the log line by line, and the result is what the script prints on stdout.

import { spawn } from 'node:child_process';
import { outputOf } from './child-output.js';
import { REPO_ROOT } from './repo.js';

export interface ScriptOptions {
  /** Each line of the script's stderr, as it comes. */
  readonly log?: (line: string) => void;
  /** Kills the script (SIGTERM) after this long; no limit unless given. */
  readonly timeoutMs?: number;
}

export interface ScriptOutput {
  /** Trimmed; never empty. */
  readonly stdout: string;
  /** Whole, for the tests that check what a script said besides its result. */
  readonly stderr: string;
}

/** Runs `bash SCRIPT` in the repository; resolves with its stdout, or fails with its stderr's tail. */
export async function runScript(
  script: string,
  what: string,
  options: ScriptOptions = {},
): Promise<string> {
  return (await runScriptForOutput(script, what, options)).stdout;
}

/** As runScript, and resolves with its stderr too. */
export function runScriptForOutput(
  script: string,
  what: string,
  { log = () => {}, timeoutMs }: ScriptOptions = {},
): Promise<ScriptOutput> {
  const child = spawn('bash', [script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  const logLines = (chunk: string) => {
    for (const line of chunk.split('\n').filter(Boolean)) log(line);
  };
  return outputOf(child, logLines).then(({ code, stdout, stderr }) => {
    if (code === 0 && stdout.trim()) return { stdout: stdout.trim(), stderr };
    throw new Error(`${what} failed (exit ${code ?? child.signalCode}):\n${stderr.slice(-4000)}`);
  });
}
