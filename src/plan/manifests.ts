// The manifests a plan previews (docs/design.md §9): multi-document YAML or JSON as
// `helm template`, `kustomize build` and hand-written files give it, `List`
// objects flattened, taken apart into workloads of the handled kinds, the
// ConfigMaps and Secrets they would leave behind, and the Namespaces' labels.

import { contentOfConfigMap, contentOfSecret, type SourceContent } from '../hash/index.js';
import { formatSource, type NamedSource, type SourceKind } from '../sources/index.js';
import {
  EVERY_KNOWN_KIND,
  findWorkloadKind,
  isObject,
  type JsonObject,
  readWorkload,
  type Workload,
  type WorkloadKind,
} from '../workload/index.js';
import { parseYamlDocuments } from './yaml.js';

interface ManifestWorkload {
  readonly workload: Workload;
  readonly namespace: string;
  readonly name: string;
}

export interface Manifests {
  readonly workloads: readonly ManifestWorkload[];
  /** The content each ConfigMap/Secret of the manifests will have, by `sourceKey`. */
  readonly sources: ReadonlyMap<string, SourceContent>;
  /** The same ConfigMaps and Secrets, in manifest order. */
  readonly configs: readonly { readonly namespace: string; readonly source: NamedSource }[];
  /** Labels of the Namespace objects in the manifests (they are applied first). */
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

type ManifestParse = { ok: true; manifests: Manifests } | { ok: false; error: string };

/** A map key for one source in one namespace. */
export function sourceKey(namespace: string, source: NamedSource): string {
  return `${namespace}/${formatSource(source)}`;
}

/** `kinds`: the workload kinds to take apart (default: every kind confighash knows). */
export function parseManifests(
  text: string,
  defaultNamespace: string,
  kinds: readonly WorkloadKind[] = EVERY_KNOWN_KIND,
): ManifestParse {
  let documents: unknown[];
  try {
    documents = parseYamlDocuments(text);
  } catch (error) {
    return { ok: false, error: `the manifests are not YAML: ${firstLine(error)}` };
  }
  const workloads: ManifestWorkload[] = [];
  const sources = new Map<string, SourceContent>();
  const configs: { namespace: string; source: NamedSource }[] = [];
  const namespaceLabels = new Map<string, Readonly<Record<string, string>>>();
  for (const object of flatten(documents)) {
    const metadata = isObject(object.metadata) ? object.metadata : {};
    const name = typeof metadata.name === 'string' ? metadata.name : undefined;
    if (!name) continue;
    const namespace =
      typeof metadata.namespace === 'string' && metadata.namespace !== ''
        ? metadata.namespace
        : defaultNamespace;
    const [group, version] = splitApiVersion(object.apiVersion);
    const kind = typeof object.kind === 'string' ? object.kind : '';
    if (group === '' && version === 'v1' && kind === 'Namespace') {
      namespaceLabels.set(name, stringMap(metadata.labels));
      continue;
    }
    const source = sourceKindOf(group, version, kind);
    if (source) {
      const key = sourceKey(namespace, { kind: source, name });
      if (!sources.has(key)) configs.push({ namespace, source: { kind: source, name } });
      sources.set(key, contentOf(source, object));
      continue;
    }
    const workloadKind = findWorkloadKind({ group, version, kind }, kinds);
    if (workloadKind) {
      workloads.push({ workload: readWorkload(object, workloadKind), namespace, name });
    }
  }
  return { ok: true, manifests: { workloads, sources, configs, namespaceLabels } };
}

/** Documents and the items of `List` objects (kubectl's `kind: List`, `…List`), nested or not. */
function flatten(documents: readonly unknown[]): JsonObject[] {
  const objects: JsonObject[] = [];
  const pending = [...documents].reverse();
  while (pending.length > 0) {
    const next = pending.pop();
    if (!isObject(next)) continue;
    const kind = typeof next.kind === 'string' ? next.kind : '';
    if (kind.endsWith('List') && Array.isArray(next.items)) {
      pending.push(...[...next.items].reverse());
      continue;
    }
    objects.push(next);
  }
  return objects;
}

function sourceKindOf(group: string, version: string, kind: string): SourceKind | undefined {
  if (group !== '' || version !== 'v1') return undefined;
  return kind === 'ConfigMap' || kind === 'Secret' ? kind : undefined;
}

/** What the apiserver would store: a Secret's `stringData` is merged over its `data`. */
function contentOf(kind: SourceKind, object: JsonObject): SourceContent {
  const data = stringMap(object.data);
  if (kind === 'ConfigMap') {
    return contentOfConfigMap({ data, binaryData: stringMap(object.binaryData) });
  }
  const merged: Record<string, string> = { ...data };
  for (const [key, value] of Object.entries(stringMap(object.stringData))) {
    merged[key] = Buffer.from(value, 'utf8').toString('base64');
  }
  return contentOfSecret({ data: merged });
}

function splitApiVersion(apiVersion: unknown): [string, string] {
  if (typeof apiVersion !== 'string') return ['', ''];
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

function stringMap(value: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (!isObject(value)) return result;
  for (const [key, entry] of Object.entries(value)) {
    // YAML turns `port: 8080` into a number; the apiserver would reject it, the plan reads it as text.
    if (typeof entry === 'string' || typeof entry === 'number' || typeof entry === 'boolean') {
      result[key] = String(entry);
    }
  }
  return result;
}

function firstLine(error: unknown): string {
  return String((error as Error).message ?? error).split('\n', 1)[0]!;
}
