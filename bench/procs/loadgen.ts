// The load generator, in its own process: autocannon (keep-alive, one request
// in flight per connection, like the apiserver's client) against one URL.
// autocannon's own histogram has whole-millisecond buckets, so every response
// time (hrtime, in ms with decimals) is kept here at microsecond resolution.

import autocannon from 'autocannon';
import { serveRequests } from './ipc.js';

export interface LoadRequest {
  readonly url: string;
  readonly body: string;
  readonly connections: number;
  readonly durationS: number;
  readonly warmupS: number;
  /** Fixed request rate (all connections together); closed loop when absent. */
  readonly rate?: number;
  /** Stop after this many requests instead of after durationS. */
  readonly amount?: number;
}

export interface LoadResult {
  readonly responses: number;
  readonly elapsedS: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  /** Every response time, in microseconds. */
  readonly samplesUs: number[];
}

async function load(request: LoadRequest, durationS: number): Promise<LoadResult> {
  const samplesUs: number[] = [];
  let non2xx = 0;
  const started = process.hrtime.bigint();
  let last = started;
  const instance = autocannon({
    url: request.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: request.body,
    connections: request.connections,
    pipelining: 1,
    duration: durationS,
    timeout: 10,
    sampleInt: 100,
    ...(request.rate ? { overallRate: request.rate } : {}),
    ...(request.amount ? { amount: request.amount } : {}),
  });
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    last = process.hrtime.bigint();
    if (statusCode < 200 || statusCode > 299) non2xx++;
    samplesUs.push(Math.round(responseTimeMs * 1000));
  });
  const result = await instance;
  return {
    responses: samplesUs.length,
    elapsedS: Number(last - started) / 1e9,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx,
    samplesUs,
  };
}

serveRequests({
  async run(message) {
    const request = message.request as LoadRequest;
    if (request.warmupS > 0) await load(request, request.warmupS);
    return load(request, request.durationS);
  },
});
