// Runs the real kubectl against a kubeconfig: the way users and the e2e tests
// talk to the cluster.

import { spawn } from 'node:child_process';

export interface KubectlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export type Kubectl = (args: readonly string[], input?: string) => Promise<KubectlResult>;

export function kubectlFor(kubeconfig: string): Kubectl {
  return (args, input) =>
    new Promise((resolve, reject) => {
      const child = spawn('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('error', reject);
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
}

/** Like kubectlFor, but throws with kubectl's own message when it fails. */
export function strictKubectl(
  kubectl: Kubectl,
): (args: readonly string[], input?: string) => Promise<string> {
  return async (args, input) => {
    const result = await kubectl(args, input);
    if (result.code !== 0) {
      throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
    }
    return result.stdout;
  };
}
