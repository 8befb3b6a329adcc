// Follow-mode metrics that record nothing, for runs that measure something else; a caller
// overrides the ones it watches.

import type { FollowMetrics } from '../../src/follow/metrics.js';

export function silentFollowMetrics(watched: Partial<FollowMetrics> = {}): FollowMetrics {
  const nothing = () => {};
  return {
    touched: nothing,
    touchDenied: nothing,
    deferred: nothing,
    reconcileError: nothing,
    resynced: nothing,
    heldMissing: nothing,
    leader: nothing,
    watchRestart: nothing,
    pending: nothing,
    previousKeyHash: nothing,
    fanoutHalted: nothing,
    workloadsHeld: nothing,
    workloadsBehindCanary: nothing,
    fanoutsHaltedNow: nothing,
    fanoutsAwaitingApproval: nothing,
    ...watched,
  };
}
