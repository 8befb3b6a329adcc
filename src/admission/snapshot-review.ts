// A snapshot workload's review (docs/design.md §13), top to bottom: read its template's live
// view, ask the evaluator for the hash now, keep the template as it is (current, or pinned by a
// rollback) or roll it forward: the annotations as §4 decides on the live view, and every counted
// ConfigMap reference renamed to the snapshot of the content now, made before the answer.

import type { Evaluation, Evaluator } from '../evaluate/index.js';
import { buildAnnotationPatch } from '../patch/index.js';
import {
  ensureSnapshot,
  formatListed,
  holdsContentOf,
  type LiveView,
  liveView,
  type OwnerReference,
  planSnapshot,
  renameReferences,
  type SnapshotStore,
  snapshotStanding,
} from '../snapshot/index.js';
import { formatSource } from '../sources/index.js';
import {
  annotationsAt,
  HASH,
  HASHED_VERSIONS,
  isObject,
  PINNED_WARNING,
  SNAPSHOT,
  SNAPSHOTS,
  type Workload,
  warning,
} from '../workload/index.js';
import {
  annotationResult,
  type Decision,
  decideWrite,
  limitWarnings,
  toLookupRecord,
} from './decide.js';
import type { MutationResult, SnapshotResult } from './result.js';
import type { Target } from './target.js';

/** Whether a review goes through here: a workload annotated for snapshots, or a template that names some. */
export function involvesSnapshots(workload: Workload): boolean {
  return (
    workload.annotations[SNAPSHOT] === 'true' ||
    annotationsAt(workload.template, ['metadata'])[SNAPSHOTS] !== undefined
  );
}

const SNAPSHOTS_OFF = warning('snapshots are not enabled in this install; references left live');

interface SnapshotReview {
  readonly evaluate: Evaluator;
  /** undefined: snapshots are off in this install (`--snapshots`). */
  readonly store: SnapshotStore | undefined;
  readonly dryRun: boolean;
  readonly signal: AbortSignal;
}

export async function reviewSnapshotWorkload(
  target: Target,
  options: SnapshotReview,
): Promise<MutationResult> {
  // A template that names snapshots of a workload no longer annotated goes back to live names.
  const review = { ...options, wanted: target.workload.annotations[SNAPSHOT] === 'true' };
  const { live, view, oldView } = liveTargetOf(target);
  const evaluation = await review.evaluate(live.workload, target.namespace, review.signal);
  const templateHash = annotationsAt(target.workload.template, ['metadata'])[HASH];
  const stored = target.old?.annotations[HASHED_VERSIONS];
  const standing = review.wanted
    ? snapshotStanding(view, templateHash, stored, evaluation)
    : 'roll-forward';
  if (standing !== 'roll-forward') {
    const kept = standing === 'kept' ? decideWrite(live, evaluation).warnings : [];
    const notes = [...kept, ...(standing === 'pinned' ? [PINNED_WARNING] : [])];
    // `kubectl rollout undo` copies the old ReplicaSet's annotations onto the workload, its
    // record of what it rolled then among them: a pin keeps the record of the content the
    // workload last rolled forward to, or the next write would take the undo for new content.
    const record = standing === 'pinned' ? stored : undefined;
    return keepAsIs(target, view, evaluation, { notes, record }, review);
  }
  const decision = decideWrite(live, evaluation);
  const made = await chooseSnapshots(target, decision, evaluation, oldView, review);
  const listing = formatListed(made.chosen);
  return {
    ...annotationResult(live, evaluation, decision, {
      annotations: { [SNAPSHOTS]: listing },
      patch: renameReferences(
        target.workload.kind.templatePath,
        target.workload.template,
        view.template,
        target.workload.annotations,
        made.chosen,
      ),
      warnings: made.warnings,
    }),
    snapshots: made.results,
  };
}

/** The request as §4 decides it: the workload's and oldObject's templates by their live views. */
function liveTargetOf(target: Target): {
  readonly live: Target;
  readonly view: LiveView;
  readonly oldView: LiveView | undefined;
} {
  const view = liveView(target.workload.template, target.workload.annotations);
  const oldView = target.old && liveView(target.old.template, target.old.annotations);
  const live: Target = {
    ...target,
    workload: { ...target.workload, template: view.template },
    old: target.old && { ...target.old, template: oldView?.template },
  };
  return { live, view, oldView };
}

interface Chosen {
  /** Source → the snapshot its references name after this write. */
  readonly chosen: ReadonlyMap<string, string>;
  readonly warnings: readonly string[];
  readonly results: readonly SnapshotResult[];
}

const NONE: Chosen = { chosen: new Map(), warnings: [], results: [] };

/**
 * A hash written: the snapshots of the content now; the previous hash kept: the previous
 * snapshots; adopted, or nothing read: none (live names).
 */
async function chooseSnapshots(
  target: Target,
  decision: Decision,
  evaluation: Evaluation,
  oldView: LiveView | undefined,
  review: SnapshotReview & { readonly wanted: boolean },
): Promise<Chosen> {
  if (decision.outcome === 'kept-old') return { ...NONE, chosen: oldView?.listed ?? new Map() };
  if (!review.wanted || decision.outcome === 'adopted' || evaluation.status !== 'hashed') {
    return NONE;
  }
  const { store } = review;
  if (!store) return { ...NONE, warnings: [SNAPSHOTS_OFF] };
  const owner = ownerOf(target.workload);
  const made = await Promise.all(
    evaluation.lookups.flatMap(({ ref, result }) => {
      if (ref.kind !== 'ConfigMap' || result.status !== 'found') return [];
      const snapshot = planSnapshot(ref, target.namespace, result.content, evaluation.digestOne);
      const ensured = ensureSnapshot(store, snapshot, {
        owner,
        digestOne: evaluation.digestOne,
        dryRun: review.dryRun,
        signal: review.signal,
      });
      return [ensured.then((outcome) => ({ snapshot, outcome }))];
    }),
  );
  const chosen = new Map<string, string>();
  const warnings: string[] = [];
  for (const { snapshot, outcome } of made) {
    const source = formatSource(snapshot.source);
    if (outcome.status === 'failed') {
      warnings.push(
        warning(`no snapshot of ${source} (${outcome.detail}); its references stay live`),
      );
      continue;
    }
    chosen.set(snapshot.source.name, snapshot.name);
    if (outcome.status !== 'reused') {
      const made = outcome.status === 'created' ? 'created' : 'would be created';
      warnings.push(warning(`snapshot ${snapshot.name} of ${source} ${made}`));
    }
  }
  return { chosen, warnings, results: made.map(({ outcome }) => outcome.status) };
}

/**
 * No patch. A snapshot the template names that is gone is made again from its source when the
 * source still holds that content; otherwise new pods of this revision cannot start: said.
 */
async function keepAsIs(
  target: Target,
  view: LiveView,
  evaluation: Evaluation,
  kept: { readonly notes: readonly string[]; readonly record: string | undefined },
  review: SnapshotReview,
): Promise<MutationResult> {
  const { notes, record } = kept;
  const patch =
    record === undefined
      ? []
      : buildAnnotationPatch(target.workload.object, [
          { metadataPath: ['metadata'], desired: { [HASHED_VERSIONS]: record } },
        ]);
  const { store } = review;
  const restored = store
    ? await restoreNamed(target, view, evaluation, { ...review, store })
    : NONE;
  const outcome = notes.some((note) => note !== PINNED_WARNING) ? 'kept-old' : 'unchanged';
  return {
    outcome,
    patch,
    warnings: limitWarnings([
      ...(notes.includes(PINNED_WARNING) ? [PINNED_WARNING] : []),
      ...evaluation.problems.map(warning),
      ...notes.filter((note) => note !== PINNED_WARNING),
      ...restored.warnings,
    ]),
    lookups: evaluation.lookups.map(toLookupRecord),
    hashChanged: false,
    snapshots: restored.results,
  };
}

async function restoreNamed(
  { workload, namespace }: Target,
  view: LiveView,
  evaluation: Evaluation,
  review: SnapshotReview & { readonly store: SnapshotStore },
): Promise<Chosen> {
  const warnings: string[] = [];
  const results: SnapshotResult[] = [];
  for (const [source, name] of view.named) {
    const found = await review.store.read(namespace, name, review.signal);
    if (found.status !== 'absent') continue;
    const lookup = evaluation.lookups.find(
      ({ ref }) => ref.kind === 'ConfigMap' && ref.name === source,
    );
    const content = lookup?.result.status === 'found' ? lookup.result.content : undefined;
    if (
      evaluation.status !== 'hashed' ||
      !lookup ||
      !content ||
      !holdsContentOf(name, lookup.ref, content, evaluation.digestOne)
    ) {
      warnings.push(
        warning(
          `snapshot ${name} of configmap/${source} is gone and its content changed; new pods of this revision cannot start`,
        ),
      );
      continue;
    }
    const snapshot = planSnapshot(lookup.ref, namespace, content, evaluation.digestOne);
    const outcome = await ensureSnapshot(review.store, snapshot, {
      owner: ownerOf(workload),
      digestOne: evaluation.digestOne,
      dryRun: review.dryRun,
      signal: review.signal,
    });
    results.push(outcome.status);
    if (outcome.status === 'failed') {
      warnings.push(warning(`snapshot ${name} of configmap/${source} is gone (${outcome.detail})`));
    }
  }
  return { chosen: new Map(), warnings, results };
}

/** The workload as its snapshots' owner; undefined on a CREATE, which has no uid yet. */
function ownerOf(workload: Workload): OwnerReference | undefined {
  const metadata = isObject(workload.object.metadata) ? workload.object.metadata : {};
  const { uid, name } = metadata;
  if (typeof uid !== 'string' || uid === '' || typeof name !== 'string') return undefined;
  const { group, version, kind } = workload.kind;
  return { apiVersion: group === '' ? version : `${group}/${version}`, kind, name, uid };
}
