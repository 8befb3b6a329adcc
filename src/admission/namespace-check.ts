// The namespace check (docs/design.md §4, §10): whether a review's namespace is
// opted in as confighash itself sees it, never as the review says. The port
// POSTs reach from any pod, so a review naming `kube-system` must cost no
// lookup. A metadata-only watch keeps the opted-in namespaces (0 GETs per
// review once synced); when it says "not opted in", or has not synced, one
// live GET decides, so a namespace labelled a moment ago is never missed.
// The watch and the GET are a port (NamespaceApi; adapter src/kube/namespace-api.ts).
// An opted-in verdict carries the namespace's workload mode (`confighash.dev/workloads`,
// docs/design.md §2), read from the same labels by the same path: the watch's view, else
// the GET.

import {
  type Clock,
  type ListWatchHandler,
  listAndWatch,
  type ObjectEventType,
  Slots,
  untilAborted,
  withDeadline,
} from '../runtime/index.js';
import {
  excludedNamespaceSet,
  namespaceStandingOf,
  type WorkloadsMode,
} from '../workload/index.js';
import type { NamespaceApi, NamespaceLabels, NamespaceRead } from './ports.js';

// --- the port the mutator is given ---------------------------------------------------

export type NamespaceVerdict =
  | { readonly status: 'opted-in'; readonly workloads: WorkloadsMode }
  | { readonly status: 'not-opted-in'; readonly why: 'excluded' | 'not labelled' | 'not found' }
  /** The live read failed or outlived the review's deadline. */
  | { readonly status: 'unknown'; readonly detail: string };

export interface NamespaceCheck {
  check(namespace: string, signal: AbortSignal): Promise<NamespaceVerdict>;
}

// --- the check -----------------------------------------------------------------------

/** Live namespace reads in flight at once: a flood of forged reviews costs at most this many GETs at a time. */
export const MAX_NAMESPACE_READS = 8;
/** A shared live read gives up after this; each caller gives up at its own deadline first. */
const READ_TIMEOUT_MS = 5_000;

interface NamespaceCheckOptions {
  readonly api: NamespaceApi;
  /** Besides ALWAYS_EXCLUDED: the webhook's own namespace and every --excluded-namespace. */
  readonly excluded: readonly string[];
  /** The watch failed and is retried with backoff; the last view stays in use meanwhile. */
  readonly onWatchError?: (error: Error) => void;
  /** The watch's backoff runs on it (default: the system's). */
  readonly clock?: Clock;
}

export interface NamespaceWatch extends NamespaceCheck {
  /** True once the first list has arrived. */
  readonly synced: boolean;
  stop(): Promise<void>;
}

const EXCLUDED: NamespaceVerdict = { status: 'not-opted-in', why: 'excluded' };

/** Starts the watch; `check` answers at once, before and after it has synced. */
export function startNamespaceCheck(options: NamespaceCheckOptions): NamespaceWatch {
  const excluded = excludedNamespaceSet(options.excluded);
  const view = new OptedInView(excluded);
  const stopping = new AbortController();
  const { api, onWatchError = () => {} } = options;
  const watching = listAndWatch(
    api.optedIn(optedInHandler(view)),
    {
      onRestart: (_reason, error) => error && onWatchError(error),
      ...(options.clock ? { clock: options.clock } : {}),
    },
    stopping.signal,
  );
  const reads = new FreshReads(api);
  return {
    get synced() {
      return view.synced;
    },
    async check(namespace, signal) {
      if (excluded.has(namespace)) return EXCLUDED;
      const workloads = view.workloadsOf(namespace);
      if (workloads) return { status: 'opted-in', workloads };
      return verdictOf(namespace, await reads.read(namespace, signal), excluded);
    },
    async stop() {
      stopping.abort();
      await watching;
    },
  };
}

function verdictOf(
  name: string,
  read: NamespaceRead,
  excluded: ReadonlySet<string>,
): NamespaceVerdict {
  switch (read.status) {
    case 'absent':
      return { status: 'not-opted-in', why: 'not found' };
    case 'failed':
      return { status: 'unknown', detail: read.detail };
    case 'found': {
      const standing = namespaceStandingOf('admission', name, read.namespace.labels, excluded);
      if (standing === 'excluded') return EXCLUDED;
      return standing === 'not-opted-in'
        ? { status: 'not-opted-in', why: 'not labelled' }
        : { status: 'opted-in', workloads: standing };
    }
  }
}

/**
 * The opted-in namespaces and their workload modes as the watch last said; nothing is
 * opted in before the first list. A label change of an opted-in namespace arrives as
 * MODIFIED, so the mode follows it as the opt-in does.
 */
class OptedInView {
  #modes: Map<string, WorkloadsMode> | undefined;

  constructor(private readonly excluded: ReadonlySet<string>) {}

  get synced(): boolean {
    return this.#modes !== undefined;
  }

  /** undefined: not opted in, as far as the view knows. */
  workloadsOf(name: string): WorkloadsMode | undefined {
    return this.#modes?.get(name);
  }

  replace(namespaces: readonly NamespaceLabels[]): void {
    this.#modes = new Map();
    for (const namespace of namespaces) this.apply('ADDED', namespace);
  }

  apply(type: ObjectEventType, namespace: NamespaceLabels): void {
    const { name, labels } = namespace;
    const standing = namespaceStandingOf('admission', name, labels, this.excluded);
    if (type !== 'DELETED' && standing !== 'excluded' && standing !== 'not-opted-in') {
      this.#modes?.set(name, standing);
    } else this.#modes?.delete(name);
  }
}

/**
 * What the list-watch loop hands the view. A view kept through an outage may be stale by as
 * long as it lasts: a namespace un-labelled meanwhile still counts as opted in.
 */
function optedInHandler(view: OptedInView): ListWatchHandler<NamespaceLabels> {
  return {
    list() {
      const listed: NamespaceLabels[] = [];
      return { page: (namespaces) => listed.push(...namespaces), end: () => view.replace(listed) };
    },
    event: (type, namespace) => view.apply(type, namespace),
  };
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
    return untilAborted(shared, signal, () =>
      Promise.resolve({ status: 'failed', detail: 'deadline reached' }),
    );
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

  #get(name: string, entry: PendingReads): Promise<NamespaceRead> {
    return withDeadline(undefined, READ_TIMEOUT_MS, async (signal) => {
      if (!(await this.#slots.take(signal))) return { status: 'failed', detail: 'timed out' };
      try {
        entry.sent = true;
        return await this.api.get(name, signal);
      } finally {
        this.#slots.release();
      }
    });
  }
}
