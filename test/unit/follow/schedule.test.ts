import { describe, expect, it } from 'vitest';
import { TouchSchedule } from '../../../src/follow/schedule.js';

const options = { debounceMs: 10_000, minIntervalMs: 60_000, maxDelayMs: 60_000 };

describe('debounce', () => {
  it('a burst of changes makes one touch, after the last change settles', () => {
    const schedule = new TouchSchedule(options);
    for (let t = 0; t <= 9000; t += 1000) schedule.request('w', 'configmap/a', t);
    expect(schedule.takeDue(18_999)).toEqual([]);
    expect(schedule.takeDue(19_000)).toEqual([{ key: 'w', reasons: ['configmap/a'] }]);
    expect(schedule.takeDue(100_000)).toEqual([]);
  });

  it('collects every reason', () => {
    const schedule = new TouchSchedule(options);
    schedule.request('w', 'secret/b', 0);
    schedule.request('w', 'configmap/a', 1);
    expect(schedule.takeDue(20_000)).toEqual([{ key: 'w', reasons: ['configmap/a', 'secret/b'] }]);
  });

  it('a steady trickle cannot postpone a touch beyond the maximum delay', () => {
    const schedule = new TouchSchedule(options);
    for (let t = 0; t <= 120_000; t += 5000) schedule.request('w', 'configmap/a', t);
    expect(schedule.nextDueAt()).toBe(60_000);
  });

  it('keeps workloads apart', () => {
    const schedule = new TouchSchedule(options);
    schedule.request('a', 'x', 0);
    schedule.request('b', 'x', 5000);
    expect(schedule.takeDue(10_000).map((touch) => touch.key)).toEqual(['a']);
    expect(schedule.takeDue(15_000).map((touch) => touch.key)).toEqual(['b']);
  });
});

describe('minimum interval', () => {
  it.each([
    ['a change soon after a touch waits for the interval', 1000, 61_000],
    ['a change long after a touch waits only for the debounce', 100_000, 110_000],
  ])('%s', (_name, changeAt, dueAt) => {
    const schedule = new TouchSchedule(options);
    schedule.touched('w', 1000);
    schedule.request('w', 'configmap/a', changeAt);
    expect(schedule.nextDueAt()).toBe(dueAt);
  });
});

it('forgets touches once the interval has passed', () => {
  const schedule = new TouchSchedule(options);
  schedule.touched('w', 0);
  schedule.takeDue(59_999);
  expect(schedule.earliestAllowed('w')).toBe(60_000);
  schedule.takeDue(60_000);
  expect(schedule.earliestAllowed('w')).toBe(0);
});

describe('defer', () => {
  it('puts a touch back for later with its reasons', () => {
    const schedule = new TouchSchedule(options);
    schedule.request('w', 'configmap/a', 0);
    const [touch] = schedule.takeDue(10_000);
    schedule.defer(touch!, 50_000);
    expect(schedule.takeDue(49_999)).toEqual([]);
    expect(schedule.takeDue(50_000)).toEqual([{ key: 'w', reasons: ['configmap/a'] }]);
  });

  it('merges with a newer request, keeping the earlier time', () => {
    const schedule = new TouchSchedule(options);
    schedule.request('w', 'configmap/a', 0);
    const [touch] = schedule.takeDue(10_000);
    schedule.request('w', 'secret/b', 10_000);
    schedule.defer(touch!, 15_000);
    expect(schedule.takeDue(15_000)).toEqual([{ key: 'w', reasons: ['configmap/a', 'secret/b'] }]);
  });
});
