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
}

export function findSources(
  podSpec: unknown,
  workloadAnnotations: Readonly<Record<string, string>> = {},
): SourceDiscovery {
  const found = new Map<string, Accumulated>();
  const add = (ref: Reference): void => {
    if (typeof ref.name !== 'string' || ref.name === '') return;
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
  const liveReload = parseLiveReload(workloadAnnotations[LIVE_RELOAD], problems);
  if (isObject(podSpec)) {
    const containers = CONTAINER_FIELDS.flatMap((field) => arrayAt(podSpec, field));
    const counted = liveReload ? subPathVolumes(containers) : undefined;
    for (const volume of arrayAt(podSpec, 'volumes')) {
      if (!counted || (typeof volume.name === 'string' && counted.has(volume.name))) {
        collectVolume(volume, add);
      }
    }
    for (const container of containers) collectContainer(container, add);
  }

  const include = parseSourceList(workloadAnnotations[INCLUDE]);
  const exclude = parseSourceList(workloadAnnotations[EXCLUDE]);
  problems.push(...include.invalid.map((entry) => invalidEntry(INCLUDE, entry)));
  problems.push(...exclude.invalid.map((entry) => invalidEntry(EXCLUDE, entry)));
  for (const { kind, name } of include.refs) add({ kind, name, keys: 'all', optional: false });
  for (const { kind, name } of exclude.refs) found.delete(`${kind}/${name}`);

  const sources = [...found.values()].map(toSourceRef);
  return { sources, problems };
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
    for (const mount of arrayAt(container, 'volumeMounts')) {
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

function collectVolume(volume: JsonObject, add: (ref: Reference) => void): void {
  const configMap = objectField(volume, 'configMap');
  if (configMap) add(itemsReference('ConfigMap', configMap.name, configMap));
  const secret = objectField(volume, 'secret');
  if (secret) add(itemsReference('Secret', secret.secretName, secret));
  const projected = objectField(volume, 'projected');
  for (const projection of projected ? arrayAt(projected, 'sources') : []) {
    const projectedConfigMap = objectField(projection, 'configMap');
    if (projectedConfigMap) {
      add(itemsReference('ConfigMap', projectedConfigMap.name, projectedConfigMap));
    }
    const projectedSecret = objectField(projection, 'secret');
    if (projectedSecret) add(itemsReference('Secret', projectedSecret.name, projectedSecret));
  }
}

/** A volume source: whole object without `items`, else the keys it names. */
function itemsReference(kind: SourceKind, name: unknown, source: JsonObject): Reference {
  const items = Array.isArray(source.items) ? source.items : undefined;
  const keys = items ? items.map((item) => (isObject(item) ? item.key : undefined)) : 'all';
  return { kind, name, keys, optional: source.optional };
}

function collectContainer(container: JsonObject, add: (ref: Reference) => void): void {
  for (const envFrom of arrayAt(container, 'envFrom')) {
    const configMapRef = objectField(envFrom, 'configMapRef');
    if (configMapRef) {
      add({
        kind: 'ConfigMap',
        name: configMapRef.name,
        keys: 'all',
        optional: configMapRef.optional,
      });
    }
    const secretRef = objectField(envFrom, 'secretRef');
    if (secretRef) {
      add({ kind: 'Secret', name: secretRef.name, keys: 'all', optional: secretRef.optional });
    }
  }
  for (const env of arrayAt(container, 'env')) {
    const valueFrom = objectField(env, 'valueFrom');
    if (!valueFrom) continue;
    const configMapKey = objectField(valueFrom, 'configMapKeyRef');
    if (configMapKey) add(keyReference('ConfigMap', configMapKey));
    const secretKey = objectField(valueFrom, 'secretKeyRef');
    if (secretKey) add(keyReference('Secret', secretKey));
  }
}

function keyReference(kind: SourceKind, ref: JsonObject): Reference {
  return { kind, name: ref.name, keys: [ref.key], optional: ref.optional };
}

function invalidEntry(annotation: string, entry: string): string {
  return `${annotation}: ignored '${entry}' (expected configmap/NAME or secret/NAME)`;
}

function arrayAt(object: JsonObject, field: string): JsonObject[] {
  const value = object[field];
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function objectField(object: JsonObject, field: string): JsonObject | undefined {
  const value = object[field];
  return isObject(value) ? value : undefined;
}
