// The logger both processes write to: JSON lines for machines, pretty only on a terminal.
// Each line names its level as a word and its time in ISO 8601 (what log pipelines parse
// without a pino-specific mapping), and the process that wrote it (`service`), so that the
// webhook's and the follower's lines can be told apart once they share a pipeline.
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

/** The `service` field of each line: which of the two long-running processes wrote it. */
export const SERVICE = {
  serve: 'confighash-webhook',
  follow: 'confighash-follow',
} as const;

export type Service = (typeof SERVICE)[keyof typeof SERVICE];

function loggerOptions(level: LogLevel, service: Service): LoggerOptions {
  return {
    level,
    base: { service },
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}

export function createLogger(
  level: LogLevel,
  destination: pino.DestinationStream | undefined = undefined,
  pretty = false,
  service: Service = SERVICE.serve,
): Logger {
  const options = loggerOptions(level, service);
  if (destination) return pino(options, destination);
  if (pretty) return pino({ ...options, transport: { target: 'pino-pretty' } });
  return pino(options);
}
