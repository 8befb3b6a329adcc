// The watch loops of follow mode: one list-then-watch loop per resource (ConfigMaps,
// Secrets, each workload kind — cluster-wide, or per followed namespace), and the
// follow namespaces themselves. Each lists (at most LIST_SLOTS lists in flight in the
// whole follower), watches from that resourceVersion, resumes when the server ends
// the watch, relists on 410 (too old), and backs off on errors; a kind the cluster
// does not serve (its CRD is absent) is listed again later.

import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi, NamespaceEvent, NamespaceInfo, WatchEnd } from './ports.js';
import { sleep } from './sleep.js';

const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** Lists in flight at once (docs/design.md §6): a start or a relist of many resources queues. */
export const LIST_SLOTS = 4;

export interface WatchDependencies {
  readonly api: FollowApi;
  readonly metrics: Pick<FollowMetrics, 'watchRestart'>;
  readonly logger: FollowLogger;
}

/** One resource, as the follower lists and watches it. */
export interface ListWatch {
  /** Log fields naming it. */
  readonly what: Readonly<Record<string, string>>;
  /** Lists it, whole; the resourceVersion to watch from, or undefined when it is not served. */
  list(signal: AbortSignal): Promise<string | undefined>;
  watch(resourceVersion: string, signal: AbortSignal): Promise<WatchEnd>;
}

/** At most `size` lists at once; the others wait their turn. */
export class ListSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number = LIST_SLOTS) {
    this.#free = size;
  }

  async run<T>(list: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await list();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

/**
 * Lists and watches `resource` until `signal` aborts; with `watch` false, lists it once
 * (retrying until a list succeeds). A resource not served is listed again after `absentRetryMs`.
 */
export async function listAndWatch(
  { metrics, logger }: WatchDependencies,
  slots: ListSlots,
  resource: ListWatch,
  options: { readonly watch: boolean; readonly absentRetryMs: number },
  signal: AbortSignal,
): Promise<void> {
  let done = false;
  // Kept across errors: a watch that failed resumes where it was, only a 410 relists.
  let resourceVersion: string | undefined;
  await retryWithBackoff(
    signal,
    async (healthy) => {
      if (resourceVersion === undefined) {
        const listed = await slots.run(() => resource.list(signal));
        if (listed === undefined) return sleep(options.absentRetryMs, signal);
        if (!options.watch) {
          done = true;
          return;
        }
        resourceVersion = listed;
      }
      const end = await resource.watch(resourceVersion, signal);
      healthy();
      if (signal.aborted) return;
      metrics.watchRestart(restartReason(end));
      resourceVersion = end.expired ? undefined : end.resourceVersion;
    },
    (error) => {
      metrics.watchRestart('error');
      logger.warn({ ...resource.what, err: error.message }, 'follow: watch failed; retrying');
    },
    () => done,
  );
}

/** Lists and watches the follow namespaces until `signal` aborts; relists after a 410. */
export async function watchNamespaces(
  { api, metrics, logger }: WatchDependencies,
  handlers: {
    onListed(namespaces: readonly NamespaceInfo[]): void;
    onEvent(event: NamespaceEvent): void;
  },
  signal: AbortSignal,
): Promise<void> {
  await retryWithBackoff(
    signal,
    async (healthy) => {
      const listed = await api.listFollowNamespaces(signal);
      handlers.onListed(listed.namespaces);
      let resourceVersion = listed.resourceVersion;
      for (;;) {
        const end = await api.watchFollowNamespaces(resourceVersion, handlers.onEvent, signal);
        healthy();
        if (signal.aborted) return;
        resourceVersion = end.resourceVersion;
        metrics.watchRestart(restartReason(end));
        if (end.expired) return; // Relist.
      }
    },
    (error) => {
      metrics.watchRestart('error');
      logger.warn({ err: error.message }, 'follow: namespace watch failed; retrying');
    },
  );
}

function restartReason(end: WatchEnd): 'expired' | 'silent' | 'ended' {
  if (end.expired) return 'expired';
  return end.silent ? 'silent' : 'ended';
}

/** Runs `step` again and again until `signal` aborts or `finished`; after a failure, waits longer each time. */
async function retryWithBackoff(
  signal: AbortSignal,
  step: (healthy: () => void) => Promise<void>,
  onError: (error: Error) => void,
  finished: () => boolean = () => false,
): Promise<void> {
  let backoff = INITIAL_BACKOFF_MS;
  const healthy = () => {
    backoff = INITIAL_BACKOFF_MS;
  };
  while (!signal.aborted && !finished()) {
    try {
      await step(healthy);
    } catch (error) {
      if (signal.aborted) return;
      onError(error as Error);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
