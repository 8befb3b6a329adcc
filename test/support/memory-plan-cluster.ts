// An in-memory PlanCluster for unit tests of plan and explain: namespaces by
// labels, workloads by kind and name, config through a MemorySource, and reads
// that fail on demand. Every read is recorded, so a test can pin which were made.

import type {
  ClusterEvent,
  DryRunTouch,
  ExplainCluster,
  FollowLeader,
  FoundWorkload,
  NamespaceMetadata,
  Read,
} from '../../src/plan/index.js';
import type { SourceKind } from '../../src/sources/index.js';
import type { JsonObject, WorkloadKind } from '../../src/workload/index.js';
import { MemorySource } from './memory-source.js';

export class MemoryPlanCluster implements ExplainCluster {
  readonly configSource = new MemorySource();
  readonly namespaces = new Map<string, Record<string, string> | 'forbidden'>();
  readonly namespaceAnnotations = new Map<string, Record<string, string>>();
  readonly workloads = new Map<string, JsonObject | 'forbidden'>();
  readonly lists = new Map<string, 'forbidden'>();
  dryRun: (object: JsonObject) => Read<DryRunTouch> = (object) => ({
    status: 'found',
    value: { object, warnings: [] },
  });
  /** A dry-run apply stores the manifest as it is: no defaults to fill in here. */
  applied: (manifest: JsonObject) => Read<JsonObject> = (manifest) => ({
    status: 'found',
    value: structuredClone(manifest) as JsonObject,
  });
  events: Read<ClusterEvent[]> = { status: 'found', value: [] };
  /** Events of other objects (a source), by `Kind/name`; the rest get `events`. */
  readonly eventsOf = new Map<string, ClusterEvent[]>();
  /** Last-write times of ConfigMaps and Secrets, by `Kind/name`. */
  readonly writtenAt = new Map<string, string>();
  readonly calls: string[] = [];
  /** The follower's Lease: a leader by default. */
  leader: Read<FollowLeader> = {
    status: 'found',
    value: { lease: 'confighash-system/confighash-follow', holder: 'follower-0' },
  };

  withNamespace(name: string, labels: Record<string, string> | 'forbidden'): this {
    this.namespaces.set(name, labels);
    return this;
  }

  workload(
    namespace: string,
    object: JsonObject | 'forbidden',
    kind = 'Deployment',
    name?: string,
  ): this {
    const metadata = typeof object === 'string' ? { name } : (object.metadata as { name: string });
    this.workloads.set(`${kind}/${namespace}/${metadata.name}`, object);
    return this;
  }

  async namespace(namespace: string): Promise<Read<NamespaceMetadata>> {
    this.calls.push(`namespace ${namespace}`);
    const labels = this.namespaces.get(namespace);
    if (labels === undefined) return { status: 'absent' };
    if (labels === 'forbidden') return { status: 'failed', detail: 'forbidden' };
    const annotations = this.namespaceAnnotations.get(namespace) ?? {};
    return { status: 'found', value: { labels, annotations } };
  }

  async getWorkload(
    kind: WorkloadKind,
    namespace: string,
    name: string,
  ): Promise<Read<JsonObject>> {
    this.calls.push(`get ${kind.kind} ${namespace}/${name}`);
    const object = this.workloads.get(`${kind.kind}/${namespace}/${name}`);
    if (object === undefined) return { status: 'absent' };
    if (object === 'forbidden') return { status: 'failed', detail: 'forbidden' };
    return { status: 'found', value: structuredClone(object) as JsonObject };
  }

  async listWorkloads(kind: WorkloadKind, namespace: string): Promise<Read<JsonObject[]>> {
    this.calls.push(`list ${kind.kind} ${namespace}`);
    // A cluster without other projects' CRDs (Argo Rollouts, OpenKruise): their lists are 404s.
    if (kind.group !== 'apps') return { status: 'absent' };
    if (this.lists.get(`${kind.kind}/${namespace}`) === 'forbidden') {
      return { status: 'failed', detail: 'forbidden' };
    }
    const prefix = `${kind.kind}/${namespace}/`;
    const items = [...this.workloads.entries()]
      .filter(([key, value]) => key.startsWith(prefix) && value !== 'forbidden')
      .map(([, value]) => structuredClone(value) as JsonObject);
    return { status: 'found', value: items };
  }

  async followLeader(): Promise<Read<FollowLeader>> {
    return this.leader;
  }

  /** Names of the workloads of a kind, in one namespace or all; labels matched as `k=v` only. */
  async findWorkloads(
    kind: WorkloadKind,
    namespace: string | undefined,
    selector: string | undefined,
  ): Promise<Read<FoundWorkload[]>> {
    const wanted = selector?.split(',').map((term) => term.split('=') as [string, string]);
    const found = [...this.workloads.entries()].flatMap(([key, object]) => {
      const [kindName, ns, name] = key.split('/') as [string, string, string];
      if (kindName !== kind.kind || (namespace !== undefined && ns !== namespace)) return [];
      const labels =
        typeof object === 'string'
          ? {}
          : ((object.metadata as { labels?: Record<string, string> }).labels ?? {});
      return (wanted ?? []).every(([k, v]) => labels[k] === v) ? [{ namespace: ns, name }] : [];
    });
    return { status: 'found', value: found };
  }

  async dryRunTouch(
    kind: WorkloadKind,
    namespace: string,
    name: string,
  ): Promise<Read<DryRunTouch>> {
    const live = await this.getWorkload(kind, namespace, name);
    return live.status === 'found' ? this.dryRun(live.value) : live;
  }

  async dryRunApply(
    kind: WorkloadKind,
    namespace: string,
    manifest: JsonObject,
  ): Promise<Read<JsonObject>> {
    this.calls.push(`dry-run apply ${kind.kind} ${namespace}`);
    return this.applied(manifest);
  }

  async sourceWrittenAt(kind: SourceKind, _namespace: string, name: string): Promise<Read<string>> {
    const time = this.writtenAt.get(`${kind}/${name}`);
    return time === undefined ? { status: 'absent' } : { status: 'found', value: time };
  }

  async confighashEvents(
    kind: { kind: string },
    _namespace: string,
    name: string,
  ): Promise<Read<ClusterEvent[]>> {
    const own = this.eventsOf.get(`${kind.kind}/${name}`);
    return own ? { status: 'found', value: own } : this.events;
  }
}
