// An in-memory FollowApi (src/follow/ports.ts), a cluster in miniature: namespaces
// (followed or not), workloads, ConfigMap/Secret versions, and list and watch calls
// that behave as the apiserver's do — cluster-wide or per namespace, workload watches
// that see every write (a touch's too) — while the test changes config by hand. The
// touch runs the real admission use case on the stored workload: the webhook as the
// single judge, as in a cluster. Records every request, touches and Events.

import type { Mutator } from '../../src/admission/index.js';
import type { ConfigSource } from '../../src/evaluate/index.js';
import type {
  ConfigObject,
  ConfigResource,
  FollowApi,
  NamespaceInfo,
  RecordWrite,
  TouchOutcome,
  WatchNamespace,
  WorkloadEvent,
} from '../../src/follow/ports.js';
import type {
  ListerWatcher,
  ListWatchHandler,
  ObjectEventType,
  WatchEnd,
} from '../../src/runtime/index.js';
import { type NamedSource, SOURCE_RESOURCE } from '../../src/sources/index.js';
import type { WorkloadKind } from '../../src/workload/index.js';
import { sleep } from '../../tools/lib/poll.js';
import { applyPatch } from './json-patch.js';

/** An open watch: of `configmaps`, `secrets` or a workload kind (`Deployment`). */
type ConfigEvent = { readonly type: ObjectEventType; readonly object: ConfigObject };
type NamespaceEvent = { readonly type: ObjectEventType; readonly namespace: NamespaceInfo };
type WorkloadWatchEvent = { readonly type: ObjectEventType; readonly object: unknown };

/**
 * A ListerWatcher of a list that hands on its pages and a watch that hands on its events,
 * as the adapter's does (src/kube/lister-watcher.ts); a list that resolves to undefined
 * (a kind not served) is not whole.
 */
function listerWatcher<T>(
  list: (
    onPage: (objects: readonly T[]) => void,
    signal: AbortSignal,
  ) => Promise<string | undefined>,
  watch: (
    resourceVersion: string,
    onEvent: (type: ObjectEventType, object: T) => void,
    signal: AbortSignal,
  ) => Promise<WatchEnd>,
): ListerWatcher<T> {
  return (handler: ListWatchHandler<T>) => ({
    async list(signal) {
      const pages = handler.list();
      const version = await list((objects) => pages.page(objects), signal);
      if (version !== undefined) pages.end();
      return version;
    },
    watch: (resourceVersion, signal) =>
      watch(resourceVersion, (type, object) => handler.event(type, object), signal),
  });
}

export interface OpenWatch {
  readonly namespace: WatchNamespace;
  readonly resource: string;
  readonly resourceVersion: string;
  deliver(type: ObjectEventType, object: unknown): void;
  end(outcome: { expired?: boolean; error?: Error }): void;
}

export interface Touch {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly at: number;
}

type Stored = Record<string, unknown> & { metadata: Record<string, unknown> };

const PAGE = 500;

export class MemoryFollowApi implements FollowApi {
  /** Namespaces labelled follow. */
  readonly namespaces = new Map<string, NamespaceInfo>();
  /** `Kind/namespace/name` → the object. */
  readonly workloads = new Map<string, Stored>();
  readonly watches: OpenWatch[] = [];
  readonly touches: Touch[] = [];
  readonly events: WorkloadEvent[] = [];
  /** Every request, as `VERB resource[ namespace/name]`: `LIST configmaps`, `GET Deployment ns/web`. */
  readonly requests: string[] = [];
  /** How long a list of a resource (`configmaps`, `Deployment`) takes, when not at once. */
  readonly listDelayMs = new Map<string, number>();
  /** Kinds whose CRD is not installed: listing them is a 404. */
  readonly absentKinds = new Set<string>();
  /** `Kind/namespace/name` → why the cluster refuses its touches (a fence, RBAC). */
  readonly deniedTouches = new Map<string, string>();
  /** Resources (`secrets`, `Deployment`) whose every list fails, as a 403 would. */
  readonly failingLists = new Set<string>();
  /** `Kind/namespace/name` whose GET fails, as a timed-out request would. */
  readonly failingGets = new Set<string>();
  /** `namespace/selector` → the pods a list with that label selector shows. */
  readonly pods = new Map<string, unknown[]>();
  #namespaceWatch: ((event: NamespaceEvent) => void) | undefined;
  #version = 100;

  /**
   * `config`: `configmaps/namespace/name` → resourceVersion, and `annotations`: the same key →
   * its fan-out record and control, both shared with the webhook's ConfigSource when it reads
   * through `withClusterVersions`.
   */
  constructor(
    private readonly webhook: Mutator,
    readonly config = new Map<string, string>(),
    readonly annotations = new Map<string, SourceAnnotations>(),
  ) {}

  /** How many requests start with `prefix` (`GET`, `LIST Deployment`, …). */
  count(prefix: string): number {
    return this.requests.filter((request) => request.startsWith(prefix)).length;
  }

  followNamespace(
    name: string,
    annotations: Record<string, string> = {},
    labels: Record<string, string> = {},
  ): this {
    const type = this.namespaces.has(name) ? 'MODIFIED' : 'ADDED';
    const info = { name, labels, annotations };
    this.namespaces.set(name, info);
    this.#namespaceWatch?.({ type, namespace: info });
    return this;
  }

  unfollowNamespace(name: string): void {
    const info = this.namespaces.get(name);
    this.namespaces.delete(name);
    if (info) this.#namespaceWatch?.({ type: 'DELETED', namespace: info });
  }

  /** Stores a workload (a new resourceVersion) and tells the workload watches, as a write would. */
  putWorkload(namespace: string, object: Record<string, unknown>): this {
    const type = this.workload(String(object.kind), namespace, nameOf(object))
      ? 'MODIFIED'
      : 'ADDED';
    const stored = this.#store(namespace, object);
    this.#deliver(String(object.kind), namespace, type, stored);
    return this;
  }

  /** Stores a workload as a write the follower's watch never saw (a watch gap). */
  putWorkloadUnseen(namespace: string, object: Record<string, unknown>): this {
    this.#store(namespace, object);
    return this;
  }

  /** Tells the workload watches about the stored object again (its own watch event). */
  announceWorkload(kind: string, namespace: string, name: string): void {
    this.#deliver(kind, namespace, 'MODIFIED', this.workload(kind, namespace, name)!);
  }

  workload(kind: string, namespace: string, name: string): Stored | undefined {
    return this.workloads.get(`${kind}/${namespace}/${name}`);
  }

  /** A ConfigMap or Secret written (a new resourceVersion) or deleted; the watches see it. */
  change(namespace: string, resource: ConfigResource, name: string, type: ConfigEvent['type']) {
    const version = this.#changeUnseen(namespace, resource, name, type);
    this.#deliver(
      resource,
      namespace,
      type,
      this.#configObject(resource, namespace, name, version),
    );
  }

  /** Tells the watches of the source's version now, late: a watch that sees it after others. */
  announceConfig(namespace: string, resource: ConfigResource, name: string): void {
    const version = this.config.get(`${resource}/${namespace}/${name}`);
    if (version === undefined) throw new Error(`no ${resource} ${namespace}/${name}`);
    this.#deliver(
      resource,
      namespace,
      'MODIFIED',
      this.#configObject(resource, namespace, name, version),
    );
  }

  /** Someone writes the source's `confighash.dev/fanout-control` (`confighash resume`, say). */
  control(namespace: string, resource: ConfigResource, name: string, value: string): void {
    const key = `${resource}/${namespace}/${name}`;
    this.annotations.set(key, { ...this.annotations.get(key), fanoutControl: value });
    this.change(namespace, resource, name, 'MODIFIED');
  }

  /** The source's fan-out record as follow mode last wrote it. */
  recordOf(namespace: string, resource: ConfigResource, name: string): string | undefined {
    return this.annotations.get(`${resource}/${namespace}/${name}`)?.fanout;
  }

  /** The same change, missed by every watch (the next relist shows it). */
  changeUnseen(namespace: string, resource: ConfigResource, name: string) {
    this.#changeUnseen(namespace, resource, name, 'MODIFIED');
  }

  /** Ends the open watches of `resource` (`configmaps`, `Deployment`), as the server would. */
  endWatches(resource: string, outcome: { expired?: boolean; error?: Error }): void {
    for (const watch of this.watches.filter((w) => w.resource === resource)) watch.end(outcome);
  }

  // --- FollowApi -------------------------------------------------------------

  readonly followNamespaces: ListerWatcher<NamespaceInfo> = listerWatcher(
    async (onPage, signal) => {
      const listed = await this.listFollowNamespaces();
      if (!signal.aborted) onPage(listed.namespaces);
      return listed.resourceVersion;
    },
    (resourceVersion, onEvent, signal) =>
      this.watchFollowNamespaces(
        resourceVersion,
        (event) => onEvent(event.type, event.namespace),
        signal,
      ),
  );

  configObjects(namespace: WatchNamespace, resource: ConfigResource): ListerWatcher<ConfigObject> {
    return listerWatcher(
      (onPage) => this.listConfig(namespace, resource, onPage),
      (resourceVersion, onEvent, signal) =>
        this.watchConfig(
          namespace,
          resource,
          resourceVersion,
          (event) => onEvent(event.type, event.object),
          signal,
        ),
    );
  }

  workloadObjects(namespace: WatchNamespace, kind: WorkloadKind): ListerWatcher<unknown> {
    return listerWatcher(
      (onPage) => this.listWorkloads(namespace, kind, onPage),
      (resourceVersion, onEvent, signal) =>
        this.watchWorkloads(
          namespace,
          kind,
          resourceVersion,
          (event) => onEvent(event.type, event.object),
          signal,
        ),
    );
  }

  #failIfFailing(resource: string): void {
    if (!this.failingLists.has(resource)) return;
    this.requests.push(`LIST ${resource}`);
    throw new Error(`list ${resource}: forbidden`);
  }

  async listFollowNamespaces() {
    this.requests.push('LIST namespaces');
    return { namespaces: [...this.namespaces.values()], resourceVersion: String(this.#version) };
  }

  watchFollowNamespaces(
    resourceVersion: string,
    onEvent: (event: NamespaceEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    this.requests.push('WATCH namespaces');
    this.#namespaceWatch = onEvent;
    return new Promise((resolve) => {
      const end = () => {
        this.#namespaceWatch = undefined;
        resolve({ resourceVersion, expired: false });
      };
      if (signal.aborted) end();
      else signal.addEventListener('abort', end, { once: true });
    });
  }

  async listConfig(
    namespace: WatchNamespace,
    resource: ConfigResource,
    onPage: (objects: readonly ConfigObject[]) => void,
  ) {
    const objects = [...this.config]
      .map(([key, resourceVersion]) => ({ key: key.split('/'), resourceVersion }))
      .filter(({ key }) => key[0] === resource && inScope(namespace, key[1]!))
      .map(({ key, resourceVersion }) =>
        this.#configObject(resource, key[1]!, key[2]!, resourceVersion),
      );
    this.#failIfFailing(resource);
    await this.#delay(resource);
    this.#pages(`LIST ${resource}`, objects, onPage);
    return String(++this.#version);
  }

  watchConfig(
    namespace: WatchNamespace,
    resource: ConfigResource,
    resourceVersion: string,
    onEvent: (event: ConfigEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    return this.#watch(namespace, resource, resourceVersion, signal, (type, object) =>
      onEvent({ type, object: object as ConfigObject }),
    );
  }

  async listWorkloads(
    namespace: WatchNamespace,
    kind: WorkloadKind,
    onPage: (objects: readonly unknown[]) => void,
  ) {
    if (this.absentKinds.has(kind.kind)) {
      this.requests.push(`LIST ${kind.kind}`);
      return undefined;
    }
    this.#failIfFailing(kind.kind);
    const objects = [...this.workloads.values()]
      .filter((object) => object.kind === kind.kind)
      .filter((object) => inScope(namespace, String(object.metadata.namespace)))
      .map((object) => structuredClone(object));
    await this.#delay(kind.kind);
    this.#pages(`LIST ${kind.kind}`, objects, onPage);
    return String(++this.#version);
  }

  watchWorkloads(
    namespace: WatchNamespace,
    kind: WorkloadKind,
    resourceVersion: string,
    onEvent: (event: WorkloadWatchEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    return this.#watch(namespace, kind.kind, resourceVersion, signal, (type, object) =>
      onEvent({ type, object: structuredClone(object) }),
    );
  }

  async getWorkload(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    _signal?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    this.requests.push(`GET ${kind.kind} ${namespace}/${name}`);
    if (this.failingGets.has(`${kind.kind}/${namespace}/${name}`)) {
      throw new Error(`get ${kind.kind} ${namespace}/${name}: request timed out`);
    }
    const object = this.workload(kind.kind, namespace, name);
    return object === undefined ? undefined : structuredClone(object);
  }

  /** The `{}` patch: the stored object goes through the webhook, which writes the hash. */
  async touch(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    signal: AbortSignal,
  ): Promise<TouchOutcome> {
    this.requests.push(`PATCH ${kind.kind} ${namespace}/${name}`);
    const reason = this.deniedTouches.get(`${kind.kind}/${namespace}/${name}`);
    if (reason !== undefined) return { status: 'denied', reason };
    this.touches.push({ kind: kind.kind, namespace, name, at: Date.now() });
    await this.write(namespace, kind, name, signal);
    return { status: 'touched' };
  }

  /**
   * A write of the stored object through the webhook (what a touch does; setup uses it
   * too); `unseen`: one the follower's watch misses.
   */
  async write(
    namespace: string,
    kind: WorkloadKind,
    name: string,
    signal: AbortSignal,
    { unseen = false } = {},
  ) {
    const object = this.workload(kind.kind, namespace, name);
    if (!object) throw new Error(`no ${kind.kind} ${namespace}/${name}`);
    const written = await this.#admit(namespace, kind, object, object, signal);
    if (unseen) this.putWorkloadUnseen(namespace, written);
    else this.putWorkload(namespace, written);
  }

  /**
   * A create through the webhook, stored and seen by the watches. `meanwhile` runs between
   * the webhook's answer and the store: what lands between the webhook's reads and the commit.
   */
  async create(
    namespace: string,
    kind: WorkloadKind,
    object: Record<string, unknown>,
    signal: AbortSignal,
    meanwhile: () => void = () => {},
  ): Promise<void> {
    const created = await this.#admit(namespace, kind, object, undefined, signal);
    meanwhile();
    this.putWorkload(namespace, created);
  }

  /** `object` as the webhook's patch leaves it (`old`: an UPDATE of it, else a CREATE). */
  async #admit(
    namespace: string,
    kind: WorkloadKind,
    object: Record<string, unknown>,
    old: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const result = await this.webhook.review(
      {
        uid: `write-${++this.#version}`,
        kind: { group: kind.group, version: kind.version, kind: kind.kind },
        name: nameOf(object),
        namespace,
        operation: old ? 'UPDATE' : 'CREATE',
        dryRun: false,
        object,
        ...(old ? { oldObject: old } : {}),
      },
      signal,
    );
    return applyPatch(object, result.patch as never);
  }

  async writeFanoutRecord(
    namespace: string,
    source: NamedSource,
    value: string,
    resourceVersion: string,
  ): Promise<RecordWrite> {
    const resource = SOURCE_RESOURCE[source.kind];
    const key = `${resource}/${namespace}/${source.name}`;
    this.requests.push(`PATCH ${resource} ${namespace}/${source.name}`);
    if (this.config.get(key) !== resourceVersion) return { status: 'conflict' };
    this.annotations.set(key, { ...this.annotations.get(key), fanout: value });
    this.change(namespace, resource, source.name, 'MODIFIED');
    return { status: 'written', resourceVersion: this.config.get(key)! };
  }

  async listPods(namespace: string, selector: string): Promise<unknown[]> {
    this.requests.push(`LIST pods ${namespace}`);
    return structuredClone(this.pods.get(`${namespace}/${selector}`) ?? []);
  }

  async recordEvent(event: WorkloadEvent) {
    this.requests.push(`POST events ${event.namespace}/${event.name}`);
    this.events.push(event);
  }

  // ---------------------------------------------------------------------------

  async #delay(resource: string): Promise<void> {
    const ms = this.listDelayMs.get(resource);
    if (ms !== undefined) await sleep(ms);
  }

  #store(namespace: string, object: Record<string, unknown>): Stored {
    const stored = structuredClone(object) as Stored;
    stored.metadata = {
      ...stored.metadata,
      namespace,
      resourceVersion: String(++this.#version),
    };
    this.workloads.set(`${String(stored.kind)}/${namespace}/${nameOf(stored)}`, stored);
    return stored;
  }

  #configObject(
    resource: ConfigResource,
    namespace: string,
    name: string,
    resourceVersion: string,
  ): ConfigObject {
    const fanout = this.annotations.get(`${resource}/${namespace}/${name}`)?.fanout;
    return { namespace, name, resourceVersion, ...(fanout ? { fanout } : {}) };
  }

  #changeUnseen(namespace: string, resource: ConfigResource, name: string, type: string) {
    const key = `${resource}/${namespace}/${name}`;
    const version = String(++this.#version);
    if (type === 'DELETED') this.config.delete(key);
    else this.config.set(key, version);
    return version;
  }

  #deliver(resource: string, namespace: string, type: ConfigEvent['type'], object: unknown) {
    for (const watch of [...this.watches]) {
      if (watch.resource === resource && inScope(watch.namespace, namespace)) {
        watch.deliver(type, object);
      }
    }
  }

  #pages<T>(request: string, objects: T[], onPage: (objects: readonly T[]) => void): void {
    for (let start = 0; start === 0 || start < objects.length; start += PAGE) {
      this.requests.push(request);
      onPage(objects.slice(start, start + PAGE));
    }
  }

  #watch(
    namespace: WatchNamespace,
    resource: string,
    resourceVersion: string,
    signal: AbortSignal,
    deliver: OpenWatch['deliver'],
  ): Promise<WatchEnd> {
    this.requests.push(`WATCH ${resource}`);
    return new Promise((resolve, reject) => {
      const watch: OpenWatch = {
        namespace,
        resource,
        resourceVersion,
        deliver,
        end: ({ expired = false, error }) => {
          const at = this.watches.indexOf(watch);
          if (at < 0) return;
          this.watches.splice(at, 1);
          if (error) reject(error);
          else resolve({ resourceVersion: String(++this.#version), expired });
        },
      };
      this.watches.push(watch);
      signal.addEventListener('abort', () => watch.end({}), { once: true });
    });
  }
}

function inScope(scope: WatchNamespace, namespace: string): boolean {
  return scope === undefined || scope === namespace;
}

function nameOf(object: Record<string, unknown>): string {
  return String((object.metadata as { name: string }).name);
}

/**
 * `content`'s answers with the resourceVersions of `config` (a MemoryFollowApi's): the webhook
 * and the follower's evaluations read the versions its watches report, as on one apiserver.
 * Change content and version together (MemorySource, then `change`), as one write does.
 */
export function withClusterVersions(
  content: ConfigSource,
  config: ReadonlyMap<string, string>,
  annotations: ReadonlyMap<string, SourceAnnotations> = new Map(),
): ConfigSource {
  return {
    async get(kind, namespace, name, signal) {
      const result = await content.get(kind, namespace, name, signal);
      const key = `${SOURCE_RESOURCE[kind]}/${namespace}/${name}`;
      const version = config.get(key);
      return result.status === 'found' && version !== undefined
        ? { ...result, resourceVersion: version, ...annotations.get(key) }
        : result;
    },
  };
}

/** The annotations of a source follow mode reads and writes (docs/design.md §6). */
export interface SourceAnnotations {
  readonly fanout?: string;
  readonly fanoutControl?: string;
}
