// `confighash explain KIND/NAME` (docs/design.md §9): why a workload did or did not
// roll, and whether its next write rolls. The sources come from the webhook's
// own discovery; the answer to "does the next write roll" comes from the webhook
// itself, through a server-side dry-run of an empty merge patch, never from a
// second opinion computed here.

import { findMissingRequired } from '../evaluate/index.js';
import { liveView } from '../snapshot/index.js';
import { formatSource, type SourceRef } from '../sources/index.js';
import {
  ENABLED,
  EXCLUDE,
  FANOUT_AWAITS_APPROVAL,
  type FanoutHold,
  type FanoutRecord,
  fanoutHoldOf,
  findSources,
  formatWorkload,
  INCLUDE,
  isOptedOut,
  isWorkloadHandled,
  lastWriteTime,
  NAMESPACE_LABEL,
  type NamespaceMode,
  namespaceModeOf,
  notAnnotatedReason,
  PINNED_WARNING,
  ROLLOUT_WINDOW,
  readAwaitingApprovalNote,
  readFanoutRecord,
  readWorkload,
  rolloutNotice,
  type Workload,
  type WorkloadKind,
  workloadsModeOf,
} from '../workload/index.js';
import { selectionKeys } from './describe.js';
import type { ClusterEvent, DryRunTouch, ExplainCluster, FollowLeader, Read } from './ports.js';
import { hashesOf, readTouchAnswer } from './touch-answer.js';

interface ExplainedSource {
  /** `configmap/NAME` or `secret/NAME`. */
  readonly ref: string;
  readonly state: 'found' | 'absent' | 'unreadable';
  readonly resourceVersion: string | null;
  readonly keys: 'all' | string[];
  readonly optional: boolean;
  /** Required keys (docs/design.md §3) the object lacks: pods will not start, the hash is kept. */
  readonly missingRequiredKeys: string[];
  /** Its last write (newest managedFields time), when it can be read. */
  readonly lastWrite: string | null;
  /** Why it is unreadable. */
  readonly reason?: string;
  /**
   * Its fan-out, as follow mode keeps it on the source (docs/design.md §6): a change halted,
   * or tested on canaries, holds the others that read it.
   */
  readonly fanout: FanoutRecord | null;
  /** The digest of its content now, when a change of it waits for approval (docs/design.md §6). */
  readonly awaitingApproval: string | null;
}

export interface Explanation {
  readonly kind: string;
  /** The kind's API group (`apps`, `argoproj.io`): with `kind`, which kind it is. */
  readonly group: string;
  readonly namespace: string;
  readonly name: string;
  /** `unknown`: the namespace cannot be read with these credentials. */
  readonly namespaceMode: NamespaceMode | 'unknown';
  readonly optedOut: boolean;
  /** Opted-in namespace that handles annotated workloads only, and this one is not annotated (docs/design.md §2). */
  readonly notHandled: boolean;
  readonly include: string | null;
  readonly exclude: string | null;
  readonly rolloutWindow: {
    readonly window: string;
    readonly from: 'workload' | 'namespace';
  } | null;
  readonly sources: readonly ExplainedSource[];
  /** The workload's last write (newest managedFields time, status aside). */
  readonly lastWrite: string | null;
  readonly templateHash: string | null;
  readonly adoptedHash: string | null;
  /** The hash the webhook writes on the next write (template hash, else adopted-hash). */
  readonly wouldWrite: string | null;
  /** True when the next write changes the template's hash: a rollout. */
  readonly nextWriteRolls: boolean;
  /** The hash kept was made with a previous hash key: current, but the key cannot be dropped yet. */
  readonly previousKey: boolean;
  readonly webhook: {
    readonly reached: boolean;
    readonly warnings: readonly string[];
    readonly detail: string | null;
  };
  readonly events: readonly ClusterEvent[] | { readonly unreadable: string };
  /** In a follow namespace, who leads follow mode (its Lease); null elsewhere. */
  readonly follower: FollowLeader | { readonly unreadable: string } | null;
  /** The snapshots its pods read, by source (docs/design.md §13); empty without snapshots. */
  readonly snapshots: readonly { readonly source: string; readonly snapshot: string }[];
  /** Kept on an earlier revision's snapshots by a rollback, as the webhook's dry-run answer says. */
  readonly pinned: boolean;
  /** Plain-language lines for a person. */
  readonly explanation: readonly string[];
}

type ExplainResult =
  | { readonly ok: true; readonly explanation: Explanation }
  | { readonly ok: false; readonly error: string };

export async function explainWorkload(
  cluster: ExplainCluster,
  kind: WorkloadKind,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<ExplainResult> {
  const label = `${formatWorkload(kind, name)} in namespace ${namespace}`;
  const [namespaceRead, live] = await Promise.all([
    cluster.namespace(namespace, signal),
    cluster.getWorkload(kind, namespace, name, signal),
  ]);
  if (live.status === 'absent') return { ok: false, error: `${label} not found` };
  if (live.status === 'failed') return { ok: false, error: `cannot read ${label}: ${live.detail}` };
  const workload = readWorkload(live.value, kind);
  // A snapshot workload is explained by its sources; its snapshots are named beside them.
  const view = liveView(workload.template, workload.annotations);
  const { sources: refs, problems } = findSources(view.template?.spec, workload.annotations);
  // Only follow mode fans out, so only a follow namespace's sources can hold a halt.
  const followed =
    namespaceRead.status === 'found' && namespaceModeOf(namespaceRead.value.labels) === 'follow';
  const [sources, dryRun, events, leader] = await Promise.all([
    Promise.all(refs.map((ref) => explainSource(cluster, namespace, ref, followed, signal))),
    cluster.dryRunTouch(kind, namespace, name, signal),
    cluster.confighashEvents(kind, namespace, name, signal),
    followed ? cluster.followLeader(signal) : undefined,
  ]);
  const namespaceMode =
    namespaceRead.status === 'found'
      ? namespaceModeOf(namespaceRead.value.labels)
      : namespaceRead.status === 'absent'
        ? 'none'
        : 'unknown';
  const facts = {
    kind: kind.kind,
    group: kind.group,
    namespace,
    name,
    namespaceMode,
    optedOut: isOptedOut(workload.annotations),
    notHandled:
      namespaceRead.status === 'found' &&
      namespaceMode !== 'none' &&
      !isWorkloadHandled(workload.annotations, workloadsModeOf(namespaceRead.value.labels)),
    include: workload.annotations[INCLUDE] ?? null,
    exclude: workload.annotations[EXCLUDE] ?? null,
    rolloutWindow: rolloutWindowOf(
      workload,
      namespaceRead.status === 'found' ? namespaceRead.value.annotations : {},
    ),
    sources,
    lastWrite: lastWriteTime(live.value) ?? null,
    ...hashesOf(workload),
    ...webhookAnswer(workload, dryRun, refs.length > 0),
    events: events.status === 'found' ? events.value.slice(-5) : { unreadable: readDetail(events) },
    follower:
      leader === undefined
        ? null
        : leader.status === 'found'
          ? leader.value
          : { unreadable: readDetail(leader) },
    snapshots: [...view.named].map(([source, snapshot]) => ({
      source: `configmap/${source}`,
      snapshot,
    })),
    pinned: dryRun.status === 'found' && dryRun.value.warnings.includes(PINNED_WARNING),
  } satisfies Omit<Explanation, 'explanation'>;
  const asked = !facts.optedOut && !facts.notHandled && namespaceMode !== 'none';
  if (asked && dryRun.status === 'failed' && dryRun.detail === 'forbidden') {
    return { ok: false, error: forbiddenDryRun(kind, namespace, name) };
  }
  const explanation = describe(facts, workload, problems);
  return { ok: true, explanation: { ...facts, explanation } };
}

async function explainSource(
  cluster: ExplainCluster,
  namespace: string,
  ref: SourceRef,
  followed: boolean,
  signal: AbortSignal,
): Promise<ExplainedSource> {
  const [result, written] = await Promise.all([
    cluster.configSource.get(ref.kind, namespace, ref.name, signal),
    cluster.sourceWrittenAt(ref.kind, namespace, ref.name, signal),
  ]);
  const base = {
    ref: formatSource(ref),
    keys: selectionKeys(ref.selection),
    optional: ref.optional,
    missingRequiredKeys: [],
    lastWrite: written.status === 'found' ? written.value : null,
    fanout: null,
    awaitingApproval: null,
  };
  switch (result.status) {
    case 'found': {
      const missing = findMissingRequired(ref, result.content).flatMap(({ key }) => key ?? []);
      return {
        ...base,
        state: 'found',
        resourceVersion: result.resourceVersion,
        missingRequiredKeys: missing,
        ...(followed
          ? {
              fanout: readFanoutRecord(result.fanout) ?? null,
              awaitingApproval: await awaitingApproval(cluster, namespace, ref, result, signal),
            }
          : {}),
      };
    }
    case 'absent':
      return { ...base, state: 'absent', resourceVersion: null };
    case 'failed':
      return { ...base, state: 'unreadable', resourceVersion: null, reason: result.detail };
  }
}

/** The digest of the source's content now when its change waits for approval, as its Events say. */
async function awaitingApproval(
  cluster: ExplainCluster,
  namespace: string,
  ref: SourceRef,
  found: { readonly resourceVersion: string; readonly approvedChange?: string },
  signal: AbortSignal,
): Promise<string | null> {
  const events = await cluster.confighashEvents({ kind: ref.kind }, namespace, ref.name, signal);
  if (events.status !== 'found') return null;
  const awaited = events.value
    .filter((event) => event.reason === FANOUT_AWAITS_APPROVAL)
    .flatMap((event) => readAwaitingApprovalNote(event.note) ?? [])
    .findLast((one) => one.resourceVersion === found.resourceVersion);
  return awaited && awaited.digest !== found.approvedChange ? awaited.digest : null;
}

/** What the dry-run answer says the webhook writes; the template's hash changing is a rollout. */
function webhookAnswer(
  live: Workload,
  dryRun: Read<DryRunTouch>,
  hasSources: boolean,
): Pick<Explanation, 'wouldWrite' | 'nextWriteRolls' | 'previousKey' | 'webhook'> {
  if (dryRun.status !== 'found') {
    const detail = dryRun.status === 'failed' ? dryRun.detail : 'the workload is gone';
    return {
      wouldWrite: null,
      nextWriteRolls: false,
      previousKey: false,
      webhook: { reached: false, warnings: [], detail: `the dry-run failed: ${detail}` },
    };
  }
  const answer = readTouchAnswer(live, dryRun.value, hasSources);
  return {
    wouldWrite: answer.wouldWrite,
    nextWriteRolls: answer.rolls,
    previousKey: answer.previousKey,
    webhook: {
      reached: answer.reached,
      warnings: answer.warnings,
      detail: answer.reached
        ? null
        : 'the dry-run came back without a hash: the webhook did not answer',
    },
  };
}

/**
 * explain asks the webhook by a dry-run patch; without the right to patch, the answer is
 * not "the webhook was not reached" but what right is missing.
 */
export function forbiddenDryRun(kind: WorkloadKind, namespace: string, name: string): string {
  const resource = kind.group === '' ? kind.resource : `${kind.resource}.${kind.group}`;
  return `you may not patch ${resource} in namespace ${namespace} (forbidden): explain asks the webhook about ${formatWorkload(kind, name)} through a server-side dry-run patch, which needs the patch verb on ${resource} (nothing is written)`;
}

function rolloutWindowOf(
  workload: Workload,
  namespaceAnnotations: Readonly<Record<string, string>>,
): Explanation['rolloutWindow'] {
  const own = workload.annotations[ROLLOUT_WINDOW];
  if (own !== undefined) return { window: own, from: 'workload' };
  const inherited = namespaceAnnotations[ROLLOUT_WINDOW];
  return inherited === undefined ? null : { window: inherited, from: 'namespace' };
}

function readDetail(read: Read<unknown>): string {
  return read.status === 'failed' ? read.detail : 'not found';
}

// --- plain language ----------------------------------------------------------------

type Facts = Omit<Explanation, 'explanation'>;

function describe(facts: Facts, workload: Workload, problems: readonly string[]): string[] {
  const lines = [...modeLines(facts)];
  if (facts.optedOut)
    lines.push(`opted out by ${ENABLED}: "false": the webhook changes nothing on it`);
  if (facts.notHandled) lines.push(`not handled: ${notAnnotatedReason(facts.namespace)}`);
  if (facts.sources.length === 0)
    lines.push('it reads no ConfigMap or Secret: there is nothing to hash');
  lines.push(...nextWriteLines(facts, workload));
  for (const { source, snapshot } of facts.snapshots) {
    lines.push(`its pods read snapshot ${snapshot} of ${source}, not ${source} itself`);
  }
  for (const source of facts.sources) {
    if (source.state === 'unreadable') {
      lines.push(
        `you cannot read ${source.ref} (${source.reason}); the webhook reads it with its own permissions`,
      );
    } else if (source.state === 'absent' && !source.optional) {
      lines.push(
        `${source.ref} does not exist: pods will not start until it does, and the webhook keeps the previous hash`,
      );
    } else if (source.missingRequiredKeys.length > 0) {
      const keys = source.missingRequiredKeys.map((key) => `"${key}"`).join(', ');
      const noun = source.missingRequiredKeys.length === 1 ? 'key' : 'keys';
      lines.push(
        `${source.ref} has no ${noun} ${keys}: pods will not start until it does, and the webhook keeps the previous hash`,
      );
    }
  }
  lines.push(...problems, ...facts.webhook.warnings.map((warning) => `webhook: ${warning}`));
  return lines;
}

/**
 * The sources written after the workload's last write (second-resolution times,
 * so a change in that same second is not named); else all it reads.
 */
function whatChanged(facts: Facts): string {
  const since = facts.lastWrite === null ? Number.NaN : Date.parse(facts.lastWrite);
  const newer = facts.sources.filter(
    (source) => source.lastWrite !== null && Date.parse(source.lastWrite) > since,
  );
  if (newer.length > 0) {
    const names = newer.map((source) => source.ref).join(', ');
    return `${names} changed since the last write of the workload (${facts.lastWrite})`;
  }
  const reads = facts.sources.map((source) => source.ref).join(', ');
  return `the config it reads (${reads}) is not what its hash was computed from`;
}

function modeLines(facts: Facts): string[] {
  switch (facts.namespaceMode) {
    case 'none':
      return [
        `namespace ${facts.namespace} is not opted in: the webhook never sees its writes (label ${NAMESPACE_LABEL}: "true" or "follow")`,
      ];
    case 'unknown':
      return [`you cannot read namespace ${facts.namespace}, so its mode is unknown`];
    case 'true':
      return [`namespace ${facts.namespace} is "true": writes that reach the webhook are hashed`];
    case 'follow':
      return [
        `namespace ${facts.namespace} is "follow": writes are hashed, and config changes are followed by a touch`,
      ];
  }
}

const PREVIOUS_KEY_LINE =
  'hash made with a previous key: current, but dropping that key rolls it once on its next write';

/** Why follow mode does not touch the workload: a halt, or a canary it waits behind. */
function heldLine(
  source: string,
  fanout: FanoutRecord,
  hold: FanoutHold,
  namespace: string,
): string {
  const canaries = (fanout.canaries ?? []).map((one) => formatWorkload(one, one.name)).join(', ');
  if (hold === 'behind-canary') {
    return `waits behind canary ${canaries} testing change ${fanout.change} of ${source} since ${fanout.since}; follow mode touches it once the canary proved it (a write of yours is hashed as always)`;
  }
  return `held: the fan-out of change ${fanout.change} of ${source} halted at ${fanout.since}: ${fanout.why ?? 'halted'}; follow mode touches nothing that reads it until the halt is released (confighash resume ${source} -n ${namespace}) or the source changes (a write of yours is hashed as always)`;
}

/** `NS/NAME: why` when the Lease says no follower leads; undefined when one does or it is unread. */
function vacant(follower: Facts['follower']): string | undefined {
  if (follower === null || 'unreadable' in follower || follower.holder !== null) return undefined;
  return `${follower.lease}: ${follower.vacant ?? 'no holder'}`;
}

function nextWriteLines(facts: Facts, workload: Workload): string[] {
  // The webhook is not asked about these: no answer is the expected one.
  if (facts.optedOut || facts.notHandled || facts.namespaceMode === 'none') return [];
  if (!facts.webhook.reached) {
    return [`the webhook was not reached (${facts.webhook.detail}); is it registered and running?`];
  }
  if (!facts.nextWriteRolls && facts.pinned) {
    return [
      'pinned by a rollback: it reads the snapshots of an earlier revision, and the config it reads now is what it last rolled to; an apply of the manifest, or new content of a source, rolls it forward',
    ];
  }
  if (!facts.nextWriteRolls) {
    const why =
      facts.templateHash === null && facts.wouldWrite !== null
        ? 'not hashed in the template yet: the next write adopts it without a restart'
        : 'the next write rolls nothing: the hash matches the config it reads now';
    return facts.previousKey ? [why, PREVIOUS_KEY_LINE] : [why];
  }
  const target = formatWorkload(workload.kind, facts.name);
  const lines = [`the next write rolls: ${whatChanged(facts)}`];
  const own = { group: workload.kind.group, kind: workload.kind.kind, name: facts.name };
  const held = facts.sources.flatMap(({ ref, fanout }) => {
    const hold = fanout ? fanoutHoldOf(fanout, own) : undefined;
    return hold && fanout ? [{ ref, fanout, hold }] : [];
  });
  const awaiting = facts.sources.find(({ awaitingApproval }) => awaitingApproval);
  if (facts.namespaceMode === 'follow' && awaiting) {
    lines.push(
      `waits for approval: change ${awaiting.awaitingApproval} of ${awaiting.ref}, which more workloads read than follow mode rolls unasked; its FanoutAwaitsApproval Event says how to approve it (a write of yours is hashed as always)`,
    );
  } else if (facts.namespaceMode === 'follow' && held.length > 0) {
    lines.push(
      ...held.map(({ ref, fanout, hold }) => heldLine(ref, fanout, hold, facts.namespace)),
    );
  } else if (facts.namespaceMode === 'follow' && vacant(facts.follower)) {
    lines.push(
      `no follower is leading (Lease ${vacant(facts.follower)}): nothing touches it until one does; touch it yourself: kubectl patch ${target} -n ${facts.namespace} --type=merge -p '{}'`,
    );
  } else if (facts.namespaceMode === 'follow') {
    lines.push('follow mode touches it once due (debounce, minimum interval, rollout window)');
    if (facts.follower && 'unreadable' in facts.follower) {
      lines.push(
        `you cannot read the follower's Lease (${facts.follower.unreadable}): whether a follower leads is not known`,
      );
    }
  } else {
    lines.push(
      `this namespace is "true", so nothing writes it until you apply it server-side or touch it: kubectl patch ${target} -n ${facts.namespace} --type=merge -p '{}'`,
    );
  }
  // Held, partial or an outage: what the roll will do to the pods (docs/design.md §4).
  const notice = rolloutNotice(workload.object, workload.kind);
  if (notice) lines.push(notice.text);
  return lines;
}
