// One due touch (docs/design.md §6): take its token first (a touch asked by a source
// change takes a touch token; a resync's evaluation an evaluation token, and a
// touch token only once it must roll), read the workload, hold it outside its
// rollout window, evaluate the hash now, decide, send the empty merge patch and
// record an Event. Waiting for a token never repeats a read. Failures put the
// touch back.

import type { Evaluation, Evaluator } from '../evaluate/index.js';
import { withDeadline } from '../runtime/index.js';
import {
  isObject,
  ROLLOUT_WINDOW,
  readWorkload,
  rolloutNotice,
  type Workload,
  warning,
} from '../workload/index.js';
import { EVENT_ACTION, EVENT_REASON } from './events.js';
import type { FollowLogger } from './logger.js';
import type { FollowMetrics } from './metrics.js';
import type { FollowApi, WorkloadEvent } from './ports.js';
import { decideReconcile, type ReconcileDecision } from './reconcile.js';
import type { QueuedTouch, SourceChange, TouchQueue } from './touch-queue.js';
import { gateWindow, type WindowGate } from './window-gate.js';
import { refFields, type WorkloadRef, workloadKey } from './workload-ref.js';

/** A failed touch is tried again after this (FollowOptions.retryMs). */
export const RETRY_MS = 15_000;
const LOOKUP_TIMEOUT_MS = 10_000;
const MAX_NOTE_LENGTH = 1024;

export interface TouchDependencies {
  readonly api: FollowApi;
  readonly evaluate: Evaluator;
  readonly metrics: FollowMetrics;
  readonly logger: FollowLogger;
  readonly queue: Pick<TouchQueue, 'defer' | 'touched' | 'waitToken' | 'earliestTouch'>;
  /** The workload as just read: the reference index corrects its entry and notes the evaluation. */
  onRead(ref: WorkloadRef, object: Record<string, unknown>): void;
  /** The workload no longer exists. */
  onGone(ref: WorkloadRef): void;
  /** The follow namespace's annotations (its rollout window), as last seen. */
  namespaceAnnotations(namespace: string): Readonly<Record<string, string>>;
  /** How long to hold a change when no window opening can be computed. */
  readonly holdRetryMs: number;
  /** How long after a failure a touch is tried again. */
  readonly retryMs: number;
  readonly signal: AbortSignal;
}

/** Returns the function that runs one due touch; it never throws. */
export function createToucher(deps: TouchDependencies): (touch: QueuedTouch) => Promise<void> {
  const { metrics, logger, queue, signal } = deps;
  const holds = new HoldAnnouncements(deps);
  return async (touch) => {
    try {
      await touchOnce(deps, holds, touch);
    } catch (error) {
      if (signal.aborted) return;
      metrics.reconcileError();
      metrics.deferred('error');
      logger.warn(
        { ...fields(touch), err: (error as Error).message },
        'follow: reconcile failed; will retry',
      );
      queue.defer(touch, Date.now() + deps.retryMs);
    }
  };
}

async function touchOnce(
  deps: TouchDependencies,
  holds: HoldAnnouncements,
  touch: QueuedTouch,
): Promise<void> {
  const { api, queue, metrics, signal } = deps;
  const { ref } = touch;
  const asked = touch.changes.size > 0;
  if (!(await queue.waitToken(asked ? 'touch' : 'evaluate', signal))) return;
  const object = await api.getWorkload(ref.namespace, ref.kind, ref.name, signal);
  if (!isObject(object)) return deps.onGone(ref); // Gone since: nothing to roll.
  deps.onRead(ref, object);
  const workload = readWorkload(object, ref.kind);
  const windowText =
    workload.annotations[ROLLOUT_WINDOW] ??
    deps.namespaceAnnotations(ref.namespace)[ROLLOUT_WINDOW];
  const gate = gateWindow(windowText, new Date(), deps.holdRetryMs);
  if (!gate.open) return holds.hold(touch, workload, gate);
  const evaluation = await withDeadline(signal, LOOKUP_TIMEOUT_MS, (lookupSignal) =>
    deps.evaluate(workload, ref.namespace, lookupSignal),
  );
  const decision = decideReconcile(workload, evaluation);
  if (!decision.touch) return leave(deps, touch, decision);
  if (!asked) {
    // An evaluation that must roll: the minimum interval and the touch rate hold it too.
    const earliest = queue.earliestTouch(ref);
    if (earliest > Date.now()) {
      metrics.deferred('min-interval');
      queue.defer(touch, earliest);
      return;
    }
    if (!(await queue.waitToken('touch', signal))) return;
  }
  const outcome = await api.touch(ref.namespace, ref.kind, ref.name, signal);
  if (outcome.status === 'denied') return denied(deps, holds, touch, workload, outcome.reason);
  queue.touched(ref);
  holds.forget(ref);
  metrics.touched(ref.kind.kind);
  deps.logger.info({ ...fields(touch), why: decision.why }, 'follow: touched');
  const events = [
    touchEvent(touch, workload, decision, evaluation),
    ...rolloutEvent(touch, workload, decision),
  ];
  for (const event of events) {
    await api
      .recordEvent(event, signal)
      .catch((error: Error) =>
        deps.logger.warn({ ...fields(touch), err: error.message }, 'follow: event not recorded'),
      );
  }
}

/** The admission warning of docs/design.md §4, as an Event: nobody reads a touch's warnings. */
function rolloutEvent(
  touch: QueuedTouch,
  workload: Workload,
  decision: Extract<ReconcileDecision, { touch: true }>,
): WorkloadEvent[] {
  if (decision.why !== 'config-changed') return [];
  const notice = rolloutNotice(workload.object, workload.kind);
  if (!notice) return [];
  const reason = notice.effect === 'outage' ? EVENT_REASON.outage : EVENT_REASON.held;
  const note = warning(notice.text);
  return [workloadEvent(touch.ref, workload, 'Warning', reason, EVENT_ACTION.touch, note)];
}

/**
 * The cluster refused the touch: nothing rolled. Said on the workload once (an Event, which
 * `confighash explain` shows), counted, and tried again: whatever refused may be fixed.
 */
async function denied(
  deps: TouchDependencies,
  holds: HoldAnnouncements,
  touch: QueuedTouch,
  workload: Workload,
  reason: string,
): Promise<void> {
  const { metrics, logger, queue, api, signal } = deps;
  metrics.touchDenied(touch.ref.kind.kind);
  metrics.deferred('denied');
  logger.warn({ ...fields(touch), err: reason }, 'follow: touch denied; will retry');
  queue.defer(touch, Date.now() + deps.retryMs);
  const note = warning(`touch denied, the workload did not roll: ${reason}`);
  if (!holds.isNews(touch.ref, note)) return;
  const event = workloadEvent(
    touch.ref,
    workload,
    'Warning',
    EVENT_REASON.denied,
    EVENT_ACTION.touch,
    note,
  );
  await api
    .recordEvent(event, signal)
    .catch((error: Error) =>
      logger.warn({ ...fields(touch), err: error.message }, 'follow: event not recorded'),
    );
}

/** No touch: nothing to roll, or the sources cannot be read now (then retry). */
function leave(deps: TouchDependencies, touch: QueuedTouch, decision: ReconcileDecision): void {
  if (decision.why === 'up-to-date-previous-key') deps.metrics.previousKeyHash();
  if (decision.why !== 'lookup-failed') {
    deps.logger.debug({ ...fields(touch), why: decision.why }, 'follow: nothing to roll');
    return;
  }
  deps.metrics.reconcileError();
  deps.metrics.deferred('error');
  deps.logger.warn(
    { ...fields(touch), why: decision.why },
    'follow: cannot read the sources; will retry',
  );
  deps.queue.defer(touch, Date.now() + deps.retryMs);
}

/** Holds a touch outside its window, or one refused; says so once per workload and note. */
class HoldAnnouncements {
  /** The note last announced for each held workload. */
  readonly #announced = new Map<string, string>();

  constructor(private readonly deps: TouchDependencies) {}

  hold(touch: QueuedTouch, workload: Workload, gate: Extract<WindowGate, { open: false }>): void {
    const { metrics, queue, logger, api, signal } = this.deps;
    metrics.deferred('window');
    queue.defer(touch, gate.until.getTime());
    if (!this.isNews(touch.ref, gate.note)) return;
    logger.info({ ...fields(touch), until: gate.until.toISOString() }, 'follow: touch deferred');
    const reason = gate.valid ? EVENT_REASON.deferred : EVENT_REASON.invalidWindow;
    const event = workloadEvent(
      touch.ref,
      workload,
      gate.valid ? 'Normal' : 'Warning',
      reason,
      EVENT_ACTION.defer,
      gate.note,
    );
    void api.recordEvent(event, signal).catch(() => {});
  }

  /** True the first time `note` is said of `ref` since another note or a touch. */
  isNews(ref: WorkloadRef, note: string): boolean {
    const key = workloadKey(ref);
    if (this.#announced.get(key) === note) return false;
    this.#announced.set(key, note);
    return true;
  }

  /** After a touch, the next hold of `ref` is news again. */
  forget(ref: WorkloadRef): void {
    this.#announced.delete(workloadKey(ref));
  }
}

function touchEvent(
  touch: QueuedTouch,
  workload: Workload,
  decision: Extract<ReconcileDecision, { touch: true }>,
  evaluation: Evaluation,
): WorkloadEvent {
  const adopted = decision.why === 'not-yet-hashed';
  const reason = adopted ? EVENT_REASON.recorded : EVENT_REASON.changed;
  const sources = evaluation.status === 'hashed' ? evaluation.sources : '';
  return workloadEvent(
    touch.ref,
    workload,
    'Normal',
    reason,
    EVENT_ACTION.touch,
    touchNote(touch.changes, adopted, sources),
  );
}

/** What the Event says happened: which sources were created, changed, deleted; never content. */
export function touchNote(
  changes: ReadonlyMap<string, SourceChange>,
  adopted: boolean,
  sources: string,
): string {
  if (adopted) return warning(`recorded the config hash of ${sources} (no restart)`);
  if (changes.size === 0) {
    return warning(`config changed while not watched (sources: ${sources}); rolling`);
  }
  const groups = (['created', 'changed', 'deleted'] as const).flatMap((change) => {
    const names = [...changes].filter(([, c]) => c === change).map(([source]) => source);
    return names.length > 0 ? [`${names.sort().join(', ')} ${change}`] : [];
  });
  return warning(`${groups.join('; ')}; rolling`);
}

function workloadEvent(
  ref: WorkloadRef,
  workload: Workload,
  type: WorkloadEvent['type'],
  reason: string,
  action: string,
  note: string,
): WorkloadEvent {
  return {
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    uid: uidOf(workload),
    type,
    reason,
    action,
    note: note.length <= MAX_NOTE_LENGTH ? note : `${note.slice(0, MAX_NOTE_LENGTH - 1)}…`,
  };
}

function uidOf(workload: Workload): string {
  const metadata = workload.object.metadata;
  const uid = isObject(metadata) ? metadata.uid : undefined;
  return typeof uid === 'string' ? uid : '';
}

function fields(touch: QueuedTouch) {
  return { ...refFields(touch.ref), changes: Object.fromEntries(touch.changes) };
}
