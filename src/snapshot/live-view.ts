// A snapshot workload's template as the webhook reads it, and as it writes it back (docs/design.md
// §13). The *live view* names every source by its own name again, so that discovery, the hash and
// follow mode's index see the sources, never their copies; the renames then point each counted
// ConfigMap reference at the snapshot chosen for its source. Pure.

import { escapePointerSegment, type JsonPatchOperation } from '../patch/index.js';
import {
  annotationsAt,
  findReferences,
  findSources,
  isObject,
  type JsonObject,
  SNAPSHOTS,
} from '../workload/index.js';
import { readListed } from './listed.js';

export interface LiveView {
  /** The template with its snapshot references named by their sources; the same object when it has none. */
  readonly template: JsonObject | undefined;
  /** Source → snapshot, as the template's annotation lists them. */
  readonly listed: ReadonlyMap<string, string>;
  /** Source → snapshot, for the listed snapshots some reference names; empty: it names none. */
  readonly named: ReadonlyMap<string, string>;
}

export function liveView(
  template: JsonObject | undefined,
  workloadAnnotations: Readonly<Record<string, string>>,
): LiveView {
  const listed = readListed(annotationsAt(template, ['metadata'])[SNAPSHOTS]);
  if (!template || listed.size === 0) return { template, listed, named: new Map() };
  const sourceOf = new Map([...listed].map(([source, snapshot]) => [snapshot, source]));
  const renamed = configMapReferences(template, workloadAnnotations).filter(({ name }) =>
    sourceOf.has(name),
  );
  if (renamed.length === 0) return { template, listed, named: new Map() };
  const view = structuredClone(template) as Record<string, unknown>;
  const named = new Map<string, string>();
  for (const { name, at } of renamed) {
    const source = sourceOf.get(name)!;
    setAt(view.spec, at, source);
    named.set(source, name);
  }
  return { template: view, listed, named };
}

/**
 * The sources a template reads, named by their own names even where it names their snapshots:
 * what the webhook hashes, follow mode indexes, and plan and explain describe.
 */
export function findLiveSources(
  template: JsonObject | undefined,
  workloadAnnotations: Readonly<Record<string, string>>,
): ReturnType<typeof findSources> {
  return findSources(liveView(template, workloadAnnotations).template?.spec, workloadAnnotations);
}

/**
 * The patch that makes each counted ConfigMap reference of `view` name `chosen.get(source)`,
 * or its source where nothing is chosen, measured against the request's `template` (at
 * `templatePath`): only the names that differ are replaced.
 */
export function renameReferences(
  templatePath: readonly string[],
  template: JsonObject | undefined,
  view: JsonObject | undefined,
  workloadAnnotations: Readonly<Record<string, string>>,
  chosen: ReadonlyMap<string, string>,
): JsonPatchOperation[] {
  if (!template || !view) return [];
  const spec = template.spec;
  return configMapReferences(view, workloadAnnotations).flatMap(({ name, at }) => {
    const wanted = chosen.get(name) ?? name;
    if (valueAt(spec, at) === wanted) return [];
    const path = [...templatePath, 'spec', ...at].map((segment) =>
      escapePointerSegment(String(segment)),
    );
    return [{ op: 'replace' as const, path: `/${path.join('/')}`, value: wanted }];
  });
}

function configMapReferences(
  template: JsonObject,
  workloadAnnotations: Readonly<Record<string, string>>,
) {
  return findReferences(template.spec, workloadAnnotations).filter(
    (reference) => reference.kind === 'ConfigMap',
  );
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let current = root;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else if (isObject(current) && typeof segment === 'string') current = current[segment];
    else return undefined;
  }
  return current;
}

function setAt(root: unknown, path: readonly (string | number)[], value: string): void {
  const parent = valueAt(root, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path.at(-1)!] = value;
}
