// `confighash plan` (DESIGN.md §9): for every workload in the manifests, and every
// live workload of an opted-in namespace that reads a ConfigMap or Secret of the
// manifests, whether applying them rolls it, and why. The same discovery code
// as the webhook decides which sources and keys count; the selected content is
// compared directly, live now against as the manifests leave it.

import type { LookupResult } from '../evaluate.js';
import { formatSource, type NamedSource, type SourceRef } from '../sources.js';
import {
  ADOPTED_HASH,
  annotationsAt,
  deepEqual,
  ENABLED,
  EVERY_KNOWN_KIND,
  EXCLUDE,
  findSources,
  HASH,
  isObject,
  type JsonObject,
  LAST_APPLIED,
  LIVE_RELOAD,
  NAMESPACE_LABEL,
  type NamespaceMode,
  namespaceModeOf,
  readWorkload,
  rolloutHeld,
  type Workload,
} from '../workload/index.js';
import { changesHash, compareContent, type SourceChange } from './compare.js';
import { describeSelection, formatWorkload } from './describe.js';
import { type Manifests, sourceKey } from './manifests.js';
import type { PlanCluster } from './ports.js';
import { readTouchAnswer } from './touch-answer.js';

export type Verdict = 'roll' | 'no-roll' | 'unknown';

export interface ChangedSource {
  /** `configmap/NAME` or `secret/NAME`. */
  readonly ref: string;
  /** Selected keys whose content changes, names only. */
  readonly changedKeys: readonly string[];
}

export interface WorkloadPlan {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly reasons: readonly string[];
  readonly changedSources: readonly ChangedSource[];
}

export interface Plan {
  readonly workloads: readonly WorkloadPlan[];
  /** What could not be looked at at all (a namespace whose workloads cannot be listed). */
  readonly problems: readonly string[];
}

export interface PlanOptions {
  /** The manifests are applied client-side (kubectl apply, Helm 3), not server-side. */
  readonly clientSide: boolean;
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
  const targets: Target[] = manifests.workloads.map(({ workload, namespace, name }) => ({
    workload,
    namespace,
    name,
    live: undefined,
  }));
  if (cluster) targets.push(...(await findLiveReaders(context, problems)));
  const workloads = await Promise.all(targets.map((target) => planWorkload(context, target)));
  return { workloads, problems };
}

// --- what the run reads once ----------------------------------------------------

type ModeRead =
  | { readonly status: 'found'; readonly value: NamespaceMode }
  | { readonly status: 'failed'; readonly detail: string };

interface Context {
  readonly manifests: Manifests;
  readonly cluster: PlanCluster | undefined;
  readonly options: PlanOptions;
  readonly signal: AbortSignal;
  mode(namespace: string): Promise<ModeRead>;
  liveSource(namespace: string, source: NamedSource): Promise<LookupResult>;
}

function createContext(
  manifests: Manifests,
  cluster: PlanCluster | undefined,
  options: PlanOptions,
  signal: AbortSignal,
): Context {
  const modes = new Map<string, Promise<ModeRead>>();
  const sources = new Map<string, Promise<LookupResult>>();
  const readMode = async (namespace: string): Promise<ModeRead> => {
    const labels = manifests.namespaceLabels.get(namespace);
    if (labels) return { status: 'found', value: namespaceModeOf(labels) };
    if (!cluster) return { status: 'failed', detail: 'offline, and not in the manifests' };
    const read = await cluster.namespace(namespace, signal);
    if (read.status === 'failed') return read;
    const mode = read.status === 'found' ? namespaceModeOf(read.value.labels) : 'none';
    return { status: 'found', value: mode };
  };
  return {
    manifests,
    cluster,
    options,
    signal,
    mode(namespace) {
      let mode = modes.get(namespace);
      if (!mode) {
        mode = readMode(namespace);
        modes.set(namespace, mode);
      }
      return mode;
    },
    liveSource(namespace, source) {
      const key = sourceKey(namespace, source);
      let read = sources.get(key);
      if (!read) {
        read = cluster
          ? cluster.configSource.get(source.kind, namespace, source.name, signal)
          : Promise.resolve({ status: 'failed', failure: 'network', detail: 'offline' });
        sources.set(key, read);
      }
      return read;
    },
  };
}

// --- which workloads -------------------------------------------------------------

interface Target {
  readonly workload: Workload;
  readonly namespace: string;
  readonly name: string;
  /** The live object of a workload found only in the cluster; undefined for one in the manifests. */
  readonly live: JsonObject | undefined;
}

/** Live workloads, not in the manifests, of opted-in namespaces, that read a source of the manifests. */
async function findLiveReaders(context: Context, problems: string[]): Promise<Target[]> {
  const { manifests, cluster, signal } = context;
  const inManifests = new Set(
    manifests.workloads.map((w) => `${w.workload.kind.kind}/${w.namespace}/${w.name}`),
  );
  const namespaces = [...new Set(manifests.configs.map(({ namespace }) => namespace))];
  const found: Target[] = [];
  for (const namespace of namespaces) {
    const mode = await context.mode(namespace);
    if (mode.status === 'failed') {
      problems.push(
        `cannot read namespace ${namespace} (${mode.detail}): its other workloads are not planned`,
      );
      continue;
    }
    if (mode.value === 'none') continue;
    for (const kind of EVERY_KNOWN_KIND) {
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
        const reads = findSources(workload.template?.spec, workload.annotations).sources.some(
          (ref) => manifests.sources.has(sourceKey(namespace, ref)),
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

interface Compared {
  readonly ref: SourceRef;
  readonly change: SourceChange;
  /** Absent after the apply although required. */
  readonly missingRequired: boolean;
}

async function planWorkload(context: Context, target: Target): Promise<WorkloadPlan> {
  const { workload, namespace, name } = target;
  const answer = (verdict: Verdict, reasons: string[], changed: readonly Compared[] = []) => ({
    kind: workload.kind.kind,
    namespace,
    name,
    verdict,
    reasons,
    changedSources: changed.map(({ ref, change }) => ({
      ref: formatSource(ref),
      changedKeys: change.selected,
    })),
  });
  if (workload.annotations[ENABLED] === 'false') {
    return answer('no-roll', [`opted out: ${ENABLED} is "false"`]);
  }
  const mode = await context.mode(namespace);
  if (mode.status === 'failed') {
    return answer('unknown', [`cannot read namespace ${namespace}: ${mode.detail}`]);
  }
  if (mode.value === 'none') {
    return answer('no-roll', [
      `namespace ${namespace} is not opted in (label ${NAMESPACE_LABEL} is not "true" or "follow")`,
    ]);
  }
  const discovery = discover(workload);
  if (discovery.sources.length === 0) {
    const leftOut = discovery.leftOut.map(({ ref, why }) => `${formatSource(ref)}: ${why}`);
    const none =
      leftOut.length > 0
        ? 'no ConfigMap or Secret it reads counts'
        : 'reads no ConfigMap or Secret';
    return answer('no-roll', [none, ...leftOut, ...discovery.notes]);
  }
  if (!context.cluster) {
    return answer('unknown', [
      'offline: the live config is not read',
      `reads ${discovery.sources.map(describeSelection).join(', ')}`,
      ...discovery.notes,
    ]);
  }
  const live = target.live
    ? ({ status: 'found', value: target.live } as const)
    : await context.cluster.getWorkload(workload.kind, namespace, name, context.signal);
  if (live.status === 'failed') {
    return answer('unknown', [
      `cannot read ${formatWorkload(workload.kind, name)}: ${live.detail}`,
    ]);
  }
  if (live.status === 'absent') {
    return answer('no-roll', ['new workload: its first pods start with the config as applied']);
  }
  const compared = await Promise.all(
    discovery.sources.map((ref) => compareSource(context, namespace, ref)),
  );
  const unreadable = compared.filter((entry): entry is string => typeof entry === 'string');
  if (unreadable.length > 0) return answer('unknown', unreadable);
  const results = compared as Compared[];
  const missing = results.filter((entry) => entry.missingRequired);
  if (missing.length > 0) {
    return answer(
      'no-roll',
      missing.map(
        ({ ref }) => `${formatSource(ref)} does not exist: the webhook keeps the previous hash`,
      ),
    );
  }
  const changed = results.filter(({ change }) => changesHash(change));
  const webhook = await askWebhook(context, target, live.value, discovery);
  const notes = [
    ...discovery.notes,
    ...(await leftOutChanges(context, namespace, discovery)),
    ...webhook.notes,
  ];
  if (changed.length === 0 && !webhook.stale) {
    return answer('no-roll', [...unchangedReasons(results), ...notes]);
  }
  const decision = decideWrite(context, target, live.value, mode.value);
  const reasons = [
    ...decision.reasons,
    ...changed.map(describeChange),
    ...(webhook.stale ? [STALE] : []),
    ...notes,
  ];
  return answer(decision.rolls ? 'roll' : 'no-roll', reasons, changed);
}

const STALE =
  'its config already changed since its last write (the webhook would write a new hash now): any write rolls it';

/**
 * The webhook's own answer for the workload as it is (a dry-run `{}` patch): a
 * template hash that is already stale rolls on any write, whatever the manifests say.
 */
async function askWebhook(
  context: Context,
  target: Target,
  live: JsonObject,
  discovery: Discovery,
): Promise<{ stale: boolean; notes: string[] }> {
  const { workload, namespace, name } = target;
  const touch = await context.cluster!.dryRunTouch(workload.kind, namespace, name, context.signal);
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
  return { stale: answer.rolls, notes: [] };
}

interface Discovery {
  readonly sources: readonly SourceRef[];
  /** Sources the `exclude` or `live-reload` annotation leaves out, and which of them does. */
  readonly leftOut: readonly { readonly ref: SourceRef; readonly why: string }[];
  readonly notes: readonly string[];
}

/** The webhook's discovery, and once more without each annotation that drops sources, to name them. */
function discover(workload: Workload): Discovery {
  const { sources, problems } = findSources(workload.template?.spec, workload.annotations);
  const kept = new Set(sources.map(formatSource));
  const leftOut = LEAVING_OUT.flatMap(({ annotation, why }) => {
    const { [annotation]: _dropped, ...without } = workload.annotations;
    return findSources(workload.template?.spec, without)
      .sources.filter((ref) => !kept.has(formatSource(ref)))
      .map((ref) => ({ ref, why }));
  });
  return { sources, leftOut, notes: [...problems] };
}

const LEAVING_OUT = [
  { annotation: EXCLUDE, why: `${EXCLUDE} leaves it out` },
  {
    annotation: LIVE_RELOAD,
    why: `${LIVE_RELOAD}: mounted without subPath, the pods reload it without a restart`,
  },
] as const;

/** One source, live now against as the manifests leave it; a string when it cannot be read. */
async function compareSource(
  context: Context,
  namespace: string,
  ref: SourceRef,
): Promise<Compared | string> {
  const before = await context.liveSource(namespace, ref);
  if (before.status === 'failed') return `cannot read ${formatSource(ref)}: ${before.detail}`;
  const beforeContent = before.status === 'found' ? before.content : undefined;
  const fromManifests = context.manifests.sources.get(sourceKey(namespace, ref));
  const after = fromManifests ?? beforeContent;
  return {
    ref,
    change: compareContent(ref.selection, beforeContent, after),
    missingRequired: after === undefined && !ref.optional,
  };
}

/** Left-out sources whose content changes: worth saying why they roll nothing. */
async function leftOutChanges(
  context: Context,
  namespace: string,
  discovery: Discovery,
): Promise<string[]> {
  const notes: string[] = [];
  for (const { ref, why } of discovery.leftOut) {
    const compared = await compareSource(context, namespace, ref);
    if (typeof compared !== 'string' && changesHash(compared.change)) {
      notes.push(`${formatSource(ref)} changes, but ${why}`);
    }
  }
  return notes;
}

function unchangedReasons(results: readonly Compared[]): string[] {
  const unselected = results.filter(({ change }) => change.unselected.length > 0);
  if (unselected.length === 0) return ['no selected key changes'];
  return unselected.map(
    ({ ref, change }) =>
      `only unselected keys of ${formatSource(ref)} change (${change.unselected.join(', ')})`,
  );
}

function describeChange({ ref, change }: Compared): string {
  if (change.presenceChanged) return `${formatSource(ref)} is created`;
  return `${formatSource(ref)} changes: ${change.selected.join(', ')}`;
}

// --- does the write roll it --------------------------------------------------------

interface WriteDecision {
  readonly rolls: boolean;
  readonly reasons: readonly string[];
}

/** The selected content changes; whether that reaches the pods. */
function decideWrite(
  context: Context,
  target: Target,
  live: JsonObject,
  mode: Exclude<NamespaceMode, 'none'>,
): WriteDecision {
  const liveWorkload = readWorkload(live, target.workload.kind);
  const templateHash = annotationsAt(liveWorkload.template, ['metadata'])[HASH];
  if (templateHash === undefined && liveWorkload.annotations[ADOPTED_HASH] === undefined) {
    return {
      rolls: false,
      reasons: ['never hashed yet: the next write adopts it without a restart'],
    };
  }
  const written = writtenBy(context, target, live);
  if (written !== 'webhook') {
    if (mode === 'true') {
      const why = target.live
        ? `nothing writes it: ${written}, and namespace ${target.namespace} is "true" (touch it or apply it server-side)`
        : `the write will not reach the webhook: ${written}`;
      return { rolls: false, reasons: [why] };
    }
    const follow = `follow mode touches it: ${written}, and namespace ${target.namespace} is "follow"`;
    return held(target, live) ?? { rolls: true, reasons: [follow] };
  }
  return held(target, live) ?? { rolls: true, reasons: [] };
}

/** 'webhook' when the apply writes the workload, else why nothing reaches the webhook. */
function writtenBy(context: Context, target: Target, live: JsonObject): string {
  if (target.live) return 'it is not in the manifests';
  if (context.options.clientSide && unchangedSinceLastApply(target.workload.object, live)) {
    return 'a client-side apply of an unchanged workload sends nothing';
  }
  return 'webhook';
}

function held(target: Target, live: JsonObject): WriteDecision | undefined {
  const reason = rolloutHeld(target.live ? live : target.workload.object, target.workload.kind);
  return reason ? { rolls: false, reasons: [reason] } : undefined;
}

/** kubectl sends no patch when the manifest equals the last-applied configuration it recorded. */
function unchangedSinceLastApply(manifest: JsonObject, live: JsonObject): boolean {
  const recorded = annotationsAt(live, ['metadata'])[LAST_APPLIED];
  if (recorded === undefined) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(recorded);
  } catch {
    return false;
  }
  return deepEqual(comparable(parsed), comparable(manifest));
}

/** kubectl records the namespace it applied to, and never itself. */
function comparable(object: unknown): unknown {
  if (!isObject(object) || !isObject(object.metadata)) return object;
  const { namespace: _namespace, ...metadata }: Record<string, unknown> = object.metadata;
  const annotations: Record<string, unknown> | undefined = isObject(metadata.annotations)
    ? { ...metadata.annotations }
    : undefined;
  if (annotations) {
    delete annotations[LAST_APPLIED];
    if (Object.keys(annotations).length === 0) delete metadata.annotations;
    else metadata.annotations = annotations;
  }
  return { ...object, metadata };
}
