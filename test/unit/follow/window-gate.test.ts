import { expect, it } from 'vitest';
import { gateWindow } from '../../../src/follow/window-gate.js';

const TUESDAY_NOON = new Date('2026-12-01T12:00:00Z');
const RETRY = 600_000;

it.each([
  ['no window: open', undefined, { open: true }],
  ['inside the window: open', 'Mon-Fri 09:00-17:00 UTC', { open: true }],
  [
    'outside: held until the next opening',
    'Mon-Fri 13:00-14:00 UTC',
    {
      open: false,
      valid: true,
      until: new Date('2026-12-01T13:00:00Z'),
      note: 'confighash: config change held until 2026-12-01T13:00:00.000Z (window Mon-Fri 13:00-14:00 UTC)',
    },
  ],
  [
    'unreadable: held for the retry time, and not valid',
    'soon',
    {
      open: false,
      valid: false,
      until: new Date(TUESDAY_NOON.getTime() + RETRY),
      note: expect.stringMatching(/^confighash: rollout window 'soon': .*; config change held$/),
    },
  ],
])('%s', (_name, text, expected) => {
  expect(gateWindow(text, TUESDAY_NOON, RETRY)).toEqual(expected);
});
