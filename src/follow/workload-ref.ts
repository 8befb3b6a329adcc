// Which workload: kind, namespace and name, carried as a value. The string key
// exists only to index maps; it is never split back apart.

import { isObject, type WorkloadKind } from '../workload/index.js';

export interface WorkloadRef {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
}

/** A map key for `ref`. Names and namespaces cannot contain `/`. */
export function workloadKey(ref: WorkloadRef): string {
  return `${ref.kind.group}/${ref.kind.kind}/${ref.namespace}/${ref.name}`;
}

/** The reference to a listed object, when it has a name. */
export function refOf(
  object: unknown,
  kind: WorkloadKind,
  namespace: string,
): WorkloadRef | undefined {
  const metadata = isObject(object) ? object.metadata : undefined;
  const name = isObject(metadata) ? metadata.name : undefined;
  return typeof name === 'string' && name !== '' ? { kind, namespace, name } : undefined;
}

/** Log fields naming a workload. */
export function refFields(ref: WorkloadRef): { kind: string; namespace: string; name: string } {
  return { kind: ref.kind.kind, namespace: ref.namespace, name: ref.name };
}
