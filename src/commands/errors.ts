// How the commands fail: a mistake the user can fix is a UsageError, printed as
// one line with exit code 2 (main.ts).

import type { ParseResult } from '../cli/index.js';
import {
  type ClusterCredentials,
  childProcessResolver,
  KubeconfigError,
  type KubeconfigSelection,
  loadCredentials,
} from '../kube/index.js';

/** A mistake the user can fix: printed as one line, exit code 2, no stack trace. */
export class UsageError extends Error {}

/** A parsed config, or: --help printed (exit 0), or the mistake as a UsageError. */
export function unwrap<T>(result: ParseResult<T>): T {
  if (result.ok) return result.config;
  if ('help' in result) {
    process.stdout.write(`${result.help}\n`);
    process.exit(0);
  }
  throw new UsageError(result.error);
}

/**
 * plan and explain exit 1 for "something rolls": every failure of theirs is a
 * one-line mistake with exit 2, never an exit 1 that reads as an answer.
 */
export function asUsageError(error: unknown): never {
  if (error instanceof UsageError) throw error;
  const cause = error as Error & { code?: string };
  throw new UsageError(String(cause.message ?? cause).split('\n', 1)[0] ?? String(cause.code));
}

/** The cluster and credentials client-node finds (--kubeconfig, KUBECONFIG, ~/.kube/config, in-cluster). */
export function loadClusterCredentials({
  selection = {},
  onRefreshError,
}: {
  selection?: KubeconfigSelection;
  onRefreshError?: (error: Error) => void;
} = {}): Promise<ClusterCredentials> {
  return loadCredentials({
    resolve: childProcessResolver(process.env, selection),
    ...(onRefreshError ? { onRefreshError } : {}),
  }).catch((error) => {
    throw error instanceof KubeconfigError ? new UsageError(error.message) : error;
  });
}
