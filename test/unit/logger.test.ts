import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger, REDACTED_PATHS } from '../../src/server/logger.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
  return { lines, logger: createLogger('info', sink) };
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
