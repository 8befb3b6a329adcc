// Follow-mode metrics, registered on the application's registry.

import { Counter, Gauge, type Registry } from 'prom-client';
import { countPreviousKeyHashes } from '../runtime/index.js';

/**
 * Why a reconcile failed: a request (a read of the workload, a lookup, the patch) failed or
 * timed out, or the workload's sources could not be read (forbidden, timed out); both retried.
 */
export type ReconcileErrorReason = 'request-failed' | 'sources-unreadable';

export interface FollowMetrics {
  touched(kind: string): void;
  touchDenied(kind: string): void;
  deferred(
    reason: 'window' | 'min-interval' | 'rate-limit' | 'error' | 'denied' | 'source-read',
  ): void;
  reconcileError(reason: ReconcileErrorReason): void;
  /** A resync ran over a whole index: what the index holds now, and when (ms since the epoch). */
  resynced(index: { readonly workloads: number; readonly sources: number }, atMs: number): void;
  leader(isLeader: boolean): void;
  watchRestart(reason: 'expired' | 'ended' | 'silent' | 'error'): void;
  pending(count: number): void;
  /** A change not rolled because new pods would miss a required source or key. */
  heldMissing(kind: string): void;
  /** An evaluation found a hash made with a previous hash key, current. */
  previousKeyHash(): void;
  /** A canary failed: the rest of that change's fan-out is held (docs/design.md §6). */
  fanoutHalted(): void;
  /** Workloads a halted change holds back now (docs/design.md §6): nothing touches them. */
  workloadsHeld(count: number): void;
  /** Workloads waiting now behind a canary that tests a change they read. */
  workloadsBehindCanary(count: number): void;
  /** Changes halted now: the alert fires while this is above 0. */
  fanoutsHaltedNow(count: number): void;
  /** Sources whose large fan-out waits for approval now (`--follow-max-fanout`). */
  fanoutsAwaitingApproval(count: number): void;
}

export function createFollowMetrics(registry: Registry): FollowMetrics {
  // Registered in this order, the order /metrics lists them in.
  return {
    ...touchMetrics(registry),
    ...watchMetrics(registry),
    ...fanoutMetrics(registry),
    previousKeyHash: countPreviousKeyHashes(registry, 'follow'),
  };
}

const RECONCILE_ERROR_REASONS: readonly ReconcileErrorReason[] = [
  'request-failed',
  'sources-unreadable',
];

type TouchMetrics = Pick<
  FollowMetrics,
  'touched' | 'touchDenied' | 'deferred' | 'reconcileError' | 'heldMissing'
>;

/** What became of each touch: sent, refused, postponed, failed, or held for a missing source. */
function touchMetrics(registry: Registry): TouchMetrics {
  const touches = new Counter({
    name: 'confighash_follow_touches_total',
    help: 'Workloads touched by follow mode because their config changed (each rolls).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const denied = new Counter({
    name: 'confighash_follow_touches_denied_total',
    help: 'Touches the cluster refused (RBAC, or the follower’s fence when another mutating webhook changes other fields of the same write); retried.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const deferred = new Counter({
    name: 'confighash_follow_deferred_total',
    help: 'Touches postponed: outside the rollout window, within the minimum interval, rate limited, after an error, refused by the cluster, or while a source they read is being read for its fan-out.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const missing = new Counter({
    name: 'confighash_follow_held_missing_total',
    help: 'Changes not rolled because the new pods would miss a required ConfigMap, Secret or key (RequiredConfigMissing Event on the workload).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'confighash_follow_reconcile_errors_total',
    help: 'Reconciles that failed, by reason: request-failed (a read, lookup or patch failed or timed out) or sources-unreadable (the sources could not be read); they are retried.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of RECONCILE_ERROR_REASONS) errors.inc({ reason }, 0);
  return {
    touched: (kind) => touches.inc({ kind }),
    touchDenied: (kind) => denied.inc({ kind }),
    deferred: (reason) => deferred.inc({ reason }),
    reconcileError: (reason) => errors.inc({ reason }),
    heldMissing: (kind) => missing.inc({ kind }),
  };
}

/** The follower itself: whether it leads, its watches' restarts, the touches it has queued. */
function watchMetrics(
  registry: Registry,
): Pick<FollowMetrics, 'leader' | 'watchRestart' | 'pending' | 'resynced'> {
  const leader = new Gauge({
    name: 'confighash_follow_leader',
    help: '1 while this replica holds the follow-mode lease.',
    registers: [registry],
  });
  const restarts = new Counter({
    name: 'confighash_follow_watch_restarts_total',
    help: 'ConfigMap/Secret/Namespace watches re-established, by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const pending = new Gauge({
    name: 'confighash_follow_pending_touches',
    help: 'Touches waiting for debounce, minimum interval, rate limit or rollout window.',
    registers: [registry],
  });
  const workloads = new Gauge({
    name: 'confighash_follow_index_workloads',
    help: 'Workloads in the leader’s reference index (those that read a ConfigMap or Secret in a followed namespace), at its last resync: what its memory grows with.',
    registers: [registry],
  });
  const sources = new Gauge({
    name: 'confighash_follow_index_sources',
    help: 'ConfigMaps and Secrets in the leader’s reference index, at its last resync.',
    registers: [registry],
  });
  const lastResync = new Gauge({
    name: 'confighash_follow_last_resync_timestamp_seconds',
    help: 'When the leader last ran a resync over a whole index, in seconds since the epoch (every --follow-resync; 0 before the first).',
    registers: [registry],
  });
  leader.set(0);
  lastResync.set(0);
  return {
    resynced(index, atMs) {
      workloads.set(index.workloads);
      sources.set(index.sources);
      lastResync.set(atMs / 1000);
    },
    leader: (isLeader) => leader.set(isLeader ? 1 : 0),
    watchRestart: (reason) => restarts.inc({ reason }),
    pending: (count) => pending.set(count),
  };
}

type FanoutMetrics = Pick<
  FollowMetrics,
  | 'fanoutHalted'
  | 'workloadsHeld'
  | 'workloadsBehindCanary'
  | 'fanoutsHaltedNow'
  | 'fanoutsAwaitingApproval'
>;

/** Canary-first fan-outs and approvals (docs/design.md §6): halts, and who waits now. */
function fanoutMetrics(registry: Registry): FanoutMetrics {
  const halted = new Counter({
    name: 'confighash_follow_fanouts_halted_total',
    help: 'Fan-outs halted because a canary failed (its pods or status, or not Ready within --follow-canary-window) or none could test the change; the rest of that change was not touched.',
    registers: [registry],
  });
  const held = new Gauge({
    name: 'confighash_follow_workloads_held',
    help: 'Workloads a halted change holds back now: nothing touches them until the halt is released or the source changes.',
    registers: [registry],
  });
  const behind = new Gauge({
    name: 'confighash_follow_workloads_behind_canary',
    help: 'Workloads waiting now behind a canary that tests a change they read.',
    registers: [registry],
  });
  const haltedNow = new Gauge({
    name: 'confighash_follow_fanouts_halted',
    help: 'Changes of sources halted now (by a failed canary, no canary that can test them, or by hand).',
    registers: [registry],
  });
  const awaiting = new Gauge({
    name: 'confighash_follow_fanouts_awaiting_approval',
    help: 'Sources whose change more than --follow-max-fanout workloads read waits for the confighash.dev/approved-change annotation; their readers are not touched.',
    registers: [registry],
  });
  return {
    fanoutHalted: () => halted.inc(),
    workloadsHeld: (count) => held.set(count),
    workloadsBehindCanary: (count) => behind.set(count),
    fanoutsHaltedNow: (count) => haltedNow.set(count),
    fanoutsAwaitingApproval: (count) => awaiting.set(count),
  };
}
