// The one list-then-watch loop (docs/design.md §4 "Namespace check", §6): the webhook's
// view of the opted-in namespaces and every watch of follow mode run on it. It lists,
// watches from that resourceVersion, resumes from the last one when the server ends the
// watch or the watch fails, relists only on 410 (too old), and backs off from 1 s to 30 s
// while lists or watches fail. A resource the cluster does not serve (its CRD is absent)
// is listed again later.

import { type Clock, sleep, systemClock } from './clock.js';
import type { Slots } from './slots.js';

const INITIAL_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/** How a watch ended; `expired` means the resourceVersion was too old (410) and a relist is needed. */
export interface WatchEnd {
  readonly resourceVersion: string;
  readonly expired: boolean;
  /** Ended by us: neither event nor bookmark for ApiTimeouts.watchSilenceMs. */
  readonly silent?: boolean;
}

/** Why the loop lists or watches again. */
export type WatchRestart = 'expired' | 'silent' | 'ended' | 'error';

/** One resource, as a list and a watch; each hands what it sees on to its owner. */
export interface ListWatchResource {
  /** Lists it, whole; the resourceVersion to watch from, or undefined when it is not served. */
  list(signal: AbortSignal): Promise<string | undefined>;
  watch(resourceVersion: string, signal: AbortSignal): Promise<WatchEnd>;
}

interface ListWatchOptions {
  /** false: list once (retrying until a list succeeds) and stop. Default true. */
  readonly watch?: boolean;
  /** A resource not served is listed again after this. */
  readonly absentRetryMs?: number;
  /** Lists wait for one of these: a start or a relist of many resources queues. */
  readonly listSlots?: Slots;
  /** Each restart; `error` with what failed (the loop backs off, then tries again). */
  readonly onRestart?: (reason: WatchRestart, error?: Error) => void;
  readonly clock?: Clock;
}

/** Lists and watches `resource` until `signal` aborts (or, with `watch` false, one list succeeds). */
export async function listAndWatch(
  resource: ListWatchResource,
  options: ListWatchOptions,
  signal: AbortSignal,
): Promise<void> {
  const { watch = true, absentRetryMs = MAX_BACKOFF_MS, onRestart = () => {} } = options;
  const clock = options.clock ?? systemClock;
  // Kept across errors: a watch that failed resumes where it was, only a 410 relists.
  let resourceVersion: string | undefined;
  let backoff = INITIAL_BACKOFF_MS;
  while (!signal.aborted) {
    try {
      if (resourceVersion === undefined) {
        const listed = await listInSlot(resource, options.listSlots, signal);
        if (signal.aborted) return;
        if (listed === undefined) {
          await sleep(absentRetryMs, signal, clock);
          continue;
        }
        if (!watch) return;
        resourceVersion = listed;
      }
      const end = await resource.watch(resourceVersion, signal);
      backoff = INITIAL_BACKOFF_MS;
      if (signal.aborted) return;
      onRestart(restartReason(end));
      resourceVersion = end.expired ? undefined : end.resourceVersion;
    } catch (error) {
      if (signal.aborted) return;
      onRestart('error', error as Error);
      await sleep(backoff, signal, clock);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

async function listInSlot(
  resource: ListWatchResource,
  slots: Slots | undefined,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (!slots) return resource.list(signal);
  if (!(await slots.take(signal))) return undefined;
  try {
    return await resource.list(signal);
  } finally {
    slots.release();
  }
}

function restartReason(end: WatchEnd): Exclude<WatchRestart, 'error'> {
  if (end.expired) return 'expired';
  return end.silent ? 'silent' : 'ended';
}
