// Follow mode: every replica runs the election; the one holding the Lease runs
// the follower, and stops it the moment the lease is lost.

import { type FollowerDependencies, runFollower } from './follower.js';
import { type ElectionTiming, runLeaderElection } from './lease.js';
import type { LeaseStore } from './ports.js';

export { DEFAULT_FOLLOW_OPTIONS, type FollowOptions } from './follower.js';
export { DEFAULT_TIMING, type ElectionTiming } from './lease.js';
export { createFollowMetrics, type FollowMetrics } from './metrics.js';
export type { FollowApi, LeaseStore } from './ports.js';

interface FollowModeDependencies extends FollowerDependencies {
  readonly leaseStore: LeaseStore;
  readonly identity: string;
  readonly timing?: ElectionTiming;
}

export interface FollowMode {
  /** Stops following and releases the lease if held. */
  stop(): Promise<void>;
}

export function startFollowMode(deps: FollowModeDependencies): FollowMode {
  const shutdown = new AbortController();
  let following: Promise<void> = Promise.resolve();
  const election = runLeaderElection(
    deps.leaseStore,
    deps.identity,
    {
      onStartedLeading(signal) {
        deps.metrics.leader(true);
        deps.logger.info({ identity: deps.identity }, 'follow: became leader');
        following = runFollower(deps, signal).catch((error: Error) =>
          deps.logger.error({ err: error.message }, 'follow: follower crashed'),
        );
      },
      onStoppedLeading() {
        deps.metrics.leader(false);
        deps.logger.info({ identity: deps.identity }, 'follow: no longer leader');
      },
      onError(error) {
        deps.logger.warn({ err: (error as Error).message }, 'follow: lease renewal failed');
      },
    },
    shutdown.signal,
    deps.timing,
    deps.clock,
  );
  return {
    async stop() {
      shutdown.abort();
      await election;
      await following;
    },
  };
}
