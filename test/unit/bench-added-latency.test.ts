// The arithmetic and the check behind scenario 4's table (bench/lib/added-latency.ts):
// pure functions over given samples, no clock.

import { describe, expect, it } from 'vitest';
import { addedOver, mutatedBy } from '../../bench/lib/added-latency.js';

describe('addedOver', () => {
  it('reports the difference of the percentiles and the percentiles of the paired differences', () => {
    // off: 1..10 ms; the arm: each iteration 2 ms slower, except one 20 ms outlier.
    const off = Array.from({ length: 10 }, (_, i) => (i + 1) * 1000);
    const arm = off.map((us, i) => us + (i === 9 ? 20_000 : 2000));
    const added = addedOver(off, arm);
    expect(added.p50).toBe(2); // 7 ms − 5 ms
    expect(added.paired50).toBe(2);
    expect(added.paired90).toBe(2);
    expect(added.paired99).toBe(20);
    expect(added.p99).toBe(20); // 30 ms − 10 ms
  });

  it('pairs by iteration, not by rank', () => {
    // The arm is the same samples in reverse: no difference of percentiles, large paired ones.
    const off = [1000, 2000, 3000, 4000];
    const arm = [4000, 3000, 2000, 1000];
    const added = addedOver(off, arm);
    expect(added.p50).toBe(0);
    expect(added.paired99).toBe(3);
  });
});

describe('mutatedBy', () => {
  const hash = 'a'.repeat(64);
  const written = ['confighash.dev/hash', 'wave.pusher.com/config-hash'];

  it("accepts exactly the arm's own annotation", () => {
    expect(mutatedBy({ 'wave.pusher.com/config-hash': hash }, written[1], written)).toBe(true);
    expect(mutatedBy({}, undefined, written)).toBe(true);
  });

  it("rejects a missing hash, a malformed one, and another webhook's", () => {
    expect(mutatedBy({}, written[0], written)).toBe(false);
    expect(mutatedBy({ 'confighash.dev/hash': 'not-a-hash' }, written[0], written)).toBe(false);
    expect(
      mutatedBy(
        { 'confighash.dev/hash': hash, 'wave.pusher.com/config-hash': hash },
        written[0],
        written,
      ),
    ).toBe(false);
    expect(mutatedBy({ 'confighash.dev/hash': hash }, undefined, written)).toBe(false);
  });
});
