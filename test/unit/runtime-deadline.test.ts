// withDeadline (src/runtime/deadline.ts): the one deadline of reviews and follow requests. It must abort on the
// caller's signal or at its deadline, and once the work settles it must leave nothing
// on the caller's long-lived signal — the leak it replaces was exactly that.

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SHARED_DEADLINE_MS } from '../../src/runtime/deadline.js';
import { type Clock, systemClock, withDeadline } from '../../src/runtime/index.js';

/** Work that ends only when its signal aborts, with the signal's reason. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}

describe('withDeadline', () => {
  it('hands on the answer and leaves no listener on the caller’s signal', async () => {
    const caller = new AbortController();
    for (let i = 0; i < 3; i++) {
      await expect(withDeadline(caller.signal, 1000, async () => i)).resolves.toBe(i);
    }
    await expect(
      withDeadline(caller.signal, 1000, async () => Promise.reject(new Error('no'))),
    ).rejects.toThrow('no');
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the work when the deadline passes', async () => {
    const caller = new AbortController();
    const error = await withDeadline(caller.signal, 20, untilAborted).catch((e: Error) => e);
    expect(error).toMatchObject({ name: 'TimeoutError', message: 'no answer within 20 ms' });
    expect(caller.signal.aborted).toBe(false);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the work with the caller’s reason when the caller aborts', async () => {
    const caller = new AbortController();
    const running = withDeadline(caller.signal, 60_000, untilAborted);
    caller.abort(new Error('leadership lost'));
    await expect(running).rejects.toThrow('leadership lost');
  });

  it('starts the work already aborted when the caller’s signal is', async () => {
    const caller = new AbortController();
    caller.abort(new Error('stopped'));
    let seen: boolean | undefined;
    await withDeadline(caller.signal, 60_000, async (signal) => {
      seen = signal.aborted;
    });
    expect(seen).toBe(true);
  });

  describe('without a caller’s signal (a review)', () => {
    /** A clock at `now` that records its timers and fires none. */
    function recordingClock(now: number) {
      const timers: number[] = [];
      const keptAlive: boolean[] = [];
      const clock: Clock = {
        now: () => now,
        setTimer(ms, _fire, options) {
          timers.push(ms);
          keptAlive.push(options?.keepAlive !== false);
          return () => {};
        },
      };
      return { clock, timers, keptAlive, at: (ms: number) => (now = ms) };
    }
    const signalOf = (clock: Clock, ms: number) =>
      withDeadline(undefined, ms, async (signal) => signal, clock);

    it('work that starts within one bucket shares one signal and one timer', async () => {
      const { clock, timers, at } = recordingClock(1_000);
      const first = await signalOf(clock, 5_000);
      at(1_000 + SHARED_DEADLINE_MS - 1);
      expect(await signalOf(clock, 5_000)).toBe(first);
      expect(timers).toHaveLength(1);
      at(1_000 + SHARED_DEADLINE_MS);
      expect(await signalOf(clock, 5_000)).not.toBe(first);
      expect(await signalOf(clock, 3_000)).not.toBe(first);
      expect(timers).toHaveLength(3);
    });

    it('its deadline comes no later than asked, and at most a bucket early', async () => {
      for (const start of [1_000, 1_003, 1_009, 1_010]) {
        const { clock, timers } = recordingClock(start);
        await signalOf(clock, 5_000);
        expect(timers[0]).toBeLessThanOrEqual(5_000);
        expect(timers[0]).toBeGreaterThan(5_000 - SHARED_DEADLINE_MS);
      }
    });

    it('its timer, never cleared, does not keep the process alive (a CLI that is done exits)', async () => {
      const { clock, keptAlive } = recordingClock(1_000);
      await signalOf(clock, 60_000);
      expect(keptAlive).toEqual([false]);
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const before = timers();
      const cancel = systemClock.setTimer(60_000, () => {}, { keepAlive: false });
      expect(timers()).toBe(before);
      cancel();
    });

    it('aborts the work when the deadline passes', async () => {
      const error = await withDeadline(undefined, 20, untilAborted).catch((e: Error) => e);
      expect(error).toMatchObject({ name: 'TimeoutError', message: 'no answer within 20 ms' });
    });

    /** A clock at 1,000 whose timers fire when `fire` is called. */
    function firingClock() {
      const due: (() => void)[] = [];
      const clock: Clock = {
        now: () => 1_000,
        setTimer(_ms, fire) {
          due.push(fire);
          return () => {};
        },
      };
      return {
        clock,
        fire: () => {
          for (const fire of due.splice(0)) fire();
        },
      };
    }

    it.each([
      {
        name: 'a bucket whose work has all settled is not aborted when its time comes',
        pending: 0,
        aborted: false,
      },
      { name: 'a bucket with work still running is', pending: 1, aborted: true },
    ])('$name', async ({ pending, aborted }) => {
      const { clock, fire } = firingClock();
      const settled = await signalOf(clock, 5_000);
      const running = Array.from({ length: pending }, () =>
        withDeadline(undefined, 5_000, untilAborted, clock).catch((e: Error) => e),
      );
      fire();
      expect(settled.aborted).toBe(aborted);
      for (const error of await Promise.all(running)) {
        expect(error).toMatchObject({ name: 'TimeoutError' });
      }
    });

    it('work that starts after its bucket’s time came gets a fresh signal', async () => {
      const { clock, fire } = firingClock();
      const first = await signalOf(clock, 5_000);
      fire();
      expect(await signalOf(clock, 5_000)).not.toBe(first);
    });
  });
});
