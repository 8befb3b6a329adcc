// One watch stream, bounded (docs/design.md §6): until the stream starts it is bounded like
// any request; then every event or bookmark (bookmarks are on) gives it another silence
// window, and a silent stream — a connection lost without a word — ends. A 410 ends it
// as expired. Follow mode's watches and the webhook's namespace watch share it.

import type { Clock, Random, WatchEnd } from '../runtime/index.js';
import { ApiError, isStatus, streamWatch, type WatchEvent } from './client.js';
import type { ApiRequests } from './requests.js';

/** What a watch hands on: an object's change; bookmarks and errors it handles itself. */
type ObjectEvent = WatchEvent & { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' };

/**
 * The server closes a watch after 300 to 600 s (this times 1 to 2, at random), and it is
 * then resumed from the last resourceVersion. Jittered as client-go's reflector does
 * (minWatchTimeout × (1 + rand)): replicas whose watches started together end them apart,
 * not all in the same second, every five minutes.
 */
export const WATCH_TIMEOUT_SECONDS = 300;

/** This watch's timeout, in [WATCH_TIMEOUT_SECONDS, 2 × WATCH_TIMEOUT_SECONDS). */
export function watchTimeoutSeconds(random: Random): number {
  return Math.floor(WATCH_TIMEOUT_SECONDS * (1 + random()));
}

/**
 * Streams one watch from `resourceVersion`; a 410 (as status or ERROR event) ends it as
 * expired. Until the stream starts it is bounded like any request; then every event or
 * bookmark gives it another ApiTimeouts.watchSilenceMs, and silence ends it (`silent`).
 */
export async function watchFrom(
  { connection, timeouts, clock, random }: ApiRequests,
  path: string,
  resourceVersion: string,
  accept: string,
  signal: AbortSignal,
  onEvent: (event: ObjectEvent) => void,
): Promise<WatchEnd> {
  let latest = resourceVersion;
  let expired = false;
  const silence = new SilenceTimer(clock, timeouts.requestMs);
  const streaming = AbortSignal.any([signal, silence.signal]);
  const separator = path.includes('?') ? '&' : '?';
  const query = `watch=1&allowWatchBookmarks=true&timeoutSeconds=${watchTimeoutSeconds(random)}&resourceVersion=${encodeURIComponent(resourceVersion)}`;
  const handle = (event: WatchEvent) => {
    if (event.type === 'ERROR') {
      if (event.object.code !== 410) {
        throw new ApiError(event.object.code ?? 500, event.object.message ?? 'watch error');
      }
      expired = true;
      return;
    }
    const version = event.object.metadata?.resourceVersion;
    if (version) latest = version;
    silence.rearm(timeouts.watchSilenceMs);
    if (event.type !== 'BOOKMARK') onEvent(event as ObjectEvent);
  };
  const open = () => silence.rearm(timeouts.watchSilenceMs);
  try {
    await streamWatch(connection, `${path}${separator}${query}`, accept, handle, streaming, open);
  } catch (error) {
    if (isStatus(error, 410)) return { resourceVersion: latest, expired: true };
    if (signal.aborted) return { resourceVersion: latest, expired: false };
    if (silence.signal.aborted && !silence.opened) {
      throw new Error(`watch ${path}: no answer within ${timeouts.requestMs} ms`);
    }
    if (!silence.signal.aborted) throw error;
  } finally {
    silence.stop();
  }
  return { resourceVersion: latest, expired, ...(silence.signal.aborted ? { silent: true } : {}) };
}

/** Aborts its signal when not re-armed in time; the first re-arm marks the stream opened. */
class SilenceTimer {
  readonly #abort = new AbortController();
  #cancel: () => void;
  opened = false;

  constructor(
    private readonly clock: Clock,
    ms: number,
  ) {
    this.#cancel = this.#arm(ms);
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  rearm(ms: number): void {
    this.opened = true;
    this.#cancel();
    this.#cancel = this.#arm(ms);
  }

  stop(): void {
    this.#cancel();
  }

  #arm(ms: number): () => void {
    const silent = () => this.#abort.abort(new Error(`silent for ${ms} ms`));
    return this.clock.setTimer(ms, silent, { keepAlive: false });
  }
}
