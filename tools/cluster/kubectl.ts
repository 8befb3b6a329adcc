// Runs the real kubectl against a kubeconfig: the way users and the e2e tests
// talk to the cluster.

import { spawn } from 'node:child_process';
import { type ChildOutput, outputOf } from './child-output.js';

export type KubectlResult = ChildOutput;

export type Kubectl = (args: readonly string[], input?: string) => Promise<KubectlResult>;

export function kubectlFor(kubeconfig: string): Kubectl {
  return (args, input) => {
    const child = spawn('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(input ?? '');
    return outputOf(child);
  };
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
