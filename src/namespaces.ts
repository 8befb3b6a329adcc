// The namespace check (docs/design.md §4, §10): whether a review's namespace is
// opted in as confighash itself sees it, never as the review says. The port
// POSTs reach from any pod, so a review naming `kube-system` must cost no
// lookup. A metadata-only watch keeps the opted-in namespaces (0 GETs per
// review once synced); when it says "not opted in", or has not synced, one
// live GET decides, so a namespace labelled a moment ago is never missed.
// The watch and the GET are a port (NamespaceApi; adapter src/kube/namespaces.ts).

import { setTimeout as delay } from 'node:timers/promises';
import { Slots } from './slots.js';
import { ALWAYS_EXCLUDED, namespaceModeOf } from './workload/index.js';

// --- the port the mutator is given ---------------------------------------------------

export type NamespaceVerdict =
  | { readonly status: 'opted-in' }
  | { readonly status: 'not-opted-in'; readonly why: 'excluded' | 'not labelled' | 'not found' }
  /** The live read failed or outlived the review's deadline. */
  | { readonly status: 'unknown'; readonly detail: string };

export interface NamespaceCheck {
  check(namespace: string, signal: AbortSignal): Promise<NamespaceVerdict>;
}

// --- the port it reads through ------------------------------------------------------

export interface NamespaceLabels {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export type NamespaceRead =
  | { readonly status: 'found'; readonly namespace: NamespaceLabels }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly detail: string };

export interface NamespaceWatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly namespace: NamespaceLabels;
}

/** Metadata only (PartialObjectMetadata): names and labels, nothing else of a namespace. */
export interface NamespaceApi {
  /** The opted-in namespaces (a label selector may leave the rest out), and where to watch from. */
  listOptedIn(
    signal: AbortSignal,
  ): Promise<{ namespaces: NamespaceLabels[]; resourceVersion: string }>;
  /**
   * Watches from `resourceVersion` until the server ends the watch or `signal`
   * aborts. A namespace that stops matching arrives as DELETED. `expired`: 410, relist.
   */
  watchOptedIn(
    resourceVersion: string,
    onEvent: (event: NamespaceWatchEvent) => void,
    signal: AbortSignal,
  ): Promise<{ resourceVersion: string; expired: boolean }>;
  /** One live GET; resolves (never rejects), `failed` once `signal` aborts. */
  get(name: string, signal: AbortSignal): Promise<NamespaceRead>;
}

// --- the check -----------------------------------------------------------------------

/** Live namespace reads in flight at once: a flood of forged reviews costs at most this many GETs at a time. */
export const MAX_NAMESPACE_READS = 8;
/** A shared live read gives up after this; each caller gives up at its own deadline first. */
const READ_TIMEOUT_MS = 5_000;
const INITIAL_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

export interface NamespaceCheckOptions {
  readonly api: NamespaceApi;
  /** Besides ALWAYS_EXCLUDED: the webhook's own namespace and every --excluded-namespace. */
  readonly excluded: readonly string[];
  /** The watch failed and is retried with backoff; the last view stays in use meanwhile. */
  readonly onWatchError?: (error: Error) => void;
}

export interface NamespaceWatch extends NamespaceCheck {
  /** True once the first list has arrived. */
  readonly synced: boolean;
  stop(): Promise<void>;
}

const OPTED_IN: NamespaceVerdict = { status: 'opted-in' };
const EXCLUDED: NamespaceVerdict = { status: 'not-opted-in', why: 'excluded' };

/** Starts the watch; `check` answers at once, before and after it has synced. */
export function startNamespaceCheck(options: NamespaceCheckOptions): NamespaceWatch {
  const excluded = new Set<string>([...ALWAYS_EXCLUDED, ...options.excluded]);
  const view = new OptedInView();
  const stopping = new AbortController();
  const watching = keepWatching(options, view, stopping.signal);
  const reads = new FreshReads(options.api);
  return {
    get synced() {
      return view.synced;
    },
    async check(namespace, signal) {
      if (excluded.has(namespace)) return EXCLUDED;
      if (view.isOptedIn(namespace)) return OPTED_IN;
      return verdictOf(await reads.read(namespace, signal));
    },
    async stop() {
      stopping.abort();
      await watching;
    },
  };
}

function verdictOf(read: NamespaceRead): NamespaceVerdict {
  switch (read.status) {
    case 'absent':
      return { status: 'not-opted-in', why: 'not found' };
    case 'failed':
      return { status: 'unknown', detail: read.detail };
    case 'found':
      return namespaceModeOf(read.namespace.labels) === 'none'
        ? { status: 'not-opted-in', why: 'not labelled' }
        : OPTED_IN;
  }
}

/** The opted-in namespaces as the watch last said; nothing is opted in before the first list. */
class OptedInView {
  #names: Set<string> | undefined;

  get synced(): boolean {
    return this.#names !== undefined;
  }

  isOptedIn(name: string): boolean {
    return this.#names?.has(name) === true;
  }

  replace(namespaces: readonly NamespaceLabels[]): void {
    this.#names = new Set(namespaces.filter(isOptedIn).map(({ name }) => name));
  }

  apply({ type, namespace }: NamespaceWatchEvent): void {
    if (type !== 'DELETED' && isOptedIn(namespace)) this.#names?.add(namespace.name);
    else this.#names?.delete(namespace.name);
  }
}

function isOptedIn(namespace: NamespaceLabels): boolean {
  return namespaceModeOf(namespace.labels) !== 'none';
}

/**
 * List, then watch and resume from the last resourceVersion; relist on 410 or
 * after an error (backing off). A view kept through an outage may be stale by
 * as long as it lasts: a namespace un-labelled meanwhile still counts as opted in.
 */
async function keepWatching(
  { api, onWatchError = () => {} }: NamespaceCheckOptions,
  view: OptedInView,
  signal: AbortSignal,
): Promise<void> {
  let backoff = INITIAL_BACKOFF_MS;
  while (!signal.aborted) {
    try {
      const listed = await api.listOptedIn(signal);
      view.replace(listed.namespaces);
      let resourceVersion = listed.resourceVersion;
      for (;;) {
        const end = await api.watchOptedIn(resourceVersion, (event) => view.apply(event), signal);
        backoff = INITIAL_BACKOFF_MS;
        if (signal.aborted || end.expired) break;
        resourceVersion = end.resourceVersion;
      }
    } catch (error) {
      if (signal.aborted) return;
      onWatchError(error as Error);
      await delay(backoff, undefined, { signal }).catch(() => {});
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

interface PendingReads {
  running: Promise<NamespaceRead> | undefined;
  /** The running read's GET has gone out: a caller arriving now must not take its answer. */
  sent: boolean;
  queued: Promise<NamespaceRead> | undefined;
}

/**
 * Live GETs of namespaces, shared by the reviews that ask at once, each answer
 * from a GET sent after its caller asked: a caller that finds a GET already
 * sent waits for the next one (which every caller arriving meanwhile shares),
 * since the sent one may have read the namespace before it was labelled.
 * So one name has at most two GETs outstanding, and the process MAX_NAMESPACE_READS
 * in flight. No answer is remembered: a remembered "not labelled" could outlive a
 * fresh label, and then a real review would go unhashed.
 */
class FreshReads {
  readonly #slots = new Slots(MAX_NAMESPACE_READS);
  readonly #pending = new Map<string, PendingReads>();

  constructor(private readonly api: NamespaceApi) {}

  read(name: string, signal: AbortSignal): Promise<NamespaceRead> {
    let pending = this.#pending.get(name);
    if (!pending) {
      pending = { running: undefined, sent: false, queued: undefined };
      this.#pending.set(name, pending);
    }
    const entry = pending;
    let shared: Promise<NamespaceRead>;
    if (!entry.running) {
      shared = this.#start(name, entry);
    } else if (!entry.sent) {
      shared = entry.running;
    } else {
      entry.queued ??= entry.running.then(() => {
        entry.queued = undefined;
        return this.#start(name, entry);
      });
      shared = entry.queued;
    }
    return untilAborted(shared, signal);
  }

  #start(name: string, entry: PendingReads): Promise<NamespaceRead> {
    entry.sent = false;
    const running = this.#get(name, entry).finally(() => {
      entry.running = undefined;
      if (!entry.queued) this.#pending.delete(name);
    });
    entry.running = running;
    return running;
  }

  async #get(name: string, entry: PendingReads): Promise<NamespaceRead> {
    const timeout = AbortSignal.timeout(READ_TIMEOUT_MS);
    if (!(await this.#slots.take(timeout))) return { status: 'failed', detail: 'timed out' };
    try {
      entry.sent = true;
      return await this.api.get(name, timeout);
    } finally {
      this.#slots.release();
    }
  }
}

/** `shared`'s answer, or `failed` when this caller's own signal aborts first. */
function untilAborted(shared: Promise<NamespaceRead>, signal: AbortSignal): Promise<NamespaceRead> {
  if (signal.aborted) return Promise.resolve({ status: 'failed', detail: 'deadline reached' });
  return new Promise((resolve) => {
    const onAbort = () => resolve({ status: 'failed', detail: 'deadline reached' });
    signal.addEventListener('abort', onAbort, { once: true });
    void shared.then((read) => {
      signal.removeEventListener('abort', onAbort);
      resolve(read);
    });
  });
}
