// Where a change of a source goes (docs/design.md §6): to approval when many workloads read
// it, to the canary-first fan-out (fanout.ts) when it must go that way, else straight to the
// touch queue. The resync routes what moved without an event the same way.

import type { LeveledLog } from '../runtime/logger.js';
import { parseSourceList } from '../sources/index.js';
import type { Approvals, ApprovalVerdict } from './approval.js';
import type { Fanouts } from './fanout.js';
import type { Reader, ReferenceIndex } from './reference-index.js';
import type { SourceEvent } from './resources.js';
import type { TouchQueue } from './touch-queue.js';

export interface ChangeRouterDependencies {
  readonly logger: LeveledLog;
  readonly index: Pick<
    ReferenceIndex,
    'recordedSources' | 'stale' | 'movedSources' | 'readerCount' | 'versionOf' | 'counts'
  >;
  readonly approvals: Pick<Approvals, 'isLarge' | 'check' | 'holding'>;
  readonly fanouts: Pick<Fanouts, 'takes' | 'observe' | 'observeRecorded' | 'unread' | 'holdOf'>;
  readonly queue: Pick<TouchQueue, 'request'>;
  /** Whether a resync may run now: the index is whole, and following goes on. */
  ready(): boolean;
}

export class ChangeRouter {
  constructor(private readonly deps: ChangeRouterDependencies) {}

  /** A source changed: its readers are touched, canary-first (fanout.ts), once approved when many. */
  onSourceChange(event: SourceEvent, readers: readonly Reader[]): void {
    const { approvals, fanouts, logger, queue } = this.deps;
    for (const { ref } of readers) {
      const workload = `${ref.kind.kind}/${ref.name}`;
      logger.debug(
        { namespace: ref.namespace, workload, source: event.source },
        'follow: change seen',
      );
    }
    if (readers.length === 0) return;
    if (approvals.isLarge(readers.length)) this.#checkApproval(event);
    else if (fanouts.takes(event.namespace, event.source, readers.length)) {
      fanouts.observe(event);
    } else {
      const change = { source: event.source, change: event.change };
      for (const { ref } of readers) queue.request(ref, change);
    }
  }

  /**
   * An evaluation of every workload whose sources moved since its last one, or never
   * evaluated; a moved source that more than one of them reads is read first, as if its
   * watch event came now (a change no leader saw goes canary-first too).
   */
  /** False when it could not run (the index is not whole yet, or following stopped). */
  resync(): boolean {
    if (!this.deps.ready()) return false;
    const { approvals, fanouts, index } = this.deps;
    fanouts.observeRecorded(index.recordedSources());
    const stale = index.stale();
    for (const ref of stale) {
      const held = approvals.holding(ref);
      // A change no leader saw, of a large source: checked as if its watch event came now.
      for (const source of held) this.#checkApproval(this.#resyncEvent(ref.namespace, source));
      if (held.length > 0) continue;
      const unread = index.movedSources(ref).filter((source) => {
        const readers = index.readerCount(ref.namespace, source);
        return fanouts.unread(ref.namespace, source, readers);
      });
      for (const source of unread) fanouts.observe(this.#resyncEvent(ref.namespace, source));
      if (unread.length === 0 && !fanouts.holdOf(ref)) {
        this.deps.queue.request(ref, 'resync');
      }
    }
    this.deps.logger.debug({ stale: stale.length, ...index.counts() }, 'follow: resync');
    return true;
  }

  /** A large source's content is checked (approval.ts) before any of its readers is touched. */
  #checkApproval(event: SourceEvent): void {
    this.deps.approvals.check(event, (verdict: ApprovalVerdict) => {
      if (verdict === 'fan-out') this.deps.fanouts.observe(event);
      else if (verdict === 'nothing-rolls') this.resync(); // What it held meanwhile.
    });
  }

  #resyncEvent(namespace: string, source: string): SourceEvent {
    const object = parseSourceList(source).refs[0]!; // The index holds formatted sources only.
    const resourceVersion = this.deps.index.versionOf(namespace, source);
    return { namespace, object, source, change: 'changed', resourceVersion };
  }
}
