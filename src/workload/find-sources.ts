// Reference discovery (docs/design.md §3 "Sources" and "Selected keys"): which
// ConfigMaps and Secrets a pod template reads, and which of their keys.

import {
  type KeySelection,
  parseSourceList,
  type SourceKind,
  type SourceRef,
} from '../sources/index.js';
import { EXCLUDE, INCLUDE, LIVE_RELOAD } from './annotations.js';
import { isObject, type JsonObject } from './object.js';

interface SourceDiscovery {
  /** One entry per object, in order of first reference (the hash sorts them). */
  readonly sources: readonly SourceRef[];
  /** One line per annotation entry that could not be understood; the entry is ignored. */
  readonly problems: readonly string[];
}

interface Accumulated {
  kind: SourceKind;
  name: string;
  all: boolean;
  keys: Set<string>;
  requiredKeys: Set<string>;
  optional: boolean;
}

/** A reference as found in the spec: whole object, or some of its keys. */
interface Reference {
  kind: SourceKind;
  name: unknown;
  keys: readonly unknown[] | 'all';
  optional: unknown;
  at: readonly (string | number)[];
}

export function findSources(
  podSpec: unknown,
  workloadAnnotations: Readonly<Record<string, string>> = {},
): SourceDiscovery {
  const found = new Map<string, Accumulated>();
  const add = (ref: FoundReference): void => {
    const id = `${ref.kind}/${ref.name}`;
    let entry = found.get(id);
    if (!entry) {
      entry = {
        kind: ref.kind,
        name: ref.name,
        all: false,
        keys: new Set(),
        requiredKeys: new Set(),
        optional: true,
      };
      found.set(id, entry);
    }
    const optional = ref.optional === true;
    entry.optional &&= optional;
    if (ref.keys === 'all') {
      entry.all = true;
      return;
    }
    for (const key of ref.keys) {
      if (typeof key !== 'string' || key === '') continue;
      entry.keys.add(key);
      if (!optional) entry.requiredKeys.add(key);
    }
  };

  const problems: string[] = [];
  for (const reference of findReferences(podSpec, workloadAnnotations, problems)) add(reference);

  const include = parseSourceList(workloadAnnotations[INCLUDE]);
  const exclude = parseSourceList(workloadAnnotations[EXCLUDE]);
  problems.push(...include.invalid.map((entry) => invalidEntry(INCLUDE, entry)));
  problems.push(...exclude.invalid.map((entry) => invalidEntry(EXCLUDE, entry)));
  for (const { kind, name } of include.refs) {
    add({ kind, name, keys: 'all', optional: false, at: [] });
  }
  for (const { kind, name } of exclude.refs) found.delete(`${kind}/${name}`);

  const sources = [...found.values()].map(toSourceRef);
  return { sources, problems };
}

/**
 * Every reference the pod spec makes that counts (docs/design.md §3; with live reload, only
 * volumes some container mounts with a subPath), in spec order, each with the path of its
 * name field: what findSources reads, and what snapshots rename (docs/design.md §13).
 * `problems` gets the live-reload annotation's, if it is not understood.
 */
export function findReferences(
  podSpec: unknown,
  workloadAnnotations: Readonly<Record<string, string>>,
  problems: string[] = [],
): FoundReference[] {
  const references: FoundReference[] = [];
  const add = (ref: Reference): void => {
    if (typeof ref.name === 'string' && ref.name !== '') {
      references.push(ref as FoundReference);
    }
  };
  const liveReload = parseLiveReload(workloadAnnotations[LIVE_RELOAD], problems);
  if (!isObject(podSpec)) return references;
  const containers = CONTAINER_FIELDS.flatMap((field) =>
    arrayAt(podSpec, field).map(({ item, index }) => ({ item, at: [field, index] })),
  );
  const counted = liveReload ? subPathVolumes(containers.map(({ item }) => item)) : undefined;
  for (const { item: volume, index } of arrayAt(podSpec, 'volumes')) {
    if (!counted || (typeof volume.name === 'string' && counted.has(volume.name))) {
      collectVolume(volume, ['volumes', index], add);
    }
  }
  for (const { item, at } of containers) collectContainer(item, at, add);
  return references;
}

/** A counted reference: its source, what of it the reference reads, and where its name is. */
export interface FoundReference {
  readonly kind: SourceKind;
  readonly name: string;
  readonly keys: readonly unknown[] | 'all';
  readonly optional: unknown;
  /** From the pod spec to the reference's name field; empty for an `include` entry. */
  readonly at: readonly (string | number)[];
}

const CONTAINER_FIELDS = ['initContainers', 'containers'] as const;

/** Absent or "false": every source counts. Anything else is a mistake, and ignored. */
function parseLiveReload(value: string | undefined, problems: string[]): boolean {
  if (value === 'true') return true;
  if (value !== undefined && value !== 'false') {
    problems.push(`${LIVE_RELOAD}: ignored '${value}' (expected "true" or "false")`);
  }
  return false;
}

/**
 * Live reload (docs/design.md §3): the volumes some container mounts with `subPath`
 * or `subPathExpr`. The kubelet never updates such a mount in a running pod, so
 * only these still need a restart; a plain mount the app reloads by itself.
 */
function subPathVolumes(containers: readonly JsonObject[]): Set<string> {
  const names = new Set<string>();
  for (const container of containers) {
    for (const { item: mount } of arrayAt(container, 'volumeMounts')) {
      const fixed = isNonEmptyString(mount.subPath) || isNonEmptyString(mount.subPathExpr);
      if (fixed && typeof mount.name === 'string') names.add(mount.name);
    }
  }
  return names;
}

function isNonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

function toSourceRef(entry: Accumulated): SourceRef {
  const selection: KeySelection = entry.all ? { all: true } : { all: false, keys: entry.keys };
  const { kind, name, optional, requiredKeys } = entry;
  return { kind, name, selection, optional, requiredKeys };
}

type Path = readonly (string | number)[];

function collectVolume(volume: JsonObject, at: Path, add: (ref: Reference) => void): void {
  const configMap = objectField(volume, 'configMap');
  if (configMap) add(itemsReference('ConfigMap', configMap, [...at, 'configMap', 'name']));
  const secret = objectField(volume, 'secret');
  if (secret) add(itemsReference('Secret', secret, [...at, 'secret', 'secretName']));
  const projected = objectField(volume, 'projected');
  for (const { item: projection, index } of projected ? arrayAt(projected, 'sources') : []) {
    const from: Path = [...at, 'projected', 'sources', index];
    const projectedConfigMap = objectField(projection, 'configMap');
    if (projectedConfigMap) {
      add(itemsReference('ConfigMap', projectedConfigMap, [...from, 'configMap', 'name']));
    }
    const projectedSecret = objectField(projection, 'secret');
    if (projectedSecret)
      add(itemsReference('Secret', projectedSecret, [...from, 'secret', 'name']));
  }
}

/** A volume source: whole object without `items`, else the keys it names; `at` is its name's path. */
function itemsReference(kind: SourceKind, source: JsonObject, at: Path): Reference {
  const items = Array.isArray(source.items) ? source.items : undefined;
  const keys = items ? items.map((item) => (isObject(item) ? item.key : undefined)) : 'all';
  return { kind, name: source[at.at(-1) as string], keys, optional: source.optional, at };
}

function collectContainer(container: JsonObject, at: Path, add: (ref: Reference) => void): void {
  for (const { item: envFrom, index } of arrayAt(container, 'envFrom')) {
    const from: Path = [...at, 'envFrom', index];
    const configMapRef = objectField(envFrom, 'configMapRef');
    if (configMapRef) {
      const { name, optional } = configMapRef;
      add({
        kind: 'ConfigMap',
        name,
        keys: 'all',
        optional,
        at: [...from, 'configMapRef', 'name'],
      });
    }
    const secretRef = objectField(envFrom, 'secretRef');
    if (secretRef) {
      const { name, optional } = secretRef;
      add({ kind: 'Secret', name, keys: 'all', optional, at: [...from, 'secretRef', 'name'] });
    }
  }
  for (const { item: env, index } of arrayAt(container, 'env')) {
    const valueFrom = objectField(env, 'valueFrom');
    if (!valueFrom) continue;
    const from: Path = [...at, 'env', index, 'valueFrom'];
    const configMapKey = objectField(valueFrom, 'configMapKeyRef');
    if (configMapKey) add(keyReference('ConfigMap', configMapKey, [...from, 'configMapKeyRef']));
    const secretKey = objectField(valueFrom, 'secretKeyRef');
    if (secretKey) add(keyReference('Secret', secretKey, [...from, 'secretKeyRef']));
  }
}

function keyReference(kind: SourceKind, ref: JsonObject, at: Path): Reference {
  return { kind, name: ref.name, keys: [ref.key], optional: ref.optional, at: [...at, 'name'] };
}

function invalidEntry(annotation: string, entry: string): string {
  return `${annotation}: ignored '${entry}' (expected configmap/NAME or secret/NAME)`;
}

/** The objects of an array field, each with its index in the array as written. */
function arrayAt(object: JsonObject, field: string): { item: JsonObject; index: number }[] {
  const value = object[field];
  if (!Array.isArray(value)) return [];
  return value.flatMap((item, index) => (isObject(item) ? [{ item, index }] : []));
}

function objectField(object: JsonObject, field: string): JsonObject | undefined {
  const value = object[field];
  return isObject(value) ? value : undefined;
}
