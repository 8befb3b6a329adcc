// `confighash plan` (docs/design.md §9): for every workload in the manifests, and every
// live workload of an opted-in namespace that reads a ConfigMap or Secret of the
// manifests, whether applying them rolls it, and why. The same discovery code
// as the webhook decides which sources and keys count (source-changes.ts); whether
// the write reaches the pods is write-path.ts's.

import { findLiveSources } from '../snapshot/index.js';
import { formatSource } from '../sources/index.js';
import {
  decideHandled,
  ENABLED,
  formatWorkload,
  isObject,
  isOptedOut,
  type JsonObject,
  NAMESPACE_LABEL,
  type NamespaceMode,
  type NotHandledReason,
  notAnnotatedReason,
  readWorkload,
  standingOf,
  type WorkloadKind,
} from '../workload/index.js';
import { describeWait, findApprovalWaits, type WaitsOf } from './approval-wait.js';
import { changesHash } from './compare.js';
import { type Context, createContext, type PlanOptions, type PlanTarget } from './context.js';
import { describeSelection } from './describe.js';
import { type Manifests, sourceKey } from './manifests.js';
import type { PlanCluster } from './ports.js';
import { snapshotNotes } from './snapshot-notes.js';
import {
  type Compared,
  compareSource,
  type Discovery,
  describeChange,
  describeMissing,
  discover,
  leftOutChanges,
  unchangedReasons,
} from './source-changes.js';
import { templateDifferences } from './template-change.js';
import { readTouchAnswer } from './touch-answer.js';
import { decideTemplateWrite, decideWrite } from './write-path.js';

export type { PlanOptions } from './context.js';

export type Verdict = 'roll' | 'no-roll' | 'unknown';

interface ChangedSource {
  /** `configmap/NAME` or `secret/NAME`. */
  readonly ref: string;
  /** Selected keys whose content changes, names only. */
  readonly changedKeys: readonly string[];
}

export interface WorkloadPlan {
  readonly kind: string;
  /** The kind's API group (`apps`, `argoproj.io`). */
  readonly group: string;
  readonly namespace: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly reasons: readonly string[];
  readonly changedSources: readonly ChangedSource[];
  /** Sources whose change follow mode holds for approval before it rolls this workload. */
  readonly waitsForApproval: readonly string[];
}

export interface Plan {
  readonly workloads: readonly WorkloadPlan[];
  /** What could not be looked at at all (a namespace whose workloads cannot be listed). */
  readonly problems: readonly string[];
}

/** 0 nothing rolls, 1 something rolls or may (an unknown verdict or a problem), as `kubectl diff`. */
export function planExitCode(plan: Plan): 0 | 1 {
  const uncertain = plan.problems.length > 0;
  return uncertain || plan.workloads.some(({ verdict }) => verdict !== 'no-roll') ? 1 : 0;
}

/** `cluster` undefined: `--offline`, the manifests alone. */
export async function planChanges(
  manifests: Manifests,
  cluster: PlanCluster | undefined,
  options: PlanOptions,
  signal: AbortSignal,
): Promise<Plan> {
  const context = createContext(manifests, cluster, options, signal);
  const problems: string[] = [];
  const targets: PlanTarget[] = manifests.workloads.map(({ workload, namespace, name }) => ({
    workload,
    namespace,
    name,
    live: undefined,
  }));
  if (cluster) targets.push(...(await findLiveReaders(context, problems)));
  const waitsOf = await findApprovalWaits(context, targets);
  const workloads = await Promise.all(
    targets.map((target) => planWorkload(context, target, waitsOf)),
  );
  return { workloads, problems };
}

// --- which workloads -------------------------------------------------------------

/** Live workloads, not in the manifests, of opted-in namespaces, that read a source of the manifests. */
async function findLiveReaders(context: Context, problems: string[]): Promise<PlanTarget[]> {
  const { manifests, cluster, signal } = context;
  const inManifests = new Set(
    manifests.workloads.map((w) => `${w.workload.kind.kind}/${w.namespace}/${w.name}`),
  );
  const namespaces = [...new Set(manifests.configs.map(({ namespace }) => namespace))];
  const found: PlanTarget[] = [];
  for (const namespace of namespaces) {
    const mode = await context.mode(namespace);
    if (mode.status === 'failed') {
      problems.push(
        `cannot read namespace ${namespace} (${mode.detail}): its other workloads are not planned`,
      );
      continue;
    }
    if (standingOf('admission', mode.value, mode.workloads) === 'not-opted-in') continue;
    for (const kind of context.options.kinds) {
      const listed = await cluster!.listWorkloads(kind, namespace, signal);
      if (listed.status !== 'found') {
        if (listed.status === 'failed') {
          problems.push(`cannot list ${kind.resource} in ${namespace} (${listed.detail})`);
        }
        continue;
      }
      for (const object of listed.value) {
        const name = nameOf(object);
        if (!name || inManifests.has(`${kind.kind}/${namespace}/${name}`)) continue;
        const workload = readWorkload(object, kind);
        const reads = findLiveSources(workload.template, workload.annotations).sources.some((ref) =>
          manifests.sources.has(sourceKey(namespace, ref)),
        );
        if (reads) found.push({ workload, namespace, name, live: object });
      }
    }
  }
  return found;
}

function nameOf(object: JsonObject): string | undefined {
  const metadata = isObject(object.metadata) ? object.metadata : undefined;
  return typeof metadata?.name === 'string' ? metadata.name : undefined;
}

// --- one workload ----------------------------------------------------------------

/** A verdict and its reasons: the answer of a step that settles the workload, or of the last one. */
interface Finding {
  readonly verdict: Verdict;
  readonly reasons: readonly string[];
  readonly changed?: readonly Compared[];
}

const settled = (verdict: Verdict, ...reasons: string[]): Finding => ({ verdict, reasons });

/** Each step either settles the workload (a Finding) or hands the next one what it learnt. */
async function planWorkload(
  context: Context,
  target: PlanTarget,
  waitsOf: WaitsOf,
): Promise<WorkloadPlan> {
  const finding = await findVerdict(context, target);
  const { workload, namespace, name } = target;
  const waiting = finding.verdict === 'roll' ? waitsOf(target) : [];
  return {
    kind: workload.kind.kind,
    group: workload.kind.group,
    namespace,
    name,
    verdict: finding.verdict,
    reasons: [
      ...finding.reasons,
      ...waiting.map((wait) => describeWait(wait, context.options.maxFanout)),
    ],
    changedSources: (finding.changed ?? []).map(({ ref, change }) => ({
      ref: formatSource(ref),
      changedKeys: change.selected,
    })),
    waitsForApproval: waiting.map(({ source }) => source),
  };
}

async function findVerdict(context: Context, target: PlanTarget): Promise<Finding> {
  const scope = await checkScope(context, target);
  if ('verdict' in scope) return scope;
  const live = await readLive(context, target);
  if ('verdict' in live) return live;
  const results = await compareSources(context, target.namespace, scope.discovery);
  if ('verdict' in results) return results;
  return decideRoll(context, target, { ...scope, live: live.object, results });
}

interface Scope {
  readonly mode: Exclude<NamespaceMode, 'none'>;
  readonly discovery: Discovery;
}

/** Opted out, a namespace not opted in, nothing read, or offline: settled without the live objects. */
async function checkScope(
  context: Context,
  { workload, namespace }: PlanTarget,
): Promise<Scope | Finding> {
  // The decision table's first row (workload/handled.ts), asked before the namespace is read.
  if (isOptedOut(workload.annotations))
    return settled('no-roll', notHandledLine('opted-out', namespace));
  const mode = await context.mode(namespace);
  if (mode.status === 'failed') {
    return settled('unknown', `cannot read namespace ${namespace}: ${mode.detail}`);
  }
  // The webhook's --excluded-namespace is not the CLI's to read: plan goes by the labels alone.
  const handled = decideHandled(
    workload.annotations,
    standingOf('admission', mode.value, mode.workloads),
  );
  if (!handled.handled) return settled('no-roll', notHandledLine(handled.reason, namespace));
  const discovery = discover(workload);
  if (discovery.sources.length === 0) {
    const leftOut = discovery.leftOut.map(({ ref, why }) => `${formatSource(ref)}: ${why}`);
    const none =
      leftOut.length > 0
        ? 'no ConfigMap or Secret it reads counts'
        : 'reads no ConfigMap or Secret';
    return settled('no-roll', none, ...leftOut, ...discovery.notes);
  }
  if (!context.cluster) {
    return settled(
      'unknown',
      'offline: the live config is not read',
      `reads ${discovery.sources.map(describeSelection).join(', ')}`,
      ...discovery.notes,
    );
  }
  // Handled, so opted in (the table's third row): `true` or `follow`.
  return { mode: mode.value as Scope['mode'], discovery };
}

/** Why plan says a workload the decision table leaves alone rolls nothing. */
function notHandledLine(reason: NotHandledReason, namespace: string): string {
  switch (reason) {
    case 'opted-out':
      return `opted out: ${ENABLED} is "false"`;
    case 'namespace-excluded':
    case 'namespace-not-opted-in':
      return `namespace ${namespace} is not opted in (label ${NAMESPACE_LABEL} is not "true" or "follow")`;
    case 'not-annotated':
      return `not handled: ${notAnnotatedReason(namespace)}`;
  }
}

/** The live workload (a live reader brings its own); none yet is a new workload. */
async function readLive(
  context: Context,
  target: PlanTarget,
): Promise<{ object: JsonObject } | Finding> {
  if (target.live) return { object: target.live };
  const { workload, namespace, name } = target;
  const live = await context.cluster!.getWorkload(workload.kind, namespace, name, context.signal);
  if (live.status === 'failed') {
    return settled('unknown', `cannot read ${formatWorkload(workload.kind, name)}: ${live.detail}`);
  }
  if (live.status === 'absent') {
    return settled('no-roll', 'new workload: its first pods start with the config as applied');
  }
  return { object: live.value };
}

/** Each source as applied against live; one unreadable or a required one missing settles it. */
async function compareSources(
  context: Context,
  namespace: string,
  discovery: Discovery,
): Promise<readonly Compared[] | Finding> {
  const compared = await Promise.all(
    discovery.sources.map((ref) => compareSource(context, namespace, ref)),
  );
  const unreadable = compared.filter((entry): entry is string => typeof entry === 'string');
  if (unreadable.length > 0) return settled('unknown', ...unreadable);
  const results = compared as Compared[];
  const missing = results.flatMap((entry) => entry.missingRequired);
  if (missing.length > 0) return settled('no-roll', ...missing.map(describeMissing));
  return results;
}

/** Whether the hash (or the template itself) changes, and whether that write reaches the pods. */
async function decideRoll(
  context: Context,
  target: PlanTarget,
  facts: Scope & { readonly live: JsonObject; readonly results: readonly Compared[] },
): Promise<Finding> {
  const { discovery, live, results } = facts;
  const changed = results.filter(({ change }) => changesHash(change));
  const webhook = await askWebhook(context, target, live, discovery);
  const template = await compareTemplate(context, target, live);
  const templateWrite = decideTemplateWrite(context, target, live, template.differences);
  const notes = [
    ...discovery.notes,
    ...(await leftOutChanges(context, target.namespace, discovery)),
    ...webhook.notes,
    ...template.notes,
  ];
  if (changed.length === 0 && !webhook.stale && !templateWrite) {
    return settled('no-roll', ...unchangedReasons(results), ...notes);
  }
  const leader = facts.mode === 'follow' ? await context.follower() : undefined;
  const decision = templateWrite ?? decideWrite(context, target, live, facts.mode, leader);
  const reasons = [
    ...decision.reasons,
    ...changed.map(describeChange),
    ...(decision.rolls ? snapshotNotes(target.workload, live, changed) : []),
    ...(webhook.stale ? [STALE] : []),
    ...notes,
  ];
  return { verdict: decision.rolls ? 'roll' : 'no-roll', reasons, changed };
}

/**
 * The template as the apply would store it against the live one. A live reader
 * (not in the manifests) is not written, so its template cannot change.
 */
async function compareTemplate(
  context: Context,
  target: PlanTarget,
  live: JsonObject,
): Promise<{ differences: string[]; notes: string[] }> {
  if (target.live) return { differences: [], notes: [] };
  const { workload, namespace } = target;
  const applied = await context.cluster!.dryRunApply(
    workload.kind,
    namespace,
    workload.object,
    context.signal,
  );
  if (applied.status !== 'found') {
    const why = applied.status === 'failed' ? applied.detail : 'gone';
    return {
      differences: [],
      notes: [
        `could not dry-run the apply (${why}): a change to the pod template itself is not seen`,
      ],
    };
  }
  const templateOf = (object: JsonObject) => readWorkload(object, workload.kind).template;
  return {
    differences: templateDifferences(templateOf(live), templateOf(applied.value)),
    notes: [],
  };
}

const STALE =
  'its config already changed since its last write (the webhook would write a new hash now): any write rolls it';

/**
 * The webhook's own answer for the workload as it is (a dry-run `{}` patch): a
 * template hash that is already stale rolls on any write, whatever the manifests say.
 */
async function askWebhook(
  context: Context,
  target: PlanTarget,
  live: JsonObject,
  discovery: Discovery,
): Promise<{ stale: boolean; notes: string[] }> {
  const { workload, namespace, name } = target;
  const touch = await context.cluster!.dryRunTouch(workload.kind, namespace, name, context.signal);
  if (touch.status === 'failed' && touch.detail === 'forbidden') {
    return { stale: false, notes: [forbiddenTouchNote(workload.kind, namespace)] };
  }
  if (touch.status !== 'found') {
    const why = touch.status === 'failed' ? touch.detail : 'gone';
    return {
      stale: false,
      notes: [`could not ask the webhook (${why}): a config change before this plan is not seen`],
    };
  }
  const answer = readTouchAnswer(
    readWorkload(live, workload.kind),
    touch.value,
    discovery.sources.length > 0,
  );
  if (!answer.reached) {
    return { stale: false, notes: ['the webhook did not answer a dry-run: is it registered?'] };
  }
  return { stale: answer.rolls, notes: answer.previousKey ? [PREVIOUS_KEY_NOTE] : [] };
}

/** plan asks the webhook by a dry-run patch: without `patch`, the note names the right. */
function forbiddenTouchNote(kind: WorkloadKind, namespace: string): string {
  const resource = kind.group === '' ? kind.resource : `${kind.resource}.${kind.group}`;
  return `could not ask the webhook: you may not patch ${resource} in namespace ${namespace} (forbidden; its dry-run patch needs the patch verb): a config change before this plan is not seen`;
}

const PREVIOUS_KEY_NOTE =
  'hash made with a previous key: current while its config is unchanged (docs/security.md, "Rotate the hash key")';
