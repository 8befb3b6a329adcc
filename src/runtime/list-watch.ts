// The one list-then-watch loop (docs/design.md §4 "Namespace check", §6), modelled on
// client-go's tools/cache: a ListerWatcher is the port (the adapter knows the path, the
// representation and how to decode; its owner supplies only a handler of what it sees),
// and this loop is the reflector. The webhook's view of the opted-in namespaces and every
// watch of follow mode run on it. It lists, watches from that resourceVersion, resumes
// from the last one when the server ends the watch or the watch fails, relists only on
// 410 (too old), and backs off with jitter (backoff.ts) while lists or watches fail. A
// resource the cluster does not serve (its CRD is absent) is listed again later.

import { Backoff, type BackoffOptions } from './backoff.js';
import { type Clock, sleep, systemClock } from './clock.js';
import type { Slots } from './slots.js';

/** A resource not served is listed again after this, unless told otherwise. */
const ABSENT_RETRY_MS = 30_000;

export type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One list's pages, in order, as they arrive; `end` once the list is whole. */
export interface ListPages<T> {
  page(objects: readonly T[]): void;
  end(): void;
}

/** What the owner of a listed and watched resource does with what it shows (client-go's Store). */
export interface ListWatchHandler<T> {
  /** A list starts (the first, or a relist after a 410). */
  list(): ListPages<T>;
  event(type: ObjectEventType, object: T): void;
}

/** The port: a resource of the cluster, listed and watched into `handler`. */
export type ListerWatcher<T> = (handler: ListWatchHandler<T>) => ListWatchResource;

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

export interface ListWatchOptions {
  /** false: list once (retrying until a list succeeds) and stop. Default true. */
  readonly watch?: boolean;
  /** A resource not served is listed again after this. */
  readonly absentRetryMs?: number;
  /** Lists wait for one of these: a start or a relist of many resources queues. */
  readonly listSlots?: Slots;
  /** Each restart; `error` with what failed (the loop backs off, then tries again). */
  readonly onRestart?: (reason: WatchRestart, error?: Error) => void;
  /** Each list that was sent, once it succeeded, failed or found the resource not served. */
  readonly onListEnd?: () => void;
  readonly backoff?: BackoffOptions;
  readonly clock?: Clock;
}

/** Lists and watches `resource` until `signal` aborts (or, with `watch` false, one list succeeds). */
export async function listAndWatch(
  resource: ListWatchResource,
  options: ListWatchOptions,
  signal: AbortSignal,
): Promise<void> {
  const { watch = true, absentRetryMs = ABSENT_RETRY_MS, onRestart = () => {} } = options;
  const clock = options.clock ?? systemClock;
  const backoff = new Backoff(options.backoff);
  // Kept across errors: a watch that failed resumes where it was, only a 410 relists.
  let resourceVersion: string | undefined;
  while (!signal.aborted) {
    let watchedAt: number | undefined;
    try {
      if (resourceVersion === undefined) {
        const listed = await listInSlot(resource, options, signal);
        if (signal.aborted) return;
        if (listed === undefined) {
          await sleep(absentRetryMs, signal, clock);
          continue;
        }
        if (!watch) return;
        resourceVersion = listed;
      }
      watchedAt = clock.now();
      const end = await resource.watch(resourceVersion, signal);
      backoff.ran(clock.now() - watchedAt);
      if (signal.aborted) return;
      onRestart(restartReason(end));
      resourceVersion = end.expired ? undefined : end.resourceVersion;
    } catch (error) {
      if (signal.aborted) return;
      if (watchedAt !== undefined) backoff.ran(clock.now() - watchedAt);
      onRestart('error', error as Error);
      await sleep(backoff.next(), signal, clock);
    }
  }
}

async function listInSlot(
  resource: ListWatchResource,
  { listSlots: slots, onListEnd = () => {} }: ListWatchOptions,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (slots && !(await slots.take(signal))) return undefined;
  try {
    return await resource.list(signal);
  } finally {
    slots?.release();
    onListEnd();
  }
}

function restartReason(end: WatchEnd): Exclude<WatchRestart, 'error'> {
  if (end.expired) return 'expired';
  return end.silent ? 'silent' : 'ended';
}
