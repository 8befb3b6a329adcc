// The list-then-watch of every resource follow mode reads (docs/design.md §6): metadata-only
// ConfigMaps and Secrets and each workload kind, in one namespace or cluster-wide, through
// runtime's listAndWatch. Lists share a few slots, and what the first lists have not yet
// shown is counted: the resync waits for a whole index.

import { type Clock, listAndWatch, Slots, type WatchRestart } from '../runtime/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import type { WorkloadKind } from '../workload/index.js';
import type { FollowMetrics } from './metrics.js';
import type { WatchNamespace } from './ports.js';
import { configResource, type ResourceContext, workloadResource } from './resources.js';

/** Lists in flight at once (docs/design.md §6): a start or a relist of many resources queues. */
const LIST_SLOTS = 4;

export interface ResourceWatchDependencies {
  readonly resources: ResourceContext;
  readonly kinds: readonly WorkloadKind[];
  readonly metrics: FollowMetrics;
  readonly logger: LeveledLog;
  /** A list that failed, or a kind not served yet, is tried again after this. */
  readonly retryMs: number;
  readonly clock?: Clock;
  /** A list (the first, or a relist) ended. */
  onListEnd(): void;
}

export class ResourceWatches {
  readonly #listSlots = new Slots(LIST_SLOTS);
  /**
   * Resources whose first list has neither completed nor failed: the resync waits for a
   * whole index, but not for a list that fails (a 403, say) — that one would hold every
   * other namespace's evaluations back for as long as it keeps failing.
   */
  #unlisted = 0;

  constructor(private readonly deps: ResourceWatchDependencies) {}

  /** Whether every resource's first list completed or failed. */
  get listed(): boolean {
    return this.#unlisted === 0;
  }

  /** Lists (and with `watch`, watches) every resource in `namespace` (undefined: all of them). */
  watch(namespace: WatchNamespace, watch: boolean, signal: AbortSignal): void {
    const { resources: context, kinds, clock } = this.deps;
    const resources = [
      ...(['configmaps', 'secrets'] as const).map((resource) =>
        configResource(context, namespace, resource),
      ),
      ...kinds.map((kind) => workloadResource(context, namespace, kind)),
    ];
    for (const resource of resources) {
      this.#unlisted++;
      let first = true;
      const listed = () => {
        if (first) this.#unlisted--;
        first = false;
      };
      // A CRD installed after the start is noticed within a retry, not a resync period.
      const options = {
        watch,
        absentRetryMs: this.deps.retryMs,
        listSlots: this.#listSlots,
        onListEnd: () => {
          listed();
          this.deps.onListEnd();
        },
        onRestart: restartReporter(this.deps, resource.what, 'follow: watch failed; retrying'),
        ...(clock ? { clock } : {}),
      };
      void listAndWatch(resource, options, signal).finally(listed);
    }
  }
}

/** Counts each watch restart; says why one failed. */
export function restartReporter(
  { metrics, logger }: { readonly metrics: FollowMetrics; readonly logger: LeveledLog },
  what: Readonly<Record<string, string>>,
  message: string,
): (reason: WatchRestart, error?: Error) => void {
  return (reason, error) => {
    metrics.watchRestart(reason);
    if (error) logger.warn({ ...what, err: error.message }, message);
  };
}
