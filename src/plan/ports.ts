// What plan and explain read from the cluster, as a port: the user's own
// kubeconfig and permissions, so a read that fails is a value with a reason
// (shown as `unknown` or `unreadable`), never an exception.

import type { ConfigSource } from '../evaluate/ports.js';
import type { SourceKind } from '../sources/index.js';
import type { JsonObject, WorkloadKind } from '../workload/index.js';

export type Read<T> =
  | { readonly status: 'found'; readonly value: T }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly detail: string };

export interface DryRunTouch {
  /** The object the apiserver returns for a dry-run `{}` merge patch. */
  readonly object: JsonObject;
  /** `Warning` headers of the answer (the webhook's warnings among them). */
  readonly warnings: readonly string[];
}

export interface ClusterEvent {
  readonly reason: string;
  readonly note: string;
  readonly time: string;
}

export interface NamespaceMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** Who leads follow mode (its Lease, docs/design.md §6), as the CLI can tell it from outside. */
export interface FollowLeader {
  /** `NAMESPACE/NAME` of the Lease read. */
  readonly lease: string;
  /** The holder whose renewal is current; null when none is. */
  readonly holder: string | null;
  /** When none is: why (no Lease, released, or not renewed within its duration). */
  readonly vacant?: string;
}

export interface PlanCluster {
  readonly configSource: ConfigSource;
  /** The follower's Lease: whether a follower leads now. */
  followLeader(signal: AbortSignal): Promise<Read<FollowLeader>>;
  namespace(namespace: string, signal: AbortSignal): Promise<Read<NamespaceMetadata>>;
  getWorkload(
    kind: WorkloadKind,
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<Read<JsonObject>>;
  /** `kubectl patch --dry-run=server --type=merge -p '{}'`: what the webhook writes now. */
  dryRunTouch(
    kind: WorkloadKind,
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<Read<DryRunTouch>>;
  listWorkloads(
    kind: WorkloadKind,
    namespace: string,
    signal: AbortSignal,
  ): Promise<Read<JsonObject[]>>;
  /**
   * A forced server-side apply of `manifest` as a dry run: the workload as the
   * apiserver would store it, defaults filled in (and the webhook's answer to it).
   */
  dryRunApply(
    kind: WorkloadKind,
    namespace: string,
    manifest: JsonObject,
    signal: AbortSignal,
  ): Promise<Read<JsonObject>>;
}

/** A workload found by a selection: where it is and its name. */
export interface FoundWorkload {
  readonly namespace: string;
  readonly name: string;
}

export interface ExplainCluster extends PlanCluster {
  /**
   * The workloads of `kind` that a label selector picks (every one without it), in
   * `namespace` or, undefined, in every namespace: `kubectl get KIND -l SELECTOR [-A]`.
   */
  findWorkloads(
    kind: WorkloadKind,
    namespace: string | undefined,
    selector: string | undefined,
    signal: AbortSignal,
  ): Promise<Read<FoundWorkload[]>>;
  /**
   * When a ConfigMap or Secret was last written (its newest managedFields time),
   * read as metadata only: no value crosses the wire for it.
   */
  sourceWrittenAt(
    kind: SourceKind,
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<Read<string>>;
  /** Events about the object (a workload, or a source) reported by confighash, oldest first. */
  confighashEvents(
    kind: Pick<WorkloadKind, 'kind'>,
    namespace: string,
    name: string,
    signal: AbortSignal,
  ): Promise<Read<ClusterEvent[]>>;
}

/** The webhook's registration, as doctor reads it. */
export interface WebhookRegistration {
  readonly webhooks: number;
  /** Each webhook's failurePolicy, in order. */
  readonly failurePolicies: readonly string[];
  /** `namespace/name` of the Service it calls, or its URL. */
  readonly target: string;
}

/** What `confighash doctor` reads: the registration, and a probe the webhook answers. */
export interface DoctorCluster extends PlanCluster {
  webhookRegistration(name: string, signal: AbortSignal): Promise<Read<WebhookRegistration>>;
  /**
   * A server-side dry-run create of `probe` in `namespace` (nothing is stored): the object as
   * the webhook answered it, with its warnings.
   */
  dryRunCreate(
    kind: WorkloadKind,
    namespace: string,
    probe: JsonObject,
    signal: AbortSignal,
  ): Promise<Read<DryRunTouch>>;
}
