export { API_TIMEOUTS, type ApiTimeouts } from './api-timeouts.js';
export { type Clock, every, sleep, systemClock } from './clock.js';
export { withDeadline } from './deadline.js';
export {
  type ListWatchResource,
  listAndWatch,
  type WatchEnd,
  type WatchRestart,
} from './list-watch.js';
export { countPreviousKeyHashes } from './previous-key-metric.js';
export { Slots } from './slots.js';
export { untilAborted } from './until-aborted.js';
