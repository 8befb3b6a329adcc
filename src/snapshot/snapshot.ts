// A snapshot (docs/design.md §13): an immutable ConfigMap holding what a pod template selects of
// one source, named from the source and the keyed digest of that content, so that equal content
// has one name and a name says which content it holds. Pure.

import type { EncodedValue, HashInput, SourceContent } from '../hash/index.js';
import { formatSource, type SourceRef } from '../sources/index.js';
import { isObject, type JsonObject, SNAPSHOT, SNAPSHOT_OF } from '../workload/index.js';
import type { OwnerReference } from './ports.js';

const INFIX = '-snap-';
const DIGEST_LENGTH = 16;
/** A ConfigMap's name is a DNS subdomain of at most 253 characters. */
const MAX_NAME_LENGTH = 253;
const MAX_SOURCE_LENGTH = MAX_NAME_LENGTH - INFIX.length - DIGEST_LENGTH;
const CONFIGMAP_PREFIX = formatSource({ kind: 'ConfigMap', name: '' });
const SNAPSHOT_NAME = new RegExp(`${INFIX}([0-9a-f]{${DIGEST_LENGTH}})$`);

/** A ConfigMap source's snapshot: where it goes and what it holds. */
export interface Snapshot {
  readonly namespace: string;
  readonly name: string;
  readonly source: SourceRef;
  /** Only the keys the template selects. */
  readonly content: SourceContent;
}

/** Digests one source as selected, with the namespace's current key (Digests.digestOne). */
export type DigestOne = (input: HashInput) => string;

/** `SOURCE-snap-DIGEST`, SOURCE cut to fit 253 characters and to end in a letter or digit. */
export function snapshotName(source: string, digest: string): string {
  const cut = source.slice(0, MAX_SOURCE_LENGTH).replace(/[.-]+$/, '');
  return `${cut}${INFIX}${digest.slice(0, DIGEST_LENGTH)}`;
}

/**
 * Whether a name is a snapshot's name for its `snapshot-of` annotation: a ConfigMap source's
 * name, `-snap-` and 16 hex characters (the fence's rule). A ConfigMap labelled as a snapshot
 * by someone else's hand fails it and is never touched.
 */
export function isSnapshotNameOf(name: string, snapshotOf: string | undefined): boolean {
  const digest = SNAPSHOT_NAME.exec(name)?.[1];
  if (digest === undefined || !snapshotOf?.startsWith(CONFIGMAP_PREFIX)) return false;
  return snapshotName(snapshotOf.slice(CONFIGMAP_PREFIX.length), digest) === name;
}

/** The snapshot of `source` as `content` is now: only its selected keys, under their digest's name. */
export function planSnapshot(
  source: SourceRef,
  namespace: string,
  content: SourceContent,
  digestOne: DigestOne,
): Snapshot {
  const digest = digestOne({
    kind: source.kind,
    name: source.name,
    selection: source.selection,
    content,
  });
  return {
    namespace,
    name: snapshotName(source.name, digest),
    source,
    content: selected(source, content),
  };
}

function selected(source: SourceRef, content: SourceContent): SourceContent {
  if (source.selection.all) return content;
  const kept = new Map<string, EncodedValue>();
  for (const key of source.selection.keys) {
    const value = content.get(key);
    if (value) kept.set(key, value);
  }
  return kept;
}

/** The ConfigMap to create; `owner` when the workload's uid is known (an UPDATE). */
export function snapshotBody(snapshot: Snapshot, owner: OwnerReference | undefined): JsonObject {
  const data: Record<string, string> = {};
  const binaryData: Record<string, string> = {};
  for (const [key, { text, encoding }] of snapshot.content) {
    (encoding === 'utf8' ? data : binaryData)[key] = text;
  }
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: snapshot.name,
      namespace: snapshot.namespace,
      labels: { [SNAPSHOT]: 'true' },
      annotations: { [SNAPSHOT_OF]: formatSource(snapshot.source) },
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
    immutable: true,
    ...(Object.keys(data).length > 0 ? { data } : {}),
    ...(Object.keys(binaryData).length > 0 ? { binaryData } : {}),
  };
}

/**
 * Whether an object found under a snapshot's name is that snapshot: labelled and annotated as
 * one of this source, immutable, and its content hashing to the name. Anything else took the name.
 */
export function isSnapshotOf(
  found: { readonly object: JsonObject; readonly content: SourceContent },
  snapshot: Snapshot,
  digestOne: DigestOne,
): boolean {
  const metadata = isObject(found.object.metadata) ? found.object.metadata : {};
  const labels = isObject(metadata.labels) ? metadata.labels : {};
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {};
  if (labels[SNAPSHOT] !== 'true' || found.object.immutable !== true) return false;
  if (annotations[SNAPSHOT_OF] !== formatSource(snapshot.source)) return false;
  const { kind, name, selection } = snapshot.source;
  const digest = digestOne({ kind, name, selection, content: found.content });
  return snapshotName(name, digest) === snapshot.name;
}

/** Whether `content` of `source` is what the snapshot `name` holds (a pinned snapshot to recreate). */
export function holdsContentOf(
  name: string,
  source: SourceRef,
  content: SourceContent,
  digestOne: DigestOne,
): boolean {
  if (!SNAPSHOT_NAME.test(name)) return false;
  const { kind, selection } = source;
  return (
    snapshotName(source.name, digestOne({ kind, name: source.name, selection, content })) === name
  );
}
