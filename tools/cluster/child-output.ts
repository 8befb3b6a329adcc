// A child process's whole output. 'exit' can fire while its pipes still hold
// output (or while a grandchild still writes to them): the e2e suite once read
// an empty `kubectl get -o json` that way. 'close' comes after the last byte.

import type { ChildProcess } from 'node:child_process';

export interface ChildOutput {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Collects stdout and stderr (where piped) and resolves once every pipe has closed. */
export function outputOf(
  child: ChildProcess,
  onStderr: (chunk: string) => void = () => {},
): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      onStderr(chunk.toString());
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
