// What one plan run reads once and shares: namespace modes and live sources, each
// read at most once however many workloads need it.

import type { LookupResult } from '../evaluate/index.js';
import type { NamedSource } from '../sources/index.js';
import {
  type JsonObject,
  type NamespaceMode,
  namespaceModeOf,
  type Workload,
  type WorkloadKind,
  type WorkloadsMode,
  workloadsModeOf,
} from '../workload/index.js';
import { type Manifests, sourceKey } from './manifests.js';
import type { FollowLeader, PlanCluster, Read } from './ports.js';

export interface PlanOptions {
  /** The manifests are applied client-side (kubectl apply, Helm 3), not server-side. */
  readonly clientSide: boolean;
  /** The kinds whose live workloads may read the manifests' config (every kind known, plus --kind). */
  readonly kinds: readonly WorkloadKind[];
  /** The follower's `--follow-max-fanout` (docs/design.md §6), which the CLI cannot read; 0: off. */
  readonly maxFanout: number;
}

/** A workload to plan: one of the manifests', or a live one that reads their config. */
export interface PlanTarget {
  readonly workload: Workload;
  readonly namespace: string;
  readonly name: string;
  /** The live object of a workload found only in the cluster; undefined for one in the manifests. */
  readonly live: JsonObject | undefined;
}

type ModeRead =
  | {
      readonly status: 'found';
      readonly value: NamespaceMode;
      /** Which workloads the namespace hands over (`confighash.dev/workloads`, docs/design.md §2). */
      readonly workloads: WorkloadsMode;
    }
  | { readonly status: 'failed'; readonly detail: string };

export interface Context {
  readonly manifests: Manifests;
  readonly cluster: PlanCluster | undefined;
  readonly options: PlanOptions;
  readonly signal: AbortSignal;
  mode(namespace: string): Promise<ModeRead>;
  liveSource(namespace: string, source: NamedSource): Promise<LookupResult>;
  /** Who leads follow mode, read once for the whole plan. */
  follower(): Promise<Read<FollowLeader>>;
}

function found(labels: Readonly<Record<string, string>>): ModeRead {
  return { status: 'found', value: namespaceModeOf(labels), workloads: workloadsModeOf(labels) };
}

export function createContext(
  manifests: Manifests,
  cluster: PlanCluster | undefined,
  options: PlanOptions,
  signal: AbortSignal,
): Context {
  const modes = new Map<string, Promise<ModeRead>>();
  const sources = new Map<string, Promise<LookupResult>>();
  let leader: Promise<Read<FollowLeader>> | undefined;
  const readMode = async (namespace: string): Promise<ModeRead> => {
    const labels = manifests.namespaceLabels.get(namespace);
    if (labels) return found(labels);
    if (!cluster) return { status: 'failed', detail: 'offline, and not in the manifests' };
    const read = await cluster.namespace(namespace, signal);
    if (read.status === 'failed') return read;
    return found(read.status === 'found' ? read.value.labels : {});
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
    follower() {
      leader ??= cluster
        ? cluster.followLeader(signal)
        : Promise.resolve({ status: 'failed', detail: 'offline' });
      return leader;
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
