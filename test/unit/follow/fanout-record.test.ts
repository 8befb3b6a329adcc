// The fan-out record and control as annotations hold them (docs/design.md §6 "The state of a
// change"), and the namespace's canary window: what is not one is read as none, never guessed.

import { describe, expect, it } from 'vitest';
import { canaryWindowOf } from '../../../src/follow/fanout-options.js';
import {
  formatFanoutRecord,
  readFanoutControl,
  readFanoutRecord,
} from '../../../src/workload/index.js';

const DIGEST = '0123456789abcdef';

describe('the record', () => {
  it('reads back what it writes', () => {
    const record = {
      change: DIGEST,
      phase: 'halted' as const,
      since: '2026-12-07T10:00:00.000Z',
      canaries: [
        { group: 'apps', kind: 'Deployment', name: 'web', sent: '2026-12-07T09:59:00.000Z' },
      ],
      why: 'canary deployment/web failed: …',
      rolled: 'fedcba9876543210',
      control: `halt ${DIGEST}`,
    };
    expect(readFanoutRecord(formatFanoutRecord(record))).toEqual(record);
  });

  it.each([
    ['absent', undefined],
    ['not JSON', '{'],
    ['an array', '[]'],
    ['no digest', '{"phase":"halted","since":"x"}'],
    ['a digest of another length', `{"change":"${DIGEST}0","phase":"halted","since":"x"}`],
    ['an unknown phase', `{"change":"${DIGEST}","phase":"paused","since":"x"}`],
    ['no since', `{"change":"${DIGEST}","phase":"halted"}`],
  ])('%s: none', (_, text) => {
    expect(readFanoutRecord(text)).toBeUndefined();
  });
});

describe('the control', () => {
  it.each([
    [`halt ${DIGEST}`, { action: 'halt', change: DIGEST }],
    [` resume ${DIGEST} `, { action: 'resume', change: DIGEST }],
    [`retry-canary ${DIGEST}`, { action: 'retry-canary', change: DIGEST }],
    ['resume', undefined],
    [`pause ${DIGEST}`, undefined],
    [`resume ${DIGEST.toUpperCase()}`, undefined],
  ])('%j', (text, control) => {
    expect(readFanoutControl(text)).toEqual(control);
  });
});

describe('a namespace’s confighash.dev/canary-window', () => {
  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['5', 60_000],
    ['1h', 60_000],
    ['', 60_000],
  ])('%j', (text, ms) => {
    expect(canaryWindowOf({ 'confighash.dev/canary-window': text }, 60_000)).toBe(ms);
  });
});
