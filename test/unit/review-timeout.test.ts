// The lookup budget from the apiserver's `?timeout=` (docs/design.md §4 "Deadline").

import { expect, it } from 'vitest';
import { lookupBudgetMs, parseGoDuration } from '../../src/admission/index.js';

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

it.each([
  ['the default 10s: less a one-second margin', '10s', 9_000],
  ['a short timeout: less a fifth', '2s', 1_600],
  ['no timeout: the API default', undefined, 9_000],
  ['a malformed timeout: the API default', 'soon', 9_000],
  ['the API maximum, 30s', '30s', 29_000],
  ['an absurd timeout is clamped to the API maximum', '99999999999h', 29_000],
  ['a timeout too long for any timer is clamped', `${'9'.repeat(400)}s`, 29_000],
  ['a zero timeout still leaves a minimum', '0s', 50],
])('%s', (_name, query, expected) => {
  expect(lookupBudgetMs(query)).toBe(expected);
});
