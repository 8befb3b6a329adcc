// The logger both processes write to: JSON lines for machines, pretty only on a terminal.
// Redaction is a second line of defence; the first is that no code logs object content.
// What a use case needs of it is LeveledLog: pino's shape, so commands pass a child logger.

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

/** The logger as a use case sees it (follow mode): four levels, structured fields first. */
export interface LeveledLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

function loggerOptions(level: LogLevel): LoggerOptions {
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
