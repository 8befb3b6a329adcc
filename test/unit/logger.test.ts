import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger, REDACTED_PATHS, SERVICE, type Service } from '../../src/runtime/logger.js';
import { reviewLogLevel } from '../../src/server/review-route.js';

function capture(service?: Service) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
  return { lines, logger: createLogger('info', sink, false, service) };
}

it.each(REDACTED_PATHS)('redacts %s should any code log it', (path) => {
  const { lines, logger } = capture();
  const fields: Record<string, unknown> = {};
  let cursor = fields;
  const segments = path.split('.');
  segments.forEach((segment, i) => {
    cursor[segment] = i === segments.length - 1 ? 'hunter2-in-a-log' : {};
    cursor = cursor[segment] as Record<string, unknown>;
  });
  logger.info(fields, 'oops');
  expect(lines.join('')).not.toContain('hunter2-in-a-log');
  expect(lines.join('')).toContain('[redacted]');
});

// Written out here, not taken from the code's list: dropping a path from
// REDACTED_PATHS must fail a test.
it.each([
  ['a Secret logged whole', { data: { password: 'hunter2-in-a-log' } }],
  ['a Secret with stringData', { stringData: { password: 'hunter2-in-a-log' } }],
  ['a ConfigMap with binaryData', { binaryData: { blob: 'hunter2-in-a-log' } }],
  ['an admission object', { object: { data: { password: 'hunter2-in-a-log' } } }],
  ['an old admission object', { oldObject: { data: { password: 'hunter2-in-a-log' } } }],
  ['a whole AdmissionReview request', { request: { object: { data: 'hunter2-in-a-log' } } }],
  ['a request body', { body: '{"data":{"password":"hunter2-in-a-log"}}' }],
  ['content read for hashing', { content: { password: 'hunter2-in-a-log' } }],
  ['an API error body', { err: { message: 'oops', body: 'hunter2-in-a-log' } }],
  ['a bearer token', { req: { headers: { authorization: 'Bearer hunter2-in-a-log' } } }],
])('never logs %s', (_name, fields) => {
  const { lines, logger } = capture();
  logger.info(fields, 'oops');
  expect(lines.join('')).not.toContain('hunter2-in-a-log');
});

// The line that answers "why did my pod roll?" (issue 14): info exactly for these.
it.each([
  ['an UPDATE whose hash changed', { outcome: 'patched', hashChanged: true }, 'info'],
  ['a CREATE hashed for the first time', { outcome: 'patched', hashChanged: false }, 'debug'],
  ['an adoption', { outcome: 'adopted', hashChanged: false }, 'info'],
  ['previous values kept', { outcome: 'kept-old', hashChanged: false }, 'info'],
  ['nothing to do', { outcome: 'unchanged', hashChanged: false }, 'debug'],
  ['not ours', { outcome: 'skipped', hashChanged: false }, 'debug'],
] as const)('the review line of %s is at %s', (_name, result, level) => {
  expect(reviewLogLevel({ ...result, patch: [], warnings: [], lookups: [] })).toBe(level);
});

// What a log pipeline (Loki, Elasticsearch, Cloud Logging) reads without a pino mapping.
it.each([
  ['the webhook', undefined, 'confighash-webhook'],
  ['the webhook, named', SERVICE.serve, 'confighash-webhook'],
  ['the follower', SERVICE.follow, 'confighash-follow'],
] as const)(
  'a line of %s: level as a word, ISO 8601 time, service %s',
  (_name, service, expected) => {
    const { lines, logger } = capture(service);
    logger.warn({ uid: 'u-1' }, 'hello');
    logger.error({}, 'boom');
    const [warn, error] = lines.map((line) => JSON.parse(line));
    expect(warn).toMatchObject({ level: 'warn', service: expected, uid: 'u-1', msg: 'hello' });
    expect(error.level).toBe('error');
    expect(warn.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(warn.time) - Date.now())).toBeLessThan(60_000);
    expect(Object.keys(warn)).not.toContain('pid');
    expect(Object.keys(warn)).not.toContain('hostname');
  },
);
