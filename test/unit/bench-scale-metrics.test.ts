// The arithmetic behind the `scale` scenario's figures (bench/lib/scale-metrics.ts):
// pure functions over given /metrics texts and samples, no clock.

import { describe, expect, it } from 'vitest';
import {
  deltaOf,
  drainSeconds,
  firstBurst,
  quietFor,
  requestCounts,
  verbTotal,
  watchCounts,
} from '../../bench/lib/scale-metrics.js';

const requestLine = (verb: string, resource: string, code: string, value: number, sub = '') =>
  `apiserver_request_total{code="${code}",component="apiserver",dry_run="",group="",resource="${resource}",scope="resource",subresource="${sub}",verb="${verb}",version="v1"} ${value}`;

const METRICS = [
  '# HELP apiserver_request_total [STABLE] Counter of apiserver requests',
  '# TYPE apiserver_request_total counter',
  requestLine('GET', 'configmaps', '200', 10),
  requestLine('GET', 'configmaps', '404', 2),
  requestLine('LIST', 'deployments', '200', 3),
  requestLine('PUT', 'deployments', '200', 4, 'status'),
  'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 99',
  'apiserver_request_total_other{verb="GET",resource="configmaps"} 1000',
  'apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="cluster",subresource="",verb="WATCH",version="v1"} 2',
  'apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 3',
  'apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="log",verb="GET",version="v1"} 1',
].join('\n');

describe('requestCounts and watchCounts', () => {
  it('sums every code and scope by verb and resource, subresource apart, non-resource requests left out', () => {
    expect(requestCounts(METRICS)).toEqual({
      'GET configmaps': 12,
      'LIST deployments': 3,
      'PUT deployments/status': 4,
    });
  });

  it('counts only WATCH among the long-running requests', () => {
    expect(watchCounts(METRICS)).toEqual({ configmaps: 5 });
  });

  it('rejects a line it cannot read', () => {
    expect(() => requestCounts('apiserver_request_total{verb="GET" 1')).toThrow(/malformed/);
    expect(() => requestCounts(`${requestLine('GET', 'x', '200', 1).slice(0, -2)} x`)).toThrow(
      /malformed metric value/,
    );
  });
});

describe('deltaOf', () => {
  it('keeps only what moved, largest first, new keys included', () => {
    const delta = deltaOf({ 'GET a': 5, 'LIST b': 1 }, { 'GET a': 5, 'LIST b': 3, 'GET c': 7 });
    expect(delta).toEqual({ 'GET c': 7, 'LIST b': 2 });
    expect(Object.keys(delta)).toEqual(['GET c', 'LIST b']);
    expect(verbTotal({ 'GET a': 2, 'GET b': 3, 'LIST a': 1 }, 'GET')).toBe(5);
  });
});

describe('firstBurst', () => {
  const work = (key: string) => !key.endsWith(' leases');
  const series = (gets: number[], leases: number[] = gets.map((_, i) => i)) =>
    gets.map((n, i) => ({
      atMs: i * 1000,
      counts: { 'GET deployments': n, 'PUT leases': leases[i]! },
    }));

  it('returns the first burst whole, ignoring what is not counted', () => {
    const burst = firstBurst(series([0, 0, 4, 9, 9, 9, 9, 20, 25]), work, 3);
    expect(burst).toEqual({ delta: { 'GET deployments': 9 }, startMs: 1000, complete: true });
  });

  it('reports no burst when only uncounted requests moved', () => {
    expect(firstBurst(series([1, 1, 1, 1]), work, 2)).toEqual({ delta: {}, complete: true });
  });

  it('says when the series ends inside the burst', () => {
    const burst = firstBurst(series([0, 2, 5, 5]), work, 3);
    expect(burst.complete).toBe(false);
    expect(burst.delta).toEqual({ 'GET deployments': 5 });
  });
});

describe('drainSeconds', () => {
  it('is the debounce plus what exceeds the burst at the rate', () => {
    const defaults = { rate: 5, burst: 20, debounceS: 10 };
    expect(drainSeconds(5000, defaults)).toBe(10 + 4980 / 5);
    expect(drainSeconds(10, defaults)).toBe(10);
  });
});

describe('quietFor', () => {
  it('compares the CPU used over the last window with a share of one core', () => {
    // [ms, CPU µs]: 100 ms of CPU in the last 5 s is 2 % of a core.
    const samples: [number, number][] = [
      [0, 0],
      [5000, 1_000_000],
      [10_000, 1_100_000],
    ];
    expect(quietFor(samples, 5000, 0.03)).toBe(true);
    expect(quietFor(samples, 5000, 0.01)).toBe(false);
    expect(quietFor(samples, 10_000, 0.03)).toBe(false);
    expect(quietFor(samples.slice(1), 6000, 0.03)).toBe(false);
  });
});
