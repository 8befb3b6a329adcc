// What the bench reads and writes: a Deployment whose pod template references
// `count` sources in the three ways docs/design.md §3 names, the ConfigMaps and
// Secrets it references (each with `bytes` of selected data), and the
// AdmissionReview the apiserver would send for it. With count 3 this is the
// issue's workload: a ConfigMap volume, a Secret envFrom and one key ref.

export type SourceKind = 'ConfigMap' | 'Secret';

export interface BenchSource {
  readonly kind: SourceKind;
  readonly name: string;
  /** How the pod template references it. */
  readonly via: 'volume' | 'envFrom' | 'keyRef';
}

export interface ApiObject {
  readonly apiVersion: 'v1';
  readonly kind: SourceKind;
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly data: Record<string, string>;
}

export const WORKLOAD_NAME = 'web';
export const SELECTED_KEY = 'mode';

export function benchSources(count: number): BenchSource[] {
  return Array.from({ length: count }, (_, i): BenchSource => {
    switch (i % 3) {
      case 0:
        return { kind: 'ConfigMap', name: `config-${i}`, via: 'volume' };
      case 1:
        return { kind: 'Secret', name: `secret-${i}`, via: 'envFrom' };
      default:
        return { kind: 'ConfigMap', name: `flags-${i}`, via: 'keyRef' };
    }
  });
}

/** The API path a live lookup of `source` reads. */
export function sourcePath(namespace: string, source: Pick<BenchSource, 'kind' | 'name'>): string {
  const resource = source.kind === 'ConfigMap' ? 'configmaps' : 'secrets';
  return `/api/v1/namespaces/${namespace}/${resource}/${source.name}`;
}

/** The object behind `source`, with exactly `bytes` of selected (decoded) data. */
export function sourceObject(namespace: string, source: BenchSource, bytes: number): ApiObject {
  const metadata = { name: source.name, namespace };
  switch (source.via) {
    case 'volume':
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { 'app.yaml': text(bytes) } };
    case 'envFrom':
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata,
        data: { password: binary(bytes).toString('base64') },
      };
    case 'keyRef':
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata,
        data: { [SELECTED_KEY]: text(bytes), unrelated: 'not selected' },
      };
  }
}

/** A ConfigMap or Secret no workload references (scenario 5's namespace filler). */
export function unrelatedObject(namespace: string, index: number): ApiObject {
  const metadata = { name: `unrelated-${index}`, namespace };
  return index % 2 === 0
    ? { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { 'value.txt': text(64) } }
    : {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata,
        data: { token: binary(32).toString('base64') },
      };
}

export function podSpec(sources: readonly BenchSource[]): Record<string, unknown> {
  const volumes = sources
    .filter((s) => s.via === 'volume')
    .map((s) => ({ name: s.name, configMap: { name: s.name } }));
  const envFrom = sources
    .filter((s) => s.via === 'envFrom')
    .map((s) => ({ secretRef: { name: s.name } }));
  const env = sources
    .filter((s) => s.via === 'keyRef')
    .map((s, i) => ({
      name: `MODE_${i}`,
      valueFrom: { configMapKeyRef: { name: s.name, key: SELECTED_KEY } },
    }));
  return {
    ...(volumes.length > 0 ? { volumes } : {}),
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1',
        ...(envFrom.length > 0 ? { envFrom } : {}),
        ...(env.length > 0 ? { env } : {}),
        volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: `/etc/${v.name}` })),
      },
    ],
  };
}

export function deployment(
  namespace: string,
  sources: readonly BenchSource[],
  annotations: Record<string, string> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: WORKLOAD_NAME, namespace, annotations },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: WORKLOAD_NAME } },
      template: {
        metadata: { labels: { app: WORKLOAD_NAME } },
        spec: podSpec(sources),
      },
    },
  };
}

/** The body the apiserver POSTs for a CREATE of the bench Deployment. */
export function admissionReviewBody(
  namespace: string,
  sources: readonly BenchSource[],
  annotations: Record<string, string> = {},
): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '6f1c3f5e-0b7a-4a43-9d2b-bench0000001',
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
      name: WORKLOAD_NAME,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'bench', groups: ['system:authenticated'] },
      object: deployment(namespace, sources, annotations),
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions', fieldManager: 'bench' },
    },
  });
}

function text(bytes: number): string {
  const line = 'feature.flag.enabled: true # bench filler line\n';
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

function binary(bytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) buffer[i] = (i * 131 + 7) & 0xff;
  return buffer;
}
