import { expect, it } from 'vitest';
import { TokenBucket } from '../../../src/follow/rate-limit.js';

it('allows a burst, then the steady rate', () => {
  const bucket = new TokenBucket(5, 20, 0);
  const burst = Array.from({ length: 25 }, () => bucket.take(0).ok);
  expect(burst.filter(Boolean)).toHaveLength(20);
  expect(bucket.take(0)).toEqual({ ok: false, waitMs: 200 });
  expect(bucket.take(200).ok).toBe(true);
  expect(bucket.take(200).ok).toBe(false);
});

it.each([
  ['one second refills five tokens', 1000, 5],
  ['ten seconds refill at most the burst', 10_000, 20],
  ['a tenth of a second refills none', 100, 0],
])('%s', (_name, elapsed, expected) => {
  const bucket = new TokenBucket(5, 20, 0);
  while (bucket.take(0).ok) {
    // drain
  }
  let taken = 0;
  while (bucket.take(elapsed).ok) taken++;
  expect(taken).toBe(expected);
});

it('does not refill when the clock goes backwards', () => {
  const bucket = new TokenBucket(1, 1, 1000);
  expect(bucket.take(1000).ok).toBe(true);
  expect(bucket.take(0).ok).toBe(false);
});
