// The keeper's loop (docs/design.md §13, "Ownership and collection"), in every serving replica
// when snapshots are on: a resync every period, the first at a random offset within one so that
// replicas started together do not list together, one at a time. A resync lists the snapshots,
// then for each namespace holding some what names them now, decides (keeper.ts) and writes. It
// never throws: what failed is counted and the first failure named, and the next resync starts
// over from what the API says then. Replicas need no leader: every write is conditional.

import { type Clock, type Random, sleep } from '../runtime/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import { decideKeeping, type KeeperAction, type KeeperActionName } from './keeper.js';
import type { KeeperApi, KeeperWrite, KeptSnapshot } from './ports.js';

export interface KeeperMetrics {
  /** A write that took effect. */
  observeKeeperAction(action: KeeperActionName): void;
  /** The snapshots a resync listed. */
  observeSnapshots(count: number): void;
}

export interface KeeperOptions {
  readonly api: KeeperApi;
  readonly resyncMs: number;
  readonly graceMs: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: LeveledLog;
  readonly metrics: KeeperMetrics;
}

export interface ResyncReport {
  /** Snapshots listed; undefined when they could not be. */
  readonly snapshots: number | undefined;
  /** Namespaces holding some, and of those, the ones whose namers could be listed. */
  readonly namespaces: number;
  readonly namespacesRead: number;
  /** Writes that took effect, by action. */
  readonly done: Readonly<Record<KeeperActionName, number>>;
  /** Writes that found the snapshot changed or gone since it was listed: the next resync sees why. */
  readonly conflicts: number;
  readonly failures: number;
  readonly firstError: string | undefined;
}

export interface Resynced {
  readonly report: ResyncReport;
  /** The uids found named by nothing and owned by nobody, in the namespaces read. */
  readonly unnamed: ReadonlySet<string>;
}

/** One resync: everything the API lists now, decided and written, namespace by namespace. */
export async function resyncSnapshots(
  options: Pick<KeeperOptions, 'api' | 'graceMs' | 'clock' | 'metrics'>,
  unnamedBefore: ReadonlySet<string>,
  signal: AbortSignal,
): Promise<Resynced> {
  const tally = new Tally();
  const unnamed = new Set<string>();
  let listed: KeptSnapshot[];
  try {
    // Snapshots before their namers: a namer stored after this list made sure of its snapshots
    // first (an owner added changes the resourceVersion these writes are conditional on).
    listed = await options.api.listSnapshots(signal);
  } catch (error) {
    tally.fail((error as Error).message);
    return { report: tally.report(undefined, 0, 0), unnamed };
  }
  options.metrics.observeSnapshots(listed.length);
  const byNamespace = groupByNamespace(listed);
  let namespacesRead = 0;
  for (const [namespace, snapshots] of byNamespace) {
    if (signal.aborted) break;
    let namers: Awaited<ReturnType<KeeperApi['listNamers']>>;
    try {
      namers = await options.api.listNamers(namespace, signal);
    } catch (error) {
      tally.fail((error as Error).message);
      continue;
    }
    namespacesRead++;
    const decision = decideKeeping({
      snapshots,
      ...namers,
      nowMs: options.clock.now(),
      graceMs: options.graceMs,
      unnamedBefore,
    });
    for (const uid of decision.unnamed) unnamed.add(uid);
    for (const action of decision.actions) {
      if (signal.aborted) break;
      const written = await write(options.api, action, signal);
      if (written.status === 'done') options.metrics.observeKeeperAction(action.action);
      tally.count(action, written);
    }
  }
  return { report: tally.report(listed.length, byNamespace.size, namespacesRead), unnamed };
}

/** Namespace → its snapshots, the namespaces in name order. */
function groupByNamespace(snapshots: readonly KeptSnapshot[]): Map<string, KeptSnapshot[]> {
  const grouped = new Map<string, KeptSnapshot[]>();
  for (const snapshot of [...snapshots].sort((a, b) => (a.namespace < b.namespace ? -1 : 1))) {
    const group = grouped.get(snapshot.namespace) ?? [];
    group.push(snapshot);
    grouped.set(snapshot.namespace, group);
  }
  return grouped;
}

function write(api: KeeperApi, action: KeeperAction, signal: AbortSignal): Promise<KeeperWrite> {
  switch (action.action) {
    case 'set-owners':
      return api.setOwners(action.snapshot, action.owners, signal);
    case 'drop-owners':
      return api.setOwners(action.snapshot, [], signal);
    case 'delete':
      return api.delete(action.snapshot, signal);
  }
}

class Tally {
  readonly #done: Record<KeeperActionName, number> = {
    'set-owners': 0,
    'drop-owners': 0,
    delete: 0,
  };
  #conflicts = 0;
  #failures = 0;
  #firstError: string | undefined;

  fail(message: string): void {
    this.#failures++;
    this.#firstError ??= message;
  }

  count({ action, snapshot }: KeeperAction, written: KeeperWrite): void {
    if (written.status === 'done') this.#done[action]++;
    else if (written.status === 'failed') {
      this.fail(
        `cannot ${action} ConfigMap ${snapshot.namespace}/${snapshot.name}: ${written.detail}`,
      );
    } else this.#conflicts++;
  }

  report(snapshots: number | undefined, namespaces: number, namespacesRead: number): ResyncReport {
    return {
      snapshots,
      namespaces,
      namespacesRead,
      done: { ...this.#done },
      conflicts: this.#conflicts,
      failures: this.#failures,
      firstError: this.#firstError,
    };
  }
}

/** Starts the loop; `stop` ends it, a resync in flight aborted, and resolves once it has. */
export function startKeeper(options: KeeperOptions): { stop(): Promise<void> } {
  const controller = new AbortController();
  const { signal } = controller;
  const running = (async () => {
    let unnamed: ReadonlySet<string> = new Set();
    await sleep(options.random() * options.resyncMs, signal, options.clock);
    while (!signal.aborted) {
      // An adapter's bug is a failed resync, never a crash of the serving process.
      const resynced = await resyncSnapshots(options, unnamed, signal).catch(failedResync);
      unnamed = resynced.unnamed;
      if (!signal.aborted) logResync(options.logger, resynced.report);
      await sleep(options.resyncMs, signal, options.clock);
    }
  })();
  return {
    async stop() {
      controller.abort(new Error('shutting down'));
      await running;
    },
  };
}

function failedResync(error: unknown): Resynced {
  const tally = new Tally();
  tally.fail(error instanceof Error ? error.message : String(error));
  return { report: tally.report(undefined, 0, 0), unnamed: new Set() };
}

function logResync(logger: LeveledLog, report: ResyncReport): void {
  const { done, ...rest } = report;
  const fields = { ...rest, ...done };
  if (report.failures > 0) logger.warn(fields, 'snapshot resync incomplete; the next one retries');
  else if (Object.values(done).some((count) => count > 0)) logger.info(fields, 'snapshot resync');
  else logger.debug(fields, 'snapshot resync');
}
