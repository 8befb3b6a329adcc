// Which admission requests are ours (docs/design.md §4): a CREATE or UPDATE of a handled
// kind, not a subresource, not opted out, with a pod template of its own. The answer is
// the workload to hash, or why it is left alone.

import {
  ENABLED,
  findWorkloadKind,
  isObject,
  isOptedOut,
  objectAt,
  readWorkload,
  type Workload,
  type WorkloadKind,
  warning,
} from '../workload/index.js';
import type { AdmissionRequest } from './review-types.js';

export interface Target {
  readonly workload: Workload;
  readonly namespace: string;
  readonly isUpdate: boolean;
  /** oldObject's parts, for an UPDATE that carries one. */
  readonly old: Workload | undefined;
}

type Skip = { readonly skipReason: string; readonly warning?: string };

export function selectTarget(
  request: AdmissionRequest,
  kinds?: readonly WorkloadKind[],
): Target | Skip {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') {
    return { skipReason: `operation ${request.operation}` };
  }
  if (request.subResource) return { skipReason: `subresource ${request.subResource}` };
  const kind = findWorkloadKind(request.kind, kinds);
  if (!kind) {
    const { group, version, kind: name } = request.kind;
    return { skipReason: `kind ${group || 'core'}/${version} ${name} is not handled` };
  }
  const object = request.object;
  if (!isObject(object)) return { skipReason: 'request has no object' };
  const workload = readWorkload(object, kind);
  // The decision table's first row (workload/handled.ts): asked before the namespace is read.
  if (isOptedOut(workload.annotations)) {
    return { skipReason: `opted out by ${ENABLED}: "false"` };
  }
  const elsewhere = templateElsewhere(workload);
  if (elsewhere) return elsewhere;
  if (!workload.template) return { skipReason: 'object has no pod template' };
  const namespace = request.namespace ?? objectNamespace(object);
  if (!namespace) return { skipReason: 'request has no namespace' };
  const isUpdate = request.operation === 'UPDATE';
  const old =
    isUpdate && isObject(request.oldObject) ? readWorkload(request.oldObject, kind) : undefined;
  return { workload, namespace, isUpdate, old };
}

/** A Rollout with `workloadRef` takes its pods from a Deployment: hashing that is the Deployment's write. */
function templateElsewhere(workload: Workload): Skip | undefined {
  const field = workload.kind.templateElsewhere;
  if (!field || objectAt(workload.object, field) === undefined) return undefined;
  const path = field.slice(1).join('.');
  return {
    skipReason: `${path}: the pod template is in another object`,
    warning: warning(
      `${workload.kind.kind} with ${path} left alone; its pod template is not in it`,
    ),
  };
}

function objectNamespace(object: unknown): string | undefined {
  const metadata = isObject(object) ? object.metadata : undefined;
  return isObject(metadata) && typeof metadata.namespace === 'string'
    ? metadata.namespace
    : undefined;
}
