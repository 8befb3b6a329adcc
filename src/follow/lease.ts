// Leader election on a coordination.k8s.io Lease, with client-go's semantics:
// a lease held by someone else counts as expired only when *we* have seen its
// record unchanged for a whole lease duration (local observation time, so
// clocks need not agree); the leader renews every retry period and gives up
// leadership at once when it could not renew within the renew deadline. Unlike
// client-go, a leader's renewal that hangs is abandoned before the deadline and
// tried again, so one dead connection does not cost the lease.

import { setMaxListeners } from 'node:events';
import { type Clock, sleep, systemClock, withDeadline } from '../runtime/index.js';
import { type LeaseRecord, type LeaseStore, microTime } from './ports.js';

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

type LeaseAction = 'create' | 'acquire' | 'renew' | 'wait';

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
function releasedLeaseRecord(current: LeaseRecord, now: Date): LeaseRecord {
  return {
    ...current,
    holderIdentity: '',
    leaseDurationSeconds: 1,
    renewTime: microTime(now),
  };
}

/** The part of a record whose change proves the holder is alive. */
function recordFingerprint(record: LeaseRecord | undefined): string {
  return record
    ? `${record.holderIdentity}|${record.renewTime ?? ''}|${record.leaseTransitions}`
    : '';
}

interface LeaderCallbacks {
  /** Called when this replica becomes leader; `signal` aborts the moment leadership is lost. */
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading(): void;
  onError?(error: unknown): void;
}

/** Runs the election until `signal` aborts; releases the lease if held then. */
export async function runLeaderElection(
  store: LeaseStore,
  identity: string,
  callbacks: LeaderCallbacks,
  signal: AbortSignal,
  timing: ElectionTiming = DEFAULT_TIMING,
  clock: Clock = systemClock,
): Promise<void> {
  const election = new Election(store, identity, callbacks, timing, clock);
  while (!signal.aborted) {
    try {
      await election.step(signal);
    } catch (error) {
      if (!signal.aborted) callbacks.onError?.(error);
    }
    election.checkRenewDeadline();
    await sleep(timing.retryPeriodMs, signal, clock);
  }
  await election.release();
}

/** One replica's view of the election: what it last observed, and whether it leads. */
class Election {
  #observed = '';
  #observedAt: number;
  #leading: AbortController | undefined;
  #lastRenew = 0;

  constructor(
    private readonly store: LeaseStore,
    private readonly identity: string,
    private readonly callbacks: LeaderCallbacks,
    private readonly timing: ElectionTiming,
    private readonly clock: Clock,
  ) {
    this.#observedAt = clock.now();
  }

  /**
   * Reads the lease, then creates, acquires or renews it, or waits. Gives up when
   * `shutdown` aborts, and, while leading, at the renew deadline.
   */
  async step(shutdown: AbortSignal): Promise<void> {
    await withDeadline(
      shutdown,
      this.#stepBudgetMs(),
      async (signal) => {
        const stored = await this.store.get(signal);
        const now = this.clock.now();
        this.#observe(recordFingerprint(stored?.record), now);
        const action = decideLeaseAction(stored?.record, this.identity, this.#observedAt, now);
        if (this.#leading && action !== 'renew') return this.#stopLeading(); // Someone else holds it now.
        if (action === 'wait') return;
        const next = nextLeaseRecord(
          stored?.record,
          this.identity,
          new Date(now),
          this.timing.leaseDurationMs,
        );
        const written = stored
          ? await this.store.update(next, stored.resourceVersion, signal)
          : await this.store.create(next, signal);
        if (!written) return;
        this.#observe(recordFingerprint(next), now, true);
        this.#lastRenew = now;
        if (!this.#leading && !shutdown.aborted) this.#startLeading();
      },
      this.clock,
    );
  }

  /** Leadership ends at once when the lease could not be renewed in time. */
  checkRenewDeadline(): void {
    if (this.#leading && this.clock.now() - this.#lastRenew >= this.timing.renewDeadlineMs) {
      this.#stopLeading();
    }
  }

  /**
   * On shutdown: stop leading, and release the lease so another replica need not
   * wait it out. Bounded by a retry period: past that, the lease simply expires.
   */
  async release(): Promise<void> {
    if (!this.#leading) return;
    this.#stopLeading();
    try {
      await withDeadline(
        undefined,
        this.timing.retryPeriodMs,
        async (signal) => {
          const stored = await this.store.get(signal);
          if (stored?.record.holderIdentity !== this.identity) return;
          const released = releasedLeaseRecord(stored.record, new Date(this.clock.now()));
          await this.store.update(released, stored.resourceVersion, signal);
        },
        this.clock,
      );
    } catch (error) {
      this.callbacks.onError?.(error);
    }
  }

  /**
   * A candidate's step may take one renew deadline. A leader's attempt gets half of what the
   * renew deadline leaves after a retry period (and never more than is left), so that one
   * request that hangs — a dead keep-alive socket, destroyed when its attempt is abandoned —
   * costs an attempt, not leadership: the next one, on a new connection, fits before the deadline.
   */
  #stepBudgetMs(): number {
    const { renewDeadlineMs, retryPeriodMs } = this.timing;
    if (!this.#leading) return renewDeadlineMs;
    const attemptMs = Math.max(retryPeriodMs, (renewDeadlineMs - retryPeriodMs) / 2);
    const untilDeadline = this.#lastRenew + renewDeadlineMs - this.clock.now();
    return Math.max(1, Math.min(attemptMs, untilDeadline));
  }

  #observe(fingerprint: string, now: number, always = false): void {
    if (!always && fingerprint === this.#observed) return;
    this.#observed = fingerprint;
    this.#observedAt = now;
  }

  #startLeading(): void {
    this.#leading = new AbortController();
    // Every request the follower has in flight listens on this signal.
    setMaxListeners(1000, this.#leading.signal);
    this.callbacks.onStartedLeading(this.#leading.signal);
  }

  #stopLeading(): void {
    if (!this.#leading) return;
    this.#leading.abort();
    this.#leading = undefined;
    this.callbacks.onStoppedLeading();
  }
}
