// Builders for workloads and AdmissionReviews, so tests say only what matters.

import type { AdmissionRequest } from '../../src/admission/index.js';

export const NAMESPACE = 'shop';

export interface WorkloadOptions {
  kind?: 'Deployment' | 'StatefulSet' | 'DaemonSet';
  name?: string;
  podSpec?: Record<string, unknown>;
  annotations?: Record<string, string>;
  templateAnnotations?: Record<string, string>;
  image?: string;
}

/** A Deployment reading ConfigMap `app-config` (volume), Secret `db` (envFrom) and key `mode` of ConfigMap `flags`. */
export const THREE_SOURCES = {
  volumes: [{ name: 'config', configMap: { name: 'app-config' } }],
  containers: [
    {
      name: 'app',
      image: 'registry.example/app:1',
      envFrom: [{ secretRef: { name: 'db' } }],
      env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'flags', key: 'mode' } } }],
    },
  ],
};

/** How a pod spec names one key (docs/design.md §3 "Required keys"). */
export interface KeyReference {
  readonly by: 'volume items' | 'env key ref';
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
  readonly key: string;
  readonly optional?: boolean;
}

/** A pod spec that reads each key as given: a volume with `items`, or an env var. */
export function readingKeys(...refs: readonly KeyReference[]): Record<string, unknown> {
  const volumes = refs
    .filter(({ by }) => by === 'volume items')
    .map(({ kind, name, key, optional }, index) => {
      const items = [{ key, path: key }];
      const optionalField = optional === undefined ? {} : { optional };
      return kind === 'ConfigMap'
        ? { name: `v${index}`, configMap: { name, items, ...optionalField } }
        : { name: `v${index}`, secret: { secretName: name, items, ...optionalField } };
    });
  const env = refs
    .filter(({ by }) => by === 'env key ref')
    .map(({ kind, name, key, optional }, index) => {
      const ref = { name, key, ...(optional === undefined ? {} : { optional }) };
      const valueFrom = kind === 'ConfigMap' ? { configMapKeyRef: ref } : { secretKeyRef: ref };
      return { name: `E${index}`, valueFrom };
    });
  return {
    ...(volumes.length > 0 ? { volumes } : {}),
    containers: [{ name: 'app', image: 'registry.example/app:1', env }],
  };
}

export function workload(options: WorkloadOptions = {}): Record<string, unknown> {
  const podSpec = structuredClone(options.podSpec ?? THREE_SOURCES) as {
    containers?: { image?: string }[];
  };
  if (options.image && podSpec.containers?.[0]) podSpec.containers[0].image = options.image;
  return {
    apiVersion: 'apps/v1',
    kind: options.kind ?? 'Deployment',
    metadata: {
      name: options.name ?? 'web',
      namespace: NAMESPACE,
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: {
          labels: { app: 'web' },
          ...(options.templateAnnotations ? { annotations: options.templateAnnotations } : {}),
        },
        spec: podSpec,
      },
    },
  };
}

export interface RequestOptions {
  uid?: string;
  operation?: AdmissionRequest['operation'];
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  subResource?: string;
  kind?: { group: string; version: string; kind: string };
}

export function admissionRequest(options: RequestOptions = {}): AdmissionRequest {
  const object = (options.object ?? workload()) as { kind?: string; metadata?: { name?: string } };
  return {
    uid: options.uid ?? 'uid-1',
    kind: options.kind ?? { group: 'apps', version: 'v1', kind: object.kind ?? 'Deployment' },
    name: object.metadata?.name,
    namespace: NAMESPACE,
    operation: options.operation ?? 'CREATE',
    dryRun: options.dryRun ?? false,
    ...(options.subResource ? { subResource: options.subResource } : {}),
    object: options.object ?? object,
    ...(options.oldObject ? { oldObject: options.oldObject } : {}),
  };
}

/** The JSON body the apiserver sends. */
export function admissionReview(options: RequestOptions = {}): Record<string, unknown> {
  const request = admissionRequest(options);
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: request.uid,
      kind: request.kind,
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      ...(request.subResource ? { subResource: request.subResource } : {}),
      name: request.name,
      namespace: request.namespace,
      operation: request.operation,
      userInfo: { username: 'tester' },
      object: request.object,
      oldObject: request.oldObject ?? null,
      dryRun: request.dryRun,
    },
  };
}
