// The harness's one poll (tools/lib/poll.ts), on vitest's fake timers: when it tries, when it
// gives up, and what it ends with. Every wait in bench/, tools/ and test/support runs on it.

import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { poll } from '../../tools/lib/poll.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs `poll` on the fake clock to its end; the times (ms) of its tries and what it ended with. */
async function run(answerAt: number | undefined, options: Parameters<typeof poll<string>>[1]) {
  const tries: number[] = [];
  const ended = poll(async () => {
    tries.push(Date.now());
    return answerAt !== undefined && Date.now() >= answerAt ? 'answered' : undefined;
  }, options).then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );
  await vi.advanceTimersByTimeAsync(10_000);
  return { tries, ended: await ended };
}

it('tries until an answer, resting between tries', async () => {
  expect(await run(250, { restMs: 100, timeoutMs: 1_000 })).toEqual({
    tries: [0, 100, 200, 300],
    ended: { value: 'answered' },
  });
});

it('begins no try past the deadline, and ends with what timedOut gives', async () => {
  expect(await run(undefined, { restMs: 100, timeoutMs: 350, timedOut: () => 'gave up' })).toEqual({
    tries: [0, 100, 200, 300],
    ended: { value: 'gave up' },
  });
});

it('counts the deadline from `since`', async () => {
  expect(await run(undefined, { restMs: 100, timeoutMs: 1_150, since: -1_000 })).toEqual({
    tries: [0, 100],
    ended: { error: 'timed out after 1.15 s' },
  });
});

it('always makes the first try, even past the deadline', async () => {
  expect(await run(undefined, { restMs: 100, timeoutMs: 50, since: -1_000 })).toEqual({
    tries: [0],
    ended: { error: 'timed out after 0.05 s' },
  });
});

it('rests as long as restMs says after each try', async () => {
  expect(await run(undefined, { restMs: (triedAt) => 100 + triedAt, timeoutMs: 1_000 })).toEqual({
    tries: [0, 100, 300, 700],
    ended: { error: 'timed out after 1 s' },
  });
});
