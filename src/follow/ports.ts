// What follow mode needs from the cluster, as ports: FollowApi (adapter:
// src/kube/follow-api.ts; in-memory: test/support/memory-follow-api.ts) and
// LeaseStore (adapter: src/kube/lease-store.ts); and microTime, the text of the
// times a Lease and an Event carry, which both the election and the adapters write.

import type { ListerWatcher } from '../runtime/index.js';
import type { NamedSource, SourceResource } from '../sources/index.js';
import type { GroupVersionKind, WorkloadKind } from '../workload/index.js';

export type ConfigResource = SourceResource;

export interface NamespaceInfo {
  readonly name: string;
  /** Its workload mode (`confighash.dev/workloads`) among them. */
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** A ConfigMap or Secret as its metadata-only watch and list show it: no content. */
export interface ConfigObject {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly uid?: string;
  /** Its `confighash.dev/fanout` annotation: the state of its fan-out (change-state.ts). */
  readonly fanout?: string;
}

/**
 * Where lists and watches look: every namespace (`undefined`, one watch per resource),
 * or one namespace (installs that grant RBAC per namespace).
 */
export type WatchNamespace = string | undefined;

export interface FollowApi {
  /** Namespaces labelled `confighash.dev/enabled=follow`. */
  followNamespaces: ListerWatcher<NamespaceInfo>;
  /**
   * Metadata-only (PartialObjectMetadata) ConfigMaps or Secrets: names and versions, never
   * content. Lists come in pages of 500, each page handed on as it arrives.
   */
  configObjects(namespace: WatchNamespace, resource: ConfigResource): ListerWatcher<ConfigObject>;
  /**
   * A workload kind, whole objects, read once into the reference index and dropped. Lists
   * come in pages of 500; a kind not served (its CRD is not installed, yet) lists as such.
   */
  workloadObjects(namespace: WatchNamespace, kind: WorkloadKind): ListerWatcher<unknown>;
  /** undefined when it no longer exists. */
  getWorkload(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    signal: AbortSignal,
  ): Promise<unknown>;
  /**
   * The empty merge patch `{}` (field manager confighash): the webhook does the rest. A write
   * the cluster refuses (RBAC, or the follower's fence when another mutating webhook changes
   * other fields of the same write) is an outcome, not an error: it says so on the workload.
   */
  touch(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    signal: AbortSignal,
  ): Promise<TouchOutcome>;
  recordEvent(event: WorkloadEvent, signal: AbortSignal): Promise<void>;
  /**
   * Sets the source's `confighash.dev/fanout` annotation, and nothing else, if the source is
   * still at `resourceVersion` (the follower's fence allows no other change of it).
   */
  writeFanoutRecord(
    namespace: string,
    source: NamedSource,
    value: string,
    resourceVersion: string,
    signal: AbortSignal,
  ): Promise<RecordWrite>;
  /** The pods matching `selector` in `namespace`: their metadata and status, nothing more. */
  listPods(namespace: string, selector: string, signal: AbortSignal): Promise<unknown[]>;
}

/** A conditional write of one annotation of a source (the record, or a control). */
export type RecordWrite =
  | { readonly status: 'written'; readonly resourceVersion: string }
  /** The source changed since it was read (or is gone): read it again. */
  | { readonly status: 'conflict' }
  | { readonly status: 'denied'; readonly reason: string };

export type TouchOutcome =
  | { readonly status: 'touched' }
  | { readonly status: 'denied'; readonly reason: string };

/** An Event regarding a workload, or a source (a fan-out halted on it). */
export interface WorkloadEvent {
  readonly kind: GroupVersionKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly action: string;
  /** Names objects, never content. */
  readonly note: string;
}

// --- the Lease (leader election, lease.ts) ---------------------------------------

/** A Kubernetes MicroTime: RFC 3339 with microseconds, as Leases and Events carry it. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface LeaseRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  /** MicroTime text (microTime), as the API stores it; so is renewTime. */
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions: number;
}

export interface StoredLease {
  readonly record: LeaseRecord;
  readonly resourceVersion: string;
}

/** Every call gives up (rejects) when `signal` aborts. */
export interface LeaseStore {
  get(signal: AbortSignal): Promise<StoredLease | undefined>;
  /** false when someone else created it first. */
  create(record: LeaseRecord, signal: AbortSignal): Promise<boolean>;
  /** false on a resourceVersion conflict. */
  update(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<boolean>;
}
