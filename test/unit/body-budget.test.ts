// The body budget (src/server/body-budget.ts): what is let in at once, and that
// small reviews are never held behind large ones.

import { expect, it } from 'vitest';
import { ByteBudget } from '../../src/server/body-budget.js';

const NEVER = new AbortController().signal;

it('lets bodies in while they fit, and the next one when bytes come back', async () => {
  const budget = new ByteBudget(10);
  expect(budget.take(7, NEVER)).toBe(true);
  const waiting = budget.take(7, NEVER);
  expect(waiting).toBeInstanceOf(Promise);
  budget.release(7);
  expect(await waiting).toBe(true);
});

it('a small body passes a large one that waits', async () => {
  const budget = new ByteBudget(10);
  expect(budget.take(7, NEVER)).toBe(true);
  const large = budget.take(7, NEVER);
  expect(budget.take(2, NEVER)).toBe(true);
  budget.release(2);
  budget.release(7);
  expect(await large).toBe(true);
});

it('a waiter whose signal aborts gets false and takes nothing', async () => {
  const budget = new ByteBudget(10);
  expect(budget.take(7, NEVER)).toBe(true);
  const gaveUp = new AbortController();
  const waiting = budget.take(7, gaveUp.signal);
  gaveUp.abort();
  expect(await waiting).toBe(false);
  budget.release(7);
  expect(budget.take(10, NEVER)).toBe(true);
});
