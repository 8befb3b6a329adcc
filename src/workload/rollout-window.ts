// Rollout windows: "Mon-Fri 09:00-17:00 Europe/Berlin". Follow mode touches a
// workload only inside its window; outside, the touch waits for the next opening.

interface RolloutWindow {
  /** Days the window opens, 0 = Sunday … 6 = Saturday (local to the time zone). */
  readonly days: ReadonlySet<number>;
  /** Minutes after local midnight. An end before the start crosses midnight. */
  readonly startMinute: number;
  readonly endMinute: number;
  readonly timeZone: string;
  readonly text: string;
}

type WindowParse = { ok: true; window: RolloutWindow } | { ok: false; error: string };

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/**
 * Accepts `DAYS HH:MM-HH:MM [TIME_ZONE]`, where DAYS is `Mon-Fri`, `Mon,Wed,Fri`,
 * `Sat-Sun`, a mix (`Mon-Wed,Fri`) or `*` for every day. The zone is an IANA
 * name and defaults to UTC.
 */
export function parseRolloutWindow(text: string): WindowParse {
  const parts = text.trim().split(/\s+/);
  if (parts.length < 2 || parts.length > 3) {
    return fail(
      text,
      'expected "DAYS HH:MM-HH:MM [TIME_ZONE]", e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"',
    );
  }
  const [dayText, timeText, zone = 'UTC'] = parts as [string, string, string?];
  const days = parseDays(dayText);
  if (typeof days === 'string') return fail(text, days);
  const times = /^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/.exec(timeText);
  if (!times) return fail(text, `'${timeText}' is not HH:MM-HH:MM`);
  const [startHour, startMin, endHour, endMin] = times.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  if (
    startHour > 23 ||
    endHour > 24 ||
    startMin > 59 ||
    endMin > 59 ||
    (endHour === 24 && endMin > 0)
  ) {
    return fail(text, `'${timeText}' is not a valid time range`);
  }
  const startMinute = startHour * 60 + startMin;
  const endMinute = endHour * 60 + endMin;
  if (startMinute === endMinute) return fail(text, `'${timeText}' is an empty window`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return fail(text, `unknown time zone '${zone}'`);
  }
  return { ok: true, window: { days, startMinute, endMinute, timeZone: zone, text: text.trim() } };
}

function parseDays(text: string): ReadonlySet<number> | string {
  if (text === '*') return new Set([0, 1, 2, 3, 4, 5, 6]);
  const days = new Set<number>();
  for (const part of text.toLowerCase().split(',')) {
    const [from, to = from] = part.split('-') as [string, string?];
    const start = DAY_NAMES.indexOf(from);
    const end = DAY_NAMES.indexOf(to);
    if (start < 0 || end < 0) return `'${part}' is not a day or day range (Mon, Tue, … Sun)`;
    for (let day = start; ; day = (day + 1) % 7) {
      days.add(day);
      if (day === end) break;
    }
  }
  return days;
}

function fail(text: string, reason: string): WindowParse {
  return { ok: false, error: `rollout window '${text.trim()}': ${reason}` };
}

interface LocalTime {
  readonly day: number;
  readonly minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function localTime(date: Date, timeZone: string): LocalTime {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, formatter);
  }
  const parts = Object.fromEntries(
    formatter.formatToParts(date).map((part) => [part.type, part.value]),
  );
  const day = DAY_NAMES.indexOf(String(parts.weekday).toLowerCase());
  return { day, minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

export function isWindowOpen(window: RolloutWindow, at: Date): boolean {
  const { day, minute } = localTime(at, window.timeZone);
  if (window.startMinute < window.endMinute) {
    return window.days.has(day) && minute >= window.startMinute && minute < window.endMinute;
  }
  // Crosses midnight: the evening part belongs to `day`, the morning part to the day before.
  if (minute >= window.startMinute) return window.days.has(day);
  if (minute < window.endMinute) return window.days.has((day + 6) % 7);
  return false;
}

/** The first minute at or after `from` when the window is open; undefined if it never opens. */
export function nextWindowOpening(window: RolloutWindow, from: Date): Date | undefined {
  const start = Math.ceil(from.getTime() / 60_000) * 60_000;
  if (isWindowOpen(window, from)) return from;
  // Minute steps over eight days cover every weekly window and DST shifts.
  for (let t = start; t <= start + 8 * 24 * 60 * 60_000; t += 60_000) {
    if (isWindowOpen(window, new Date(t))) return new Date(t);
  }
  return undefined;
}
