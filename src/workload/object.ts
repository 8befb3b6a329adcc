// Read-only access to the parts of a workload confighash cares about. Objects
// arrive as untrusted JSON, so every accessor tolerates missing or mistyped
// fields instead of throwing.

import type { WorkloadKind } from './kinds.js';

export type JsonObject = { readonly [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(root: unknown, path: readonly string[]): JsonObject | undefined {
  let current: unknown = root;
  for (const segment of path) {
    if (!isObject(current)) return undefined;
    current = current[segment];
  }
  return isObject(current) ? current : undefined;
}

/** String-valued annotations at `metadataPath`; anything else is ignored. */
export function annotationsAt(
  root: unknown,
  metadataPath: readonly string[],
): Readonly<Record<string, string>> {
  const annotations = objectAt(root, [...metadataPath, 'annotations']);
  const result: Record<string, string> = {};
  if (!annotations) return result;
  for (const [key, value] of Object.entries(annotations)) {
    if (typeof value === 'string') result[key] = value;
  }
  return result;
}

function podTemplateOf(object: unknown, kind: WorkloadKind): JsonObject | undefined {
  return objectAt(object, kind.templatePath);
}

export function workloadAnnotations(object: unknown): Readonly<Record<string, string>> {
  return annotationsAt(object, ['metadata']);
}

/** The parts of a workload that confighash reads, taken apart once per review or touch. */
export interface Workload {
  readonly kind: WorkloadKind;
  readonly object: JsonObject;
  /** undefined when the object has no pod template at the kind's path. */
  readonly template: JsonObject | undefined;
  /** The workload's own `metadata.annotations`. */
  readonly annotations: Readonly<Record<string, string>>;
}

export function readWorkload(object: JsonObject, kind: WorkloadKind): Workload {
  return {
    kind,
    object,
    template: podTemplateOf(object, kind),
    annotations: workloadAnnotations(object),
  };
}

/**
 * The time of the object's last write by a client (its newest `managedFields`
 * entry, status writes aside), as RFC 3339 text; undefined when it has none.
 */
export function lastWriteTime(object: unknown): string | undefined {
  const entries = objectAt(object, ['metadata'])?.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let latest: string | undefined;
  for (const entry of entries) {
    if (!isObject(entry) || entry.subresource === 'status' || typeof entry.time !== 'string')
      continue;
    if (latest === undefined || Date.parse(entry.time) > Date.parse(latest)) latest = entry.time;
  }
  return latest;
}
