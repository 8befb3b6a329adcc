// The lookup budget from the caller's `?timeout=` and the registration's timeoutSeconds
// (docs/design.md §4 "Deadline").

import { expect, it } from 'vitest';
import { lookupBudgetMs } from '../../src/admission/index.js';
import { parseGoDuration } from '../../src/runtime/index.js';

it.each([
  ['10s', 10_000],
  ['1m30s', 90_000],
  ['2.5s', 2_500],
  ['500ms', 500],
  ['', undefined],
  ['10', undefined],
  ['10x', undefined],
])('parses the Go duration %j', (text, expected) => {
  expect(parseGoDuration(text)).toBe(expected);
});

// The registration's timeoutSeconds bounds the caller's: a review POSTed by anyone with
// `?timeout=30s` holds the budgets no longer than the apiserver's own 5 s reviews.
it.each([
  ['the registration 5s: less a one-second margin', '5s', 5_000, 4_000],
  ['a shorter caller timeout: less a fifth', '2s', 5_000, 1_600],
  ['no timeout: the registration timeout', undefined, 5_000, 4_000],
  ['a malformed timeout: the registration timeout', 'soon', 5_000, 4_000],
  ['a caller 30s is cut to the registration 5s', '30s', 5_000, 4_000],
  ['a caller 30s against a 30 s registration', '30s', 30_000, 29_000],
  ['an absurd timeout is cut to the registration timeout', '99999999999h', 10_000, 9_000],
  ['a timeout too long for any timer is cut', `${'9'.repeat(400)}s`, 10_000, 9_000],
  ['a zero timeout still leaves a minimum', '0s', 5_000, 50],
])('%s', (_name, query, registration, expected) => {
  expect(lookupBudgetMs(query, registration)).toBe(expected);
});
