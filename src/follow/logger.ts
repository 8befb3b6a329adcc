// The logger follow mode writes to: pino's shape, so main passes a child logger.

export interface FollowLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
