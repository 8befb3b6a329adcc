// The logger: JSON lines for machines, pretty only on a terminal. Redaction is
// a second line of defence; the first is that no code logs object content.

import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Fields that would hold object content or credentials if some code ever logged
 * them. Explicit paths, not wildcards: pino compiles these into plain property
 * checks, where wildcard paths cost several microseconds on every log line.
 */
export const REDACTED_PATHS = [
  'object',
  'oldObject',
  'request.object',
  'request.oldObject',
  'body',
  'data',
  'binaryData',
  'stringData',
  'content',
  'err.body',
  'req.headers.authorization',
  'headers.authorization',
];

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export function loggerOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    base: { service: 'confighash' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}

export function createLogger(
  level: LogLevel,
  destination: pino.DestinationStream | undefined = undefined,
  pretty = false,
): Logger {
  const options = loggerOptions(level);
  if (destination) return pino(options, destination);
  if (pretty) return pino({ ...options, transport: { target: 'pino-pretty' } });
  return pino(options);
}
