// What the follower lists and watches, as resources of the list-watch loop: ConfigMaps
// and Secrets (metadata only: names and versions) and each workload kind, cluster-wide
// or in one namespace. What they show goes into the reference index; a source's change
// is handed on with the workloads that read it. Objects of namespaces not followed are
// dropped here, and so are the workloads follow mode does not handle (per-workload
// opt-in): they never enter the index, so no change or resync evaluates or touches them.

import type { ListWatchHandler, ListWatchResource, ObjectEventType } from '../runtime/index.js';
import { formatSource, type NamedSource, sourceOfResource } from '../sources/index.js';
import { type WorkloadKind, workloadAnnotations } from '../workload/index.js';
import type { ConfigObject, ConfigResource, FollowApi, WatchNamespace } from './ports.js';
import type { Reader, ReferenceIndex } from './reference-index.js';
import { readReferences } from './references.js';
import type { SourceChange } from './touch-queue.js';
import { workloadKey } from './workload-ref.js';

/** One change of a source, as its metadata watch saw it. */
export interface SourceEvent {
  readonly namespace: string;
  readonly object: NamedSource;
  /** `configmap/NAME` or `secret/NAME`. */
  readonly source: string;
  readonly change: SourceChange;
  /** The object's, when the watch says (Events name it). */
  readonly uid?: string;
  /** undefined once deleted. */
  readonly resourceVersion?: string;
}

/** One resource, as the follower lists and watches it, and the log fields naming it. */
interface FollowedResource extends ListWatchResource {
  readonly what: Readonly<Record<string, string>>;
}

export interface ResourceContext {
  readonly api: FollowApi;
  readonly index: ReferenceIndex;
  /** hashKeyId of the follower's hash key (readReferences). */
  readonly hashKeyId: string;
  isFollowed(namespace: string): boolean;
  /** Whether a workload of a followed namespace, with these annotations, is handled (docs/design.md §2). */
  handles(namespace: string, annotations: Readonly<Record<string, string>>): boolean;
  /** A source changed; `readers` are the workloads that read it. */
  onSourceChange(event: SourceEvent, readers: readonly Reader[]): void;
}

const CHANGE: Readonly<Record<ObjectEventType, SourceChange>> = {
  ADDED: 'created',
  MODIFIED: 'changed',
  DELETED: 'deleted',
};

const SOURCE_PREFIX: Readonly<Record<ConfigResource, string>> = {
  configmaps: 'configmap/',
  secrets: 'secret/',
};

export function configResource(
  context: ResourceContext,
  namespace: WatchNamespace,
  resource: ConfigResource,
): FollowedResource {
  const { api, index } = context;
  const handler: ListWatchHandler<ConfigObject> = {
    list() {
      const listed = new Set<string>();
      return {
        page(objects) {
          for (const object of objects) {
            if (!context.isFollowed(object.namespace)) continue;
            const source = formatSource(sourceOfResource(resource, object.name));
            index.setSource(object.namespace, source, object.resourceVersion, object.fanout);
            listed.add(`${object.namespace}/${source}`);
          }
        },
        end: () => index.retainSources(namespace, SOURCE_PREFIX[resource], listed),
      };
    },
    event: (type, object) => onConfig(context, resource, type, object),
  };
  return {
    what: { resource, ...(namespace === undefined ? {} : { namespace }) },
    ...api.configObjects(namespace, resource)(handler),
  };
}

export function workloadResource(
  context: ResourceContext,
  namespace: WatchNamespace,
  kind: WorkloadKind,
): FollowedResource {
  const { api, index } = context;
  const handler: ListWatchHandler<unknown> = {
    list() {
      const listed = new Set<string>();
      return {
        page(objects) {
          for (const object of objects) {
            const references = readReferences(object, kind, context.hashKeyId);
            if (!references || !context.isFollowed(references.ref.namespace)) continue;
            if (!context.handles(references.ref.namespace, workloadAnnotations(object))) continue;
            index.putWorkload(references);
            listed.add(workloadKey(references.ref));
          }
        },
        end: () => index.retainWorkloads(namespace, kind, listed),
      };
    },
    event: (type, object) => onWorkload(context, kind, type, object),
  };
  return {
    what: { kind: kind.kind, ...(namespace === undefined ? {} : { namespace }) },
    ...api.workloadObjects(namespace, kind)(handler),
  };
}

/** A source event: the index says who reads it; those are handed on. */
function onConfig(
  { index, isFollowed, onSourceChange }: ResourceContext,
  resource: ConfigResource,
  type: ObjectEventType,
  object: ConfigObject,
): void {
  if (!isFollowed(object.namespace)) return;
  const named = sourceOfResource(resource, object.name);
  const source = formatSource(named);
  const version = type === 'DELETED' ? undefined : object.resourceVersion;
  const readers = index.setSource(object.namespace, source, version, object.fanout);
  const event = { namespace: object.namespace, object: named, source, change: CHANGE[type] };
  onSourceChange({ ...event, uid: object.uid, resourceVersion: version }, readers);
}

/**
 * A workload event sets its entry (the webhook hashed the write that made it, so it
 * asks for nothing: a touch's own patch comes back here and stops). One that is not
 * handled (any more: its opt-in annotation removed) leaves the index.
 */
function onWorkload(
  { index, hashKeyId, isFollowed, handles }: ResourceContext,
  kind: WorkloadKind,
  type: ObjectEventType,
  object: unknown,
): void {
  const references = readReferences(object, kind, hashKeyId);
  if (!references || !isFollowed(references.ref.namespace)) return;
  const { namespace } = references.ref;
  if (type === 'DELETED' || !handles(namespace, workloadAnnotations(object))) {
    index.deleteWorkload(references.ref);
  } else index.putWorkload(references);
}
