// One due touch (docs/design.md §6), top to bottom: take its token (a touch asked by a
// source change takes a touch token; a resync's evaluation an evaluation token, and a
// touch token only once it must roll), read the workload, hold it outside its rollout
// window, evaluate the hash now, decide, send the empty merge patch and record an Event.
// Waiting for a token never repeats a read. What it came to is the answer, which the
// queue applies: a touch that must wait or failed is put back there.

import { type Evaluation, type Evaluator, formatMissingRequired } from '../evaluate/index.js';
import { type Clock, withDeadline } from '../runtime/index.js';
import type { LeveledLog } from '../runtime/logger.js';
import { liveView } from '../snapshot/index.js';
import {
  isObject,
  ROLLOUT_WINDOW,
  readWorkload,
  rolloutIsObservable,
  rolloutNotice,
  runsPods,
  type Workload,
  warning,
} from '../workload/index.js';
import { EVENT_ACTION, EVENT_REASON } from './events.js';
import { type Hold, heldTouch } from './fanout.js';
import type { CanaryFitness } from './fanout-tracked.js';
import type { FollowMetrics } from './metrics.js';
import type { Pacing } from './pacing.js';
import type { FollowApi, WorkloadEvent } from './ports.js';
import { decideReconcile, type ReconcileDecision } from './reconcile.js';
import type { QueuedTouch, SourceChange, TouchResult } from './touch-queue.js';
import { gateWindow, type WindowGate } from './window-gate.js';
import { refFields, type WorkloadRef, workloadKey } from './workload-ref.js';

/** A failed touch is tried again after this (FollowOptions.retryMs). */
export const RETRY_MS = 15_000;
const LOOKUP_TIMEOUT_MS = 10_000;
const MAX_NOTE_LENGTH = 1024;

const DONE: TouchResult = { status: 'done' };
const TOUCHED: TouchResult = { status: 'touched' };

/** What a touch tells the reference index: the workload as just read, or that it is gone. */
export interface IndexUpdates {
  /**
   * The index corrects the workload's entry and notes the evaluation; false when follow
   * mode does not handle the workload (any more): nothing to evaluate or touch.
   */
  read(ref: WorkloadRef, object: Record<string, unknown>): boolean;
  gone(ref: WorkloadRef): void;
  /** Whether the evaluation read a source at a version the watches have not shown yet. */
  ahead(namespace: string, evaluation: Evaluation): boolean;
}

interface TouchDependencies {
  readonly api: FollowApi;
  readonly evaluate: Evaluator;
  readonly metrics: FollowMetrics;
  readonly logger: LeveledLog;
  readonly pacing: Pick<Pacing, 'waitToken' | 'earliestTouch' | 'touched'>;
  readonly index: IndexUpdates;
  /** Why `ref` may not be touched now (fanout.ts holdOf); undefined: it may. */
  hold(ref: WorkloadRef): Hold | undefined;
  /** The follow namespace's annotations (its rollout window), as last seen. */
  namespaceAnnotations(namespace: string): Readonly<Record<string, string>>;
  /** How long to hold a change when no window opening can be computed. */
  readonly holdRetryMs: number;
  /** How long after a failure a touch is tried again. */
  readonly retryMs: number;
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

/** Returns the function that runs one due touch; it never throws. */
export function createToucher(
  deps: TouchDependencies,
): (touch: QueuedTouch) => Promise<TouchResult> {
  const announcements = new Announcements(deps);
  return (touch) =>
    touchOnce(deps, announcements, touch).catch((error: Error) => failed(deps, touch, error));
}

async function touchOnce(
  deps: TouchDependencies,
  said: Announcements,
  touch: QueuedTouch,
): Promise<TouchResult> {
  const { api, pacing, clock, signal } = deps;
  const { ref } = touch;
  const asked = touch.changes.size > 0;
  if (!(await pacing.waitToken(asked ? 'touch' : 'evaluate', signal))) return DONE;
  const object = await readIndexed(deps, ref);
  if (typeof object === 'string') return DONE;
  const workload = readWorkload(object, ref.kind);
  const window = windowOf(workload, deps.namespaceAnnotations(ref.namespace));
  const gate = gateWindow(window, new Date(clock.now()), deps.holdRetryMs);
  if (!gate.open) return said.held(touch, workload, gate);
  const { evaluation, decision } = await decideNow(deps, workload, ref.namespace);
  if (!decision.touch) return leave(deps, said, touch, { workload, decision, evaluation });
  if (!asked) {
    // An evaluation that must roll: the minimum interval and the touch rate hold it too.
    const earliest = pacing.earliestTouch(ref);
    if (earliest > clock.now()) return { status: 'retry', at: earliest, reason: 'min-interval' };
    if (!(await pacing.waitToken('touch', signal))) return DONE;
  }
  // Asked again right before the write: a change seen, or a halt, while this touch waited for
  // its token or read the sources holds it; a change read here that the watches have not
  // shown yet is left to the watch event, which asks again canary-first when it must.
  const hold = deps.hold(ref);
  if (hold) return heldTouch(hold, clock.now());
  if (deps.index.ahead(ref.namespace, evaluation)) return DONE;
  const outcome = await api.touch(ref.namespace, ref.kind, ref.name, signal);
  if (outcome.status === 'denied') return said.denied(touch, workload, outcome.reason);
  pacing.touched(ref);
  await said.touched(touch, workload, decision, evaluation);
  return TOUCHED;
}

/**
 * The step every evaluation starts with: `ref` read, and what the read shows told to the
 * index. `deleted`: gone since (nothing to roll); `not handled`: nothing to evaluate.
 */
async function readIndexed(
  deps: Pick<TouchDependencies, 'api' | 'index' | 'signal'>,
  ref: WorkloadRef,
): Promise<Record<string, unknown> | 'deleted' | 'not handled'> {
  const object = await deps.api.getWorkload(ref.namespace, ref.kind, ref.name, deps.signal);
  if (!isObject(object)) {
    deps.index.gone(ref);
    return 'deleted';
  }
  return deps.index.read(ref, object) ? object : 'not handled';
}

/** The hash the webhook would write now, and whether that is a touch. */
async function decideNow(
  deps: Pick<TouchDependencies, 'evaluate' | 'clock' | 'signal'>,
  workload: Workload,
  namespace: string,
): Promise<{ evaluation: Evaluation; decision: ReconcileDecision }> {
  // A snapshot workload is judged by its sources, never by its copies (docs/design.md §13).
  const view = liveView(workload.template, workload.annotations);
  const live = { template: view.template, annotations: workload.annotations };
  const evaluation = await withDeadline(
    deps.signal,
    LOOKUP_TIMEOUT_MS,
    (lookupSignal) => deps.evaluate(live, namespace, lookupSignal),
    deps.clock,
  );
  return { evaluation, decision: decideReconcile(workload, evaluation, view) };
}

type EvaluateOnlyDependencies = Pick<
  TouchDependencies,
  'api' | 'evaluate' | 'pacing' | 'index' | 'clock' | 'signal'
>;

/**
 * `ref` read and evaluated at the evaluation rate, never touched; the index notes the
 * evaluation, so the resync does not repeat it. `skipped`: nothing to evaluate.
 */
async function evaluateOnly(
  deps: EvaluateOnlyDependencies,
  ref: WorkloadRef,
): Promise<
  | { readonly object: Record<string, unknown>; readonly decision: ReconcileDecision }
  | { readonly skipped: 'stopped' | 'deleted' | 'not handled' }
> {
  if (!(await deps.pacing.waitToken('evaluate', deps.signal))) return { skipped: 'stopped' };
  const object = await readIndexed(deps, ref);
  if (typeof object === 'string') return { skipped: object };
  const { decision } = await decideNow(deps, readWorkload(object, ref.kind), ref.namespace);
  if (decision.why === 'lookup-failed') throw new Error('its sources cannot be read now');
  return { object, decision };
}

/**
 * Whether a touch of `ref` would roll it now (approval above a size asks it before anything
 * rolls). A read that fails throws.
 */
export function createRollCheck(
  deps: EvaluateOnlyDependencies,
): (ref: WorkloadRef) => Promise<boolean> {
  return async (ref) => {
    const evaluated = await evaluateOnly(deps, ref);
    return 'decision' in evaluated && evaluated.decision.touch;
  };
}

/**
 * Whether `ref` can be the canary of a change (docs/design.md §6): it must get a new pod
 * template now (so it reads what changed), ask for pods, and have a rollout its status can
 * tell. A read that fails throws.
 */
export function createCanaryCheck(
  deps: EvaluateOnlyDependencies,
): (ref: WorkloadRef) => Promise<CanaryFitness> {
  return async (ref) => {
    const evaluated = await evaluateOnly(deps, ref);
    if ('skipped' in evaluated) return { fit: false, rolls: false, why: evaluated.skipped };
    const { object, decision } = evaluated;
    if (decision.why === 'not-yet-hashed') {
      return { fit: false, rolls: false, why: 'not hashed yet', adopt: true };
    }
    if (!decision.touch) return { fit: false, rolls: false, why: 'gets no new pod template' };
    if (!runsPods(object, ref.kind.rollout)) return { fit: false, rolls: true, why: 'no replicas' };
    if (!rolloutIsObservable(object, ref.kind)) {
      return { fit: false, rolls: true, why: 'its rollout cannot be told from its status' };
    }
    return { fit: true };
  };
}

/** The workload's rollout window, else its namespace's. */
function windowOf(
  workload: Workload,
  namespaceAnnotations: Readonly<Record<string, string>>,
): string | undefined {
  return workload.annotations[ROLLOUT_WINDOW] ?? namespaceAnnotations[ROLLOUT_WINDOW];
}

/** A read, a lookup or the patch failed (a request timed out, say): tried again later. */
function failed(deps: TouchDependencies, touch: QueuedTouch, error: Error): TouchResult {
  if (deps.signal.aborted) return DONE;
  deps.metrics.reconcileError('request-failed');
  deps.logger.warn(
    { ...fields(touch), err: error.message },
    'follow: reconcile failed; will retry',
  );
  return retryLater(deps, 'error');
}

function retryLater(deps: TouchDependencies, reason: 'error' | 'denied'): TouchResult {
  return { status: 'retry', at: deps.clock.now() + deps.retryMs, reason };
}

/**
 * No touch: nothing to roll, a change held because new pods would miss a required source or
 * key (said on the workload), or the sources cannot be read now (then retry).
 */
async function leave(
  deps: TouchDependencies,
  said: Announcements,
  touch: QueuedTouch,
  {
    workload,
    decision,
    evaluation,
  }: { workload: Workload; decision: ReconcileDecision; evaluation: Evaluation },
): Promise<TouchResult> {
  if (decision.why === 'up-to-date-previous-key') deps.metrics.previousKeyHash();
  if (decision.why === 'source-missing' && evaluation.status === 'hashed') {
    await said.missing(touch, workload, evaluation.missingRequired.map(formatMissingRequired));
    return DONE;
  }
  if (decision.why !== 'lookup-failed') {
    deps.logger.debug({ ...fields(touch), why: decision.why }, 'follow: nothing to roll');
    return DONE;
  }
  deps.metrics.reconcileError('sources-unreadable');
  deps.logger.warn(
    { ...fields(touch), why: decision.why },
    'follow: cannot read the sources; will retry',
  );
  return retryLater(deps, 'error');
}

/**
 * What a touch tells people on the workload: a touch (and a rollout notice), a hold
 * outside its window, a refusal. A hold or a refusal is said once per workload and note.
 */
class Announcements {
  /** The note last announced for each held or refused workload. */
  readonly #announced = new Map<string, string>();

  constructor(private readonly deps: TouchDependencies) {}

  async touched(
    touch: QueuedTouch,
    workload: Workload,
    decision: Extract<ReconcileDecision, { touch: true }>,
    evaluation: Evaluation,
  ): Promise<void> {
    const { metrics, logger } = this.deps;
    this.#announced.delete(workloadKey(touch.ref)); // The next hold is news again.
    metrics.touched(touch.ref.kind.kind);
    logger.info({ ...fields(touch), why: decision.why }, 'follow: touched');
    const events = [
      touchEvent(touch, workload, decision, evaluation),
      ...rolloutEvent(touch, workload, decision),
    ];
    for (const event of events) await this.#record(touch, event);
  }

  held(
    touch: QueuedTouch,
    workload: Workload,
    gate: Extract<WindowGate, { open: false }>,
  ): TouchResult {
    const { logger, api, signal } = this.deps;
    const result: TouchResult = { status: 'retry', at: gate.until.getTime(), reason: 'window' };
    if (!this.#isNews(touch.ref, gate.note)) return result;
    logger.info({ ...fields(touch), until: gate.until.toISOString() }, 'follow: touch deferred');
    const reason = gate.valid ? EVENT_REASON.deferred : EVENT_REASON.invalidWindow;
    const type = gate.valid ? 'Normal' : 'Warning';
    const event = workloadEvent(touch.ref, workload, type, reason, EVENT_ACTION.defer, gate.note);
    void api.recordEvent(event, signal).catch(() => {});
    return result;
  }

  /**
   * The cluster refused the touch: nothing rolled. Said on the workload once (an Event,
   * which `confighash explain` shows), counted, and tried again: whatever refused may be fixed.
   */
  async denied(touch: QueuedTouch, workload: Workload, reason: string): Promise<TouchResult> {
    const { metrics, logger } = this.deps;
    metrics.touchDenied(touch.ref.kind.kind);
    logger.warn({ ...fields(touch), err: reason }, 'follow: touch denied; will retry');
    const result = retryLater(this.deps, 'denied');
    const note = warning(`touch denied, the workload did not roll: ${reason}`);
    if (!this.#isNews(touch.ref, note)) return result;
    const { denied } = EVENT_REASON;
    await this.#record(
      touch,
      workloadEvent(touch.ref, workload, 'Warning', denied, EVENT_ACTION.touch, note),
    );
    return result;
  }

  /**
   * A change held because new pods would not start: a required source or key is missing. Said
   * on the workload once per note, and counted; the change rolls once what is missing is back.
   */
  async missing(touch: QueuedTouch, workload: Workload, missing: readonly string[]): Promise<void> {
    const { metrics, logger } = this.deps;
    metrics.heldMissing(touch.ref.kind.kind);
    logger.warn(
      { ...fields(touch), missing },
      'follow: change held; a required source or key is missing',
    );
    const note = warning(
      `config change held, the workload did not roll: its new pods would not start (${missing.join('; ')}); it rolls once that exists`,
    );
    if (!this.#isNews(touch.ref, note)) return;
    const event = workloadEvent(
      touch.ref,
      workload,
      'Warning',
      EVENT_REASON.missing,
      EVENT_ACTION.touch,
      note,
    );
    await this.#record(touch, event);
  }

  /** True the first time `note` is said of `ref` since another note or a touch. */
  #isNews(ref: WorkloadRef, note: string): boolean {
    const key = workloadKey(ref);
    if (this.#announced.get(key) === note) return false;
    this.#announced.set(key, note);
    return true;
  }

  async #record(touch: QueuedTouch, event: WorkloadEvent): Promise<void> {
    await this.deps.api
      .recordEvent(event, this.deps.signal)
      .catch((error: Error) =>
        this.deps.logger.warn(
          { ...fields(touch), err: error.message },
          'follow: event not recorded',
        ),
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
