// Approval above a size (docs/design.md §6): a change of a source that more than
// --follow-max-fanout workloads read fans out only at content someone approved — its
// `confighash.dev/approved-change` annotation names the digest of its content now — or at
// a digest this leader already let through, or when none of its readers would roll. A
// change that waits holds every reader of the source from follow mode's touches and is
// said on the source. Nothing here is needed after a change of leader: the approval lives
// on the source, and a new leader checks each large source before its readers are touched.

import type { SourceDigest, SourceDigester } from '../evaluate/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import {
  awaitingApprovalNote,
  FANOUT_AWAITS_APPROVAL,
  isFanoutLimitOff,
  isLargeFanout,
} from '../workload/index.js';
import { EVENT_ACTION } from './events.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi } from './ports.js';
import type { ReferenceIndex } from './reference-index.js';
import type { SourceEvent } from './resources.js';
import { inStableOrder } from './stable-order.js';
import type { WorkloadRef } from './workload-ref.js';

interface ApprovalDependencies {
  /** `--follow-max-fanout`; 0: no source needs approval. */
  readonly maxFanout: number;
  readonly digestSource: SourceDigester;
  /** Whether follow mode would roll `ref` now: evaluated, never touched; throws when unread. */
  wouldRoll(ref: WorkloadRef): Promise<boolean>;
  readonly index: Pick<ReferenceIndex, 'readerCount' | 'readersOf' | 'sourcesOf' | 'versionOf'>;
  readonly api: Pick<FollowApi, 'recordEvent'>;
  readonly metrics: Pick<FollowMetrics, 'fanoutsAwaitingApproval'>;
  readonly logger: LeveledLog;
  readonly signal: AbortSignal;
}

/** A large source's change, as a watch event or the resync names it. */
type LargeChange = Pick<SourceEvent, 'namespace' | 'object' | 'source' | 'resourceVersion'>;

/** What a check of a large source's content now came to. */
export type ApprovalVerdict =
  /** Approved, or a digest already let through: it fans out. */
  | 'fan-out'
  /** No reader would roll (or the source is gone): nothing to fan out; readers are free. */
  | 'nothing-rolls'
  /** It waits for approval; readers stay held. */
  | 'awaiting'
  /** The source or a reader could not be read: readers stay held, the resync checks again. */
  | 'unknown';

interface Checked {
  readonly resourceVersion: string | undefined;
  verdict: ApprovalVerdict | 'checking';
}

export class Approvals {
  /** The last check of each large source (`namespace/source`), at the version it checked. */
  readonly #checked = new Map<string, Checked>();
  /** Digests this leader let through, by `namespace/source`: a metadata write needs no approval. */
  readonly #letThrough = new Map<string, string>();

  constructor(private readonly deps: ApprovalDependencies) {}

  /** Whether a change read by this many workloads must be checked first (workload/fanout-size.ts). */
  isLarge(readers: number): boolean {
    return isLargeFanout(readers, this.deps.maxFanout);
  }

  /** The large sources `ref` reads that were not let through at their version now. */
  holding(ref: WorkloadRef): string[] {
    if (isFanoutLimitOff(this.deps.maxFanout)) return [];
    const { index } = this.deps;
    return index.sourcesOf(ref).filter((source) => {
      if (!this.isLarge(index.readerCount(ref.namespace, source))) return false;
      const checked = this.#checked.get(`${ref.namespace}/${source}`);
      const version = index.versionOf(ref.namespace, source);
      const free = checked?.verdict === 'fan-out' || checked?.verdict === 'nothing-rolls';
      return !(free && checked.resourceVersion === version);
    });
  }

  /**
   * Checks the source's content at this version, once: `settled` gets the verdict. A check
   * asked again for a version already checked (or being checked) does nothing.
   */
  check(change: LargeChange, settled: (verdict: ApprovalVerdict) => void): void {
    const key = `${change.namespace}/${change.source}`;
    const known = this.#checked.get(key);
    if (known && known.resourceVersion === change.resourceVersion && known.verdict !== 'unknown') {
      return;
    }
    const checked: Checked = { resourceVersion: change.resourceVersion, verdict: 'checking' };
    this.#checked.set(key, checked);
    void this.#verdict(change).then((verdict) => {
      if (this.#checked.get(key) !== checked || this.deps.signal.aborted) return;
      checked.verdict = verdict;
      this.#countAwaiting();
      settled(verdict);
    });
  }

  async #verdict(change: LargeChange): Promise<ApprovalVerdict> {
    const { digestSource, logger, signal } = this.deps;
    if (change.resourceVersion === undefined) return 'nothing-rolls';
    const read = await digestSource(change.object, change.namespace, signal);
    if (read.status === 'absent') return 'nothing-rolls';
    if (read.status === 'failed') {
      logger.warn(
        { ...logFields(change), err: read.detail },
        'follow: approval not checked; source unread',
      );
      return 'unknown';
    }
    const key = `${change.namespace}/${change.source}`;
    if (read.approvedChange === read.digest || this.#letThrough.get(key) === read.digest) {
      this.#letThrough.set(key, read.digest);
      return 'fan-out';
    }
    const rolls = await this.#anyReaderRolls(change);
    if (rolls === undefined) return 'unknown';
    if (!rolls) {
      this.#letThrough.set(key, read.digest);
      return 'nothing-rolls';
    }
    await this.#ask(change, read);
    return 'awaiting';
  }

  /** Evaluates the readers in the stable order until one would roll; undefined: one was unread. */
  async #anyReaderRolls(change: LargeChange): Promise<boolean | undefined> {
    const { index, wouldRoll, logger } = this.deps;
    for (const { ref } of inStableOrder(index.readersOf(change.namespace, change.source))) {
      try {
        if (await wouldRoll(ref)) return true;
      } catch (error) {
        logger.warn(
          { ...logFields(change), err: (error as Error).message },
          'follow: reader not evaluated',
        );
        return undefined;
      }
    }
    return false;
  }

  /** The Event on the source that says what waits and how to approve it. */
  async #ask(change: LargeChange, read: Extract<SourceDigest, { status: 'found' }>) {
    const { api, index, logger, signal, maxFanout } = this.deps;
    const readers = index.readerCount(change.namespace, change.source);
    const awaited = {
      source: change.source,
      namespace: change.namespace,
      resourceVersion: change.resourceVersion ?? '',
      digest: read.digest,
    };
    const fields = { namespace: change.namespace, source: change.source, digest: read.digest };
    logger.warn({ ...fields, readers }, 'follow: fan-out awaits approval');
    await api
      .recordEvent(
        {
          kind: { group: '', version: 'v1', kind: change.object.kind },
          namespace: change.namespace,
          name: change.object.name,
          uid: read.uid,
          type: 'Warning',
          reason: FANOUT_AWAITS_APPROVAL,
          action: EVENT_ACTION.fanout,
          note: awaitingApprovalNote(awaited, readers, maxFanout),
        },
        signal,
      )
      .catch((error: Error) =>
        logger.warn({ ...fields, err: error.message }, 'follow: event not recorded'),
      );
  }

  #countAwaiting(): void {
    let awaiting = 0;
    for (const checked of this.#checked.values()) if (checked.verdict === 'awaiting') awaiting++;
    this.deps.metrics.fanoutsAwaitingApproval(awaiting);
  }
}

function logFields(change: LargeChange) {
  const { namespace, source, resourceVersion } = change;
  return { namespace, source, resourceVersion };
}
