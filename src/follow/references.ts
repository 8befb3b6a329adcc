// Which workloads of a namespace reference which sources (docs/design.md §6
// "Triggers"): listed live, with the same discovery code as admission; no
// cache of workloads or of config content.

import { formatSource } from '../sources.js';
import {
  findSources,
  HANDLED_KINDS,
  isObject,
  readWorkload,
  type WorkloadKind,
} from '../workload/index.js';
import type { FollowApi } from './ports.js';
import { refOf, type WorkloadRef } from './workload-ref.js';

/** A workload and the sources it reads, as `configmap/NAME` / `secret/NAME`. */
export interface Referencing {
  readonly ref: WorkloadRef;
  readonly sources: readonly string[];
}

/** Every workload of the handled kinds in `namespace` that reads at least one source. */
export async function listReferencing(
  api: Pick<FollowApi, 'listWorkloads'>,
  namespace: string,
  kinds: readonly WorkloadKind[] = HANDLED_KINDS,
  signal: AbortSignal,
): Promise<Referencing[]> {
  const found: Referencing[] = [];
  for (const kind of kinds) {
    for (const object of await api.listWorkloads(namespace, kind, signal)) {
      const ref = refOf(object, kind, namespace);
      if (!ref || !isObject(object)) continue;
      const sources = sourcesOf(readWorkload(object, kind));
      if (sources.length > 0) found.push({ ref, sources });
    }
  }
  return found;
}

function sourcesOf(workload: ReturnType<typeof readWorkload>): string[] {
  return findSources(workload.template?.spec, workload.annotations).sources.map(formatSource);
}
