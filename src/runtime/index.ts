export { API_TIMEOUTS, type ApiTimeouts } from './api-timeouts.js';
export { BACKOFF, Backoff, type BackoffOptions, type Random } from './backoff.js';
export { registerBuildInfo } from './build-info-metric.js';
export { type Clock, every, sleep, systemClock } from './clock.js';
export { withDeadline } from './deadline.js';
export { parseGoDuration } from './duration.js';
export {
  type ListerWatcher,
  type ListPages,
  type ListWatchHandler,
  type ListWatchOptions,
  type ListWatchResource,
  listAndWatch,
  type ObjectEventType,
  type WatchEnd,
  type WatchRestart,
} from './list-watch.js';
export { countPreviousKeyHashes } from './previous-key-metric.js';
export { Slots } from './slots.js';
export { untilAborted } from './until-aborted.js';
