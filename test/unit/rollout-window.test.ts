import { describe, expect, it } from 'vitest';
import {
  isWindowOpen,
  nextWindowOpening,
  parseRolloutWindow,
} from '../../src/workload/rollout-window.js';

function windowOf(text: string) {
  const parsed = parseRolloutWindow(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.window;
}

describe('parseRolloutWindow', () => {
  it.each([
    ['Mon-Fri 09:00-17:00 Europe/Berlin', [1, 2, 3, 4, 5], 540, 1020, 'Europe/Berlin'],
    ['mon,wed,fri 9:30-10:00', [1, 3, 5], 570, 600, 'UTC'],
    ['Sat-Sun 00:00-24:00 UTC', [0, 6], 0, 1440, 'UTC'],
    ['Fri-Mon 22:00-06:00 America/New_York', [0, 1, 5, 6], 1320, 360, 'America/New_York'],
    ['Mon-Wed,Fri 08:00-09:00', [1, 2, 3, 5], 480, 540, 'UTC'],
    ['* 12:00-13:00', [0, 1, 2, 3, 4, 5, 6], 720, 780, 'UTC'],
  ])('%s', (text, days, start, end, zone) => {
    const window = windowOf(text);
    expect([...window.days].sort()).toEqual(days);
    expect(window.startMinute).toBe(start);
    expect(window.endMinute).toBe(end);
    expect(window.timeZone).toBe(zone);
  });

  it.each([
    ['', /expected "DAYS HH:MM-HH:MM/],
    ['Mon-Fri', /expected "DAYS HH:MM-HH:MM/],
    ['Mon-Fri 09:00-17:00 Europe/Berlin extra', /expected/],
    ['Someday 09:00-17:00', /'someday' is not a day/],
    ['Mon-Fri 9-17', /'9-17' is not HH:MM-HH:MM/],
    ['Mon-Fri 25:00-26:00', /not a valid time range/],
    ['Mon-Fri 09:61-10:00', /not a valid time range/],
    ['Mon-Fri 10:00-10:00', /empty window/],
    ['Mon-Fri 09:00-17:00 Mars/Olympus', /unknown time zone 'Mars\/Olympus'/],
  ])('rejects %j with a reason', (text, reason) => {
    const parsed = parseRolloutWindow(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(reason);
  });
});

describe('isWindowOpen', () => {
  const berlin = windowOf('Mon-Fri 09:00-17:00 Europe/Berlin');
  const overnight = windowOf('Fri 22:00-06:00 UTC');
  it.each([
    [
      'Berlin: Monday 09:00 local (08:00 UTC in winter) is open',
      berlin,
      '2026-11-30T08:00:00Z',
      true,
    ],
    ['Berlin: Monday 08:59 local is closed', berlin, '2026-11-30T07:59:00Z', false],
    ['Berlin: Monday 17:00 local is closed (end exclusive)', berlin, '2026-11-30T16:00:00Z', false],
    ['Berlin: summer time shifts the UTC hour', berlin, '2026-07-06T07:00:00Z', true],
    ['Berlin: Saturday noon is closed', berlin, '2026-12-05T11:00:00Z', false],
    ['overnight: Friday 23:00 is open', overnight, '2026-12-04T23:00:00Z', true],
    ['overnight: Saturday 05:59 (Friday night) is open', overnight, '2026-12-05T05:59:00Z', true],
    ['overnight: Saturday 06:00 is closed', overnight, '2026-12-05T06:00:00Z', false],
    [
      'overnight: Friday 05:00 (Thursday night) is closed',
      overnight,
      '2026-12-04T05:00:00Z',
      false,
    ],
  ])('%s', (_name, window, at, open) => {
    expect(isWindowOpen(window, new Date(at))).toBe(open);
  });
});

describe('nextWindowOpening', () => {
  it.each([
    [
      'already open: now',
      'Mon-Fri 09:00-17:00 UTC',
      '2026-11-30T10:15:30Z',
      '2026-11-30T10:15:30.000Z',
    ],
    [
      'later the same day',
      'Mon-Fri 09:00-17:00 UTC',
      '2026-11-30T07:00:00Z',
      '2026-11-30T09:00:00.000Z',
    ],
    [
      'after the weekend',
      'Mon-Fri 09:00-17:00 UTC',
      '2026-12-05T12:00:00Z',
      '2026-12-07T09:00:00.000Z',
    ],
    [
      'in another zone',
      'Mon-Fri 09:00-17:00 Europe/Berlin',
      '2026-11-30T06:00:00Z',
      '2026-11-30T08:00:00.000Z',
    ],
  ])('%s', (_name, text, from, expected) => {
    expect(nextWindowOpening(windowOf(text), new Date(from))?.toISOString()).toBe(expected);
  });
});
