// The logger: JSON lines for machines, pretty only on a terminal. Redaction is
// a second line of defence; the first is that no code logs object content.

import pino, { type Logger, type LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'object',
  'oldObject',
  '*.object',
  '*.oldObject',
  '*.data',
  '*.binaryData',
  '*.stringData',
  '*.*.data',
  '*.*.binaryData',
  '*.*.stringData',
  'req.headers.authorization',
  '*.headers.authorization',
];

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

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
