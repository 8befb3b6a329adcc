import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  decideLeaseAction,
  nextLeaseRecord,
  runLeaderElection,
} from '../../../src/follow/lease.js';
import type { LeaseRecord, LeaseStore, StoredLease } from '../../../src/follow/ports.js';

const held = (holder: string, seconds = 15): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: seconds,
  renewTime: '2026-11-30T00:00:00.000000Z',
  leaseTransitions: 3,
});

describe('decideLeaseAction', () => {
  it.each([
    ['no lease yet: create it', undefined, 0, 0, 'create'],
    ['we hold it: renew', held('me'), 0, 60_000, 'renew'],
    ['released (no holder): take it', held(''), 0, 0, 'acquire'],
    ['held by another, seen 14.9 s ago: wait', held('other'), 0, 14_900, 'wait'],
    [
      'held by another, unchanged for the lease duration: take it',
      held('other'),
      0,
      15_000,
      'acquire',
    ],
    ['a short lease expires sooner', held('other', 1), 0, 1000, 'acquire'],
  ] as const)('%s', (_name, record, observedAt, now, action) => {
    expect(decideLeaseAction(record, 'me', observedAt, now)).toBe(action);
  });
});

describe('nextLeaseRecord', () => {
  const now = new Date('2026-11-30T12:00:00.123Z');
  it('renewing keeps acquireTime and transitions', () => {
    const current = { ...held('me'), acquireTime: '2026-11-30T11:00:00.000000Z' };
    expect(nextLeaseRecord(current, 'me', now, 15_000)).toEqual({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: '2026-11-30T11:00:00.000000Z',
      renewTime: '2026-11-30T12:00:00.123000Z',
      leaseTransitions: 3,
    });
  });
  it('taking it from another counts a transition', () => {
    const next = nextLeaseRecord(held('other'), 'me', now, 15_000);
    expect(next.leaseTransitions).toBe(4);
    expect(next.acquireTime).toBe('2026-11-30T12:00:00.123000Z');
  });
  it('taking a released lease does not', () => {
    expect(nextLeaseRecord(held(''), 'me', now, 15_000).leaseTransitions).toBe(3);
  });
});

/** An in-memory Lease with the API's optimistic concurrency. */
class MemoryLeaseStore {
  lease: StoredLease | undefined;
  #version = 0;
  readonly writes: string[] = [];

  /** Identities whose next request gets no answer until its signal aborts (a dead socket). */
  readonly stallNext = new Set<string>();
  /** Identities none of whose requests get an answer (a stalled apiserver). */
  readonly stallAlways = new Set<string>();

  client(identity: string, reachable: () => boolean = () => true): LeaseStore {
    const check = () => {
      if (!reachable()) throw new Error(`${identity}: apiserver unreachable`);
    };
    const stall = (signal: AbortSignal) =>
      new Promise<never>((_resolve, reject) => {
        this.stallNext.delete(identity);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    return {
      get: async (signal) => {
        if (this.stallNext.has(identity) || this.stallAlways.has(identity)) await stall(signal);
        check();
        return this.lease;
      },
      create: async (record) => {
        check();
        if (this.lease) return false;
        this.lease = { record, resourceVersion: String(++this.#version) };
        this.writes.push(`${identity} create`);
        return true;
      },
      update: async (record, resourceVersion) => {
        check();
        if (this.lease?.resourceVersion !== resourceVersion) return false;
        this.lease = { record, resourceVersion: String(++this.#version) };
        this.writes.push(`${identity} update`);
        return true;
      },
    };
  }
}

describe('runLeaderElection', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-11-30T00:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function elector(store: MemoryLeaseStore, identity: string, reachable?: () => boolean) {
    const state = { leading: false, started: 0, stopped: 0 };
    const stop = new AbortController();
    const done = runLeaderElection(
      store.client(identity, reachable),
      identity,
      {
        onStartedLeading: () => {
          state.leading = true;
          state.started++;
        },
        onStoppedLeading: () => {
          state.leading = false;
          state.stopped++;
        },
      },
      stop.signal,
    );
    return { state, stop: () => stop.abort(), done };
  }

  it('one of two candidates leads; the other waits', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    const b = elector(store, 'b');
    await vi.advanceTimersByTimeAsync(30_000);
    expect([a.state.leading, b.state.leading].filter(Boolean)).toHaveLength(1);
    expect(store.lease?.record.holderIdentity).toBe(a.state.leading ? 'a' : 'b');
    a.stop();
    b.stop();
    await vi.runAllTimersAsync();
  });

  it('the leader renews every retry period', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    await vi.advanceTimersByTimeAsync(100);
    const first = store.lease?.record.renewTime;
    await vi.advanceTimersByTimeAsync(2000);
    expect(store.lease?.record.renewTime).not.toBe(first);
    expect(store.writes.filter((write) => write === 'a update').length).toBeGreaterThanOrEqual(1);
    a.stop();
    await vi.runAllTimersAsync();
  });

  it('a leader that cannot renew stops leading at the renew deadline; another takes over after the lease duration', async () => {
    const store = new MemoryLeaseStore();
    let aReachable = true;
    const a = elector(store, 'a', () => aReachable);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.state.leading).toBe(true);
    const b = elector(store, 'b');
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.state.leading).toBe(false);

    aReachable = false;
    await vi.advanceTimersByTimeAsync(8000);
    expect(a.state.leading).toBe(true); // within the renew deadline (10 s after its last renewal at 0)
    await vi.advanceTimersByTimeAsync(2000);
    expect(a.state.leading).toBe(false);
    expect(a.state.stopped).toBe(1);
    // b saw the record stop changing and takes the lease once it is a lease duration old.
    await vi.advanceTimersByTimeAsync(6000);
    expect(b.state.leading).toBe(true);
    expect(store.lease?.record.holderIdentity).toBe('b');
    expect(store.lease?.record.leaseTransitions).toBe(1);

    // a comes back and sees b holding: it does not lead again.
    aReachable = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(a.state.leading).toBe(false);
    a.stop();
    b.stop();
    await vi.runAllTimersAsync();
  });

  it('shutting down releases the lease so the next candidate need not wait it out', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    await vi.advanceTimersByTimeAsync(100);
    const b = elector(store, 'b');
    await vi.advanceTimersByTimeAsync(100);
    a.stop();
    await vi.advanceTimersByTimeAsync(100);
    await a.done;
    expect(a.state.stopped).toBe(1);
    expect(store.lease?.record.holderIdentity).toBe('');
    await vi.advanceTimersByTimeAsync(2100);
    expect(b.state.leading).toBe(true);
    b.stop();
    await vi.runAllTimersAsync();
  });

  it('renewals that never answer are abandoned; at the renew deadline the leader steps down', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    await vi.advanceTimersByTimeAsync(100);
    expect(a.state.leading).toBe(true);
    store.stallAlways.add('a');
    await vi.advanceTimersByTimeAsync(9000);
    expect(a.state.leading).toBe(true); // within the renew deadline
    await vi.advanceTimersByTimeAsync(2000);
    expect(a.state.leading).toBe(false);
    a.stop();
    await vi.runAllTimersAsync();
  });

  it('one renewal that hangs costs an attempt, not the lease: the next one renews in time', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    await vi.advanceTimersByTimeAsync(100);
    const before = store.lease?.record.renewTime;
    store.stallNext.add('a');
    // The renewal at 2.1 s hangs; abandoned at 6.1 s; the next, at 8.1 s, answers.
    await vi.advanceTimersByTimeAsync(11_000);
    expect(a.state.leading).toBe(true);
    expect(a.state.stopped).toBe(0);
    expect(store.lease?.record.holderIdentity).toBe('a');
    expect(store.lease?.record.renewTime).not.toBe(before);
    a.stop();
    await vi.runAllTimersAsync();
  });

  it('shutting down while a renewal hangs still releases the lease at once', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    await vi.advanceTimersByTimeAsync(100);
    store.stallNext.add('a');
    await vi.advanceTimersByTimeAsync(2000); // the next renewal is now in flight, unanswered
    expect(store.stallNext.has('a')).toBe(false);
    a.stop();
    await vi.advanceTimersByTimeAsync(10);
    expect(a.state.stopped).toBe(1);
    expect(store.lease?.record.holderIdentity).toBe('');
    await a.done;
  });

  it('a release that never answers gives up after a retry period; the lease then just expires', async () => {
    const store = new MemoryLeaseStore();
    const a = elector(store, 'a');
    await vi.advanceTimersByTimeAsync(100);
    a.stop();
    store.stallNext.add('a');
    let finished = false;
    void a.done.then(() => {
      finished = true;
    });
    await vi.advanceTimersByTimeAsync(1900);
    expect(finished).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(finished).toBe(true);
    expect(store.lease?.record.holderIdentity).toBe('a');
  });
});
