// The objects of the `scale` scenario: follow namespaces of 10
// Deployments (replicas 0: the controllers make ReplicaSets, no pods) and 50
// ConfigMaps and Secrets, of which each Deployment reads three and no two
// Deployments read the same one; and one fan-out namespace whose Deployments
// all read one ConfigMap. Every Deployment carries Reloader's auto annotation.

import { NAMESPACE_LABEL, NAMESPACE_MODE } from '../../src/workload/index.js';
import { type BenchSource, podSpec, sourceObject } from './workload.js';

export const WORKLOADS_PER_NAMESPACE = 10;
export const CONFIGMAPS_PER_NAMESPACE = 25;
export const SECRETS_PER_NAMESPACE = 25;
export const SOURCE_BYTES = 1024;
export const FANOUT_NAMESPACE = 'scale-fanout';
export const FANOUT_SOURCE = 'shared';
export const RELOADER_AUTO = 'reloader.stakater.com/auto';

/** What a POST needs to know of an object: where its collection is. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly [field: string]: unknown;
  };
  readonly [field: string]: unknown;
}

/** Any object the scenario POSTs: its kind and namespace name its collection. */
export interface Postable {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

export const namespaceName = (index: number) => `scale-${String(index).padStart(4, '0')}`;

export function namespaceObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { [NAMESPACE_LABEL]: NAMESPACE_MODE.follow } },
  };
}

/** The three sources Deployment `d-j` reads: a ConfigMap volume, a Secret envFrom, a ConfigMap key. */
export function sourcesOf(workload: number): BenchSource[] {
  return [
    { kind: 'ConfigMap', name: `cm-${workload}`, via: 'volume' },
    { kind: 'Secret', name: `s-${workload}`, via: 'envFrom' },
    { kind: 'ConfigMap', name: `cm-${workload + WORKLOADS_PER_NAMESPACE}`, via: 'keyRef' },
  ];
}

/** Every ConfigMap and Secret of a follow namespace: the workloads' sources first, then the unread ones. */
export function namespaceSources(): BenchSource[] {
  const read = Array.from({ length: WORKLOADS_PER_NAMESPACE }, (_, j) => sourcesOf(j)).flat();
  const names = new Set(read.map((s) => s.name));
  const unread: BenchSource[] = [
    ...Array.from(
      { length: CONFIGMAPS_PER_NAMESPACE },
      (_, i): BenchSource => ({
        kind: 'ConfigMap',
        name: `cm-${i}`,
        via: 'volume',
      }),
    ),
    ...Array.from(
      { length: SECRETS_PER_NAMESPACE },
      (_, i): BenchSource => ({
        kind: 'Secret',
        name: `s-${i}`,
        via: 'envFrom',
      }),
    ),
  ].filter((s) => !names.has(s.name));
  return [...read, ...unread];
}

export const sourcesPerNamespace = () => namespaceSources().length;

export function scaleDeployment(
  namespace: string,
  name: string,
  sources: readonly BenchSource[],
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, annotations: { [RELOADER_AUTO]: 'true' } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: podSpec(sources) },
    },
  };
}

export const workloadName = (j: number) => `d-${j}`;

export function namespaceDeployments(namespace: string): KubeObject[] {
  return Array.from({ length: WORKLOADS_PER_NAMESPACE }, (_, j) =>
    scaleDeployment(namespace, workloadName(j), sourcesOf(j)),
  );
}

export const FANOUT_SOURCES: readonly BenchSource[] = [
  { kind: 'ConfigMap', name: FANOUT_SOURCE, via: 'volume' },
];

export function fanoutDeployments(count: number): KubeObject[] {
  return Array.from({ length: count }, (_, k) =>
    scaleDeployment(FANOUT_NAMESPACE, `f-${k}`, FANOUT_SOURCES),
  );
}

export const sourceOf = (namespace: string, source: BenchSource) =>
  sourceObject(namespace, source, SOURCE_BYTES);

/** The same object with other content, for a change (`round` makes each change differ). */
export function changedSource(namespace: string, source: BenchSource, round: number) {
  const object = sourceOf(namespace, source);
  const data = Object.fromEntries(
    Object.entries(object.data).map(([key, value]) => [
      key,
      source.kind === 'Secret'
        ? Buffer.concat([Buffer.from(`change ${round}\n`), Buffer.from(value, 'base64')]).toString(
            'base64',
          )
        : `# change ${round}\n${value}`,
    ]),
  );
  return { ...object, data };
}

/** The collection path of an object's kind in its namespace. */
export function collectionPath(object: Postable): string {
  const namespace = object.metadata.namespace;
  switch (object.kind) {
    case 'Namespace':
      return '/api/v1/namespaces';
    case 'ConfigMap':
      return `/api/v1/namespaces/${namespace}/configmaps`;
    case 'Secret':
      return `/api/v1/namespaces/${namespace}/secrets`;
    case 'Deployment':
      return `/apis/apps/v1/namespaces/${namespace}/deployments`;
    default:
      throw new Error(`no collection path for kind ${object.kind}`);
  }
}
