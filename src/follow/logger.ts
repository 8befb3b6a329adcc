// The logger follow mode writes to is the runtime's (src/runtime/logger.ts).
export type { LeveledLog as FollowLogger } from '../runtime/logger.js';
