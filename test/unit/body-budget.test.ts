// The body budget (src/server/body-budget.ts): what is let in at once, that small
// reviews are never held behind large ones, and what is refused at once.

import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/runtime/index.js';
import { BodyBudgets, type Refusal, type Ticket } from '../../src/server/body-budget.js';

const NEVER = new AbortController().signal;
const neverGivenUp = () => NEVER;

describe('Slots, a byte each (the budget of each share)', () => {
  it('lets bodies in while they fit, and the next one when bytes come back', async () => {
    const budget = new Slots(10);
    expect(budget.take(NEVER, 7)).toBe(true);
    const waiting = budget.take(NEVER, 7);
    expect(waiting).toBeInstanceOf(Promise);
    budget.release(7);
    expect(await waiting).toBe(true);
  });

  it('a small body passes a large one that waits', async () => {
    const budget = new Slots(10);
    expect(budget.take(NEVER, 7)).toBe(true);
    const large = budget.take(NEVER, 7);
    expect(budget.take(NEVER, 2)).toBe(true);
    budget.release(2);
    budget.release(7);
    expect(await large).toBe(true);
  });

  it('a waiter whose signal aborts gets false and takes nothing', async () => {
    const budget = new Slots(10);
    expect(budget.take(NEVER, 7)).toBe(true);
    const gaveUp = new AbortController();
    const waiting = budget.take(gaveUp.signal, 7);
    gaveUp.abort();
    expect(await waiting).toBe(false);
    budget.release(7);
    expect(budget.take(NEVER, 10)).toBe(true);
  });

  it.each([
    ['takes what fits', [4], 6, [true]],
    ['refuses what does not fit, taking nothing', [7, 4], 3, [true, false]],
    ['takes up to the last byte', [7, 3], 0, [true, true]],
  ])('tryTake %s, never waiting', (_, asks, free, expected) => {
    const budget = new Slots(10);
    expect(asks.map((bytes) => budget.tryTake(bytes))).toEqual(expected);
    expect(budget.size - budget.inUse).toBe(free);
  });
});

/** Small: at most 2 bytes, a share of 4, 3 per address; large: a share of 12, 8 per address. */
const SIZES = {
  smallBodyBytes: 2,
  smallShare: 4,
  smallPerAddress: 3,
  largeShare: 12,
  largePerAddress: 8,
};

type Outcome = 'taken' | 'waits' | 413 | 503;

function outcome(place: Refusal | Ticket): Outcome {
  if (place.refused) return place.refused;
  return place.granted === true ? 'taken' : 'waits';
}

describe('BodyBudgets: which share, and what is refused at once', () => {
  it.each<[string, [bytes: number, address: string][], Outcome[]]>([
    [
      'a small body is taken while the large share is full',
      [
        [7, 'a'],
        [5, 'b'],
        [2, 'c'],
      ],
      ['taken', 'taken', 'taken'],
    ],
    [
      'a large body never takes from the small share',
      [
        [7, 'a'],
        [5, 'b'],
        [3, 'c'],
      ],
      ['taken', 'taken', 'waits'],
    ],
    [
      'small bodies wait once the small share is full',
      [
        [2, 'a'],
        [2, 'b'],
        [1, 'c'],
      ],
      ['taken', 'taken', 'waits'],
    ],
    [
      "a small body past its address's bound is refused 503",
      [
        [2, 'a'],
        [1, 'a'],
        [1, 'a'],
      ],
      ['taken', 'taken', 503],
    ],
    [
      'an address has a bound in each share, apart',
      [
        [2, 'a'],
        [1, 'a'],
        [8, 'a'],
      ],
      ['taken', 'taken', 'taken'],
    ],
    [
      "a large body past its address's bound is refused 503",
      [
        [5, 'a'],
        [3, 'a'],
        [3, 'a'],
      ],
      ['taken', 'taken', 503],
    ],
    [
      'the bytes an address waits for count toward its bound',
      [
        [7, 'b'],
        [5, 'a'],
        [3, 'a'],
        [3, 'a'],
      ],
      ['taken', 'taken', 'waits', 503],
    ],
    [
      'another address is let in while one is at its bound',
      [
        [5, 'a'],
        [3, 'a'],
        [3, 'a'],
        [3, 'b'],
      ],
      ['taken', 'taken', 503, 'taken'],
    ],
    ['a declared length larger than its share is refused 413', [[13, 'a']], [413]],
  ])('%s', (_, requests, expected) => {
    const budgets = new BodyBudgets(SIZES);
    const outcomes = requests.map(([bytes, address]) =>
      outcome(budgets.admit(bytes, address, neverGivenUp)),
    );
    expect(outcomes).toEqual(expected);
  });

  it('asks for the signal that ends a wait only when the body must wait', () => {
    const budgets = new BodyBudgets(SIZES);
    let asked = 0;
    const counted = () => {
      asked++;
      return NEVER;
    };
    expect(outcome(budgets.admit(7, 'b', counted))).toBe('taken');
    expect(outcome(budgets.admit(5, 'c', counted))).toBe('taken');
    expect(outcome(budgets.admit(13, 'a', counted))).toBe(413);
    expect(asked).toBe(0);
    expect(outcome(budgets.admit(5, 'a', counted))).toBe('waits');
    expect(asked).toBe(1);
  });

  it('a refusal takes nothing: the share and the address are as they were', () => {
    const budgets = new BodyBudgets(SIZES);
    expect(outcome(budgets.admit(5, 'a', neverGivenUp))).toBe('taken');
    expect(outcome(budgets.admit(13, 'a', neverGivenUp))).toBe(413);
    expect(outcome(budgets.admit(4, 'a', neverGivenUp))).toBe(503);
    expect(budgets.heldBy('a')).toBe(5);
    expect(outcome(budgets.admit(7, 'b', neverGivenUp))).toBe('taken');
  });
});

/** Two other addresses take the whole large share. */
function fillLargeShare(budgets: BodyBudgets): Ticket[] {
  const holders = [
    budgets.admit(7, 'b', neverGivenUp),
    budgets.admit(5, 'c', neverGivenUp),
  ] as Ticket[];
  expect(holders.map(outcome)).toEqual(['taken', 'taken']);
  return holders;
}

describe("BodyBudgets: an address's bytes come back", () => {
  it.each<[string, (budgets: BodyBudgets) => Promise<void>]>([
    [
      'when its body is released',
      async (budgets) => {
        const place = budgets.admit(5, 'a', neverGivenUp) as Ticket;
        place.release();
      },
    ],
    [
      'when its wait is given up',
      async (budgets) => {
        const holders = fillLargeShare(budgets);
        const gaveUp = new AbortController();
        const place = budgets.admit(5, 'a', () => gaveUp.signal) as Ticket;
        gaveUp.abort();
        expect(await place.granted).toBe(false);
        for (const holder of holders) holder.release();
      },
    ],
    [
      'when it waited, was let in, and is released',
      async (budgets) => {
        const holders = fillLargeShare(budgets);
        const place = budgets.admit(5, 'a', neverGivenUp) as Ticket;
        for (const holder of holders) holder.release();
        expect(await place.granted).toBe(true);
        place.release();
      },
    ],
    [
      'when it is refused holding nothing',
      async (budgets) => {
        expect(outcome(budgets.admit(9, 'a', neverGivenUp))).toBe(503);
      },
    ],
  ])('%s, and an address holding nothing is forgotten', async (_, act) => {
    const budgets = new BodyBudgets(SIZES);
    await act(budgets);
    expect(budgets.heldBy('a')).toBe(0);
    expect(budgets.addresses).toBe(0);
    // Every byte is back: the whole large share fits again, from the address's bound.
    expect(outcome(budgets.admit(8, 'a', neverGivenUp))).toBe('taken');
    expect(outcome(budgets.admit(4, 'b', neverGivenUp))).toBe('taken');
  });
});
