// Leader election on a coordination.k8s.io Lease, with client-go's semantics:
// a lease held by someone else counts as expired only when *we* have seen its
// record unchanged for a whole lease duration (local observation time, so
// clocks need not agree); the leader renews every retry period and gives up
// leadership at once when it could not renew within the renew deadline.

import { setMaxListeners } from 'node:events';
import type { LeaseRecord, LeaseStore } from './ports.js';
import { sleep } from './sleep.js';

export interface ElectionTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export const DEFAULT_TIMING: ElectionTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export type LeaseAction = 'create' | 'acquire' | 'renew' | 'wait';

/** What to do about the lease now. `observedAt`: when we first saw its current record. */
export function decideLeaseAction(
  current: LeaseRecord | undefined,
  identity: string,
  observedAt: number,
  now: number,
): LeaseAction {
  if (!current) return 'create';
  if (current.holderIdentity === identity) return 'renew';
  if (current.holderIdentity === '') return 'acquire';
  const expiresAt = observedAt + current.leaseDurationSeconds * 1000;
  return now >= expiresAt ? 'acquire' : 'wait';
}

/** A Kubernetes MicroTime: RFC 3339 with microseconds, as Leases and Events carry it. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The record to write for `action` ('create', 'acquire' or 'renew'). */
export function nextLeaseRecord(
  current: LeaseRecord | undefined,
  identity: string,
  now: Date,
  leaseDurationMs: number,
): LeaseRecord {
  const time = microTime(now);
  const keepsHolder = current?.holderIdentity === identity;
  const transitions = current?.leaseTransitions ?? 0;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
    acquireTime: keepsHolder ? (current?.acquireTime ?? time) : time,
    renewTime: time,
    leaseTransitions: keepsHolder || !current?.holderIdentity ? transitions : transitions + 1,
  };
}

/** Released on shutdown so that another replica need not wait out the lease. */
export function releasedLeaseRecord(current: LeaseRecord, now: Date): LeaseRecord {
  return {
    ...current,
    holderIdentity: '',
    leaseDurationSeconds: 1,
    renewTime: microTime(now),
  };
}

/** The part of a record whose change proves the holder is alive. */
export function recordFingerprint(record: LeaseRecord | undefined): string {
  return record
    ? `${record.holderIdentity}|${record.renewTime ?? ''}|${record.leaseTransitions}`
    : '';
}

export interface LeaderCallbacks {
  /** Called when this replica becomes leader; `signal` aborts the moment leadership is lost. */
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading(): void;
  onError?(error: unknown): void;
}

export interface Clock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now(), sleep };

/** Runs the election until `signal` aborts; releases the lease if held then. */
export async function runLeaderElection(
  store: LeaseStore,
  identity: string,
  callbacks: LeaderCallbacks,
  signal: AbortSignal,
  timing: ElectionTiming = DEFAULT_TIMING,
  clock: Clock = systemClock,
): Promise<void> {
  let observed = '';
  let observedAt = clock.now();
  let leading: AbortController | undefined;
  let lastRenew = 0;

  const stopLeading = () => {
    if (!leading) return;
    leading.abort();
    leading = undefined;
    callbacks.onStoppedLeading();
  };

  while (!signal.aborted) {
    const now = clock.now();
    try {
      const stored = await store.get();
      const fingerprint = recordFingerprint(stored?.record);
      if (fingerprint !== observed) {
        observed = fingerprint;
        observedAt = now;
      }
      const action = decideLeaseAction(stored?.record, identity, observedAt, now);
      if (leading && action !== 'renew') {
        stopLeading(); // Someone else holds it now.
      } else if (action !== 'wait') {
        const next = nextLeaseRecord(
          stored?.record,
          identity,
          new Date(now),
          timing.leaseDurationMs,
        );
        const written = stored
          ? await store.update(next, stored.resourceVersion)
          : await store.create(next);
        if (written) {
          observed = recordFingerprint(next);
          observedAt = now;
          lastRenew = now;
          if (!leading && !signal.aborted) {
            leading = new AbortController();
            // Every request the follower has in flight listens on this signal.
            setMaxListeners(1000, leading.signal);
            callbacks.onStartedLeading(leading.signal);
          }
        }
      }
    } catch (error) {
      callbacks.onError?.(error);
    }
    if (leading && clock.now() - lastRenew > timing.renewDeadlineMs) stopLeading();
    await clock.sleep(timing.retryPeriodMs, signal);
  }

  if (leading) {
    stopLeading();
    try {
      const stored = await store.get();
      if (stored?.record.holderIdentity === identity) {
        await store.update(
          releasedLeaseRecord(stored.record, new Date(clock.now())),
          stored.resourceVersion,
        );
      }
    } catch (error) {
      callbacks.onError?.(error);
    }
  }
}
