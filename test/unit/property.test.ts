// Properties of discovery + hashing over random pod specs: the hash depends on
// which config a pod reads, never on how the spec happens to be laid out.

import fc, { type GeneratorValue } from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeHash,
  contentOfConfigMap,
  contentOfSecret,
  deriveNamespaceKey,
  type SourceContent,
} from '../../src/hash/index.js';
import { formatSourceList } from '../../src/sources/index.js';
import { EXCLUDE, findSources, HASH, INCLUDE, SOURCES } from '../../src/workload/index.js';

const RUNS = { numRuns: 200 };
const KEY = deriveNamespaceKey(Buffer.alloc(32, 0x5a), 'shop');
const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** ConfigMaps a-c and Secrets a-b exist; the rest are absent. */
const STORE = new Map<string, SourceContent>([
  ['ConfigMap/a', contentOfConfigMap({ data: { k1: 'a1', k2: 'a2', k3: 'a3' } })],
  ['ConfigMap/b', contentOfConfigMap({ data: { k1: 'b1' }, binaryData: { k2: b64('b2') } })],
  ['ConfigMap/c', contentOfConfigMap({ data: { k3: '' } })],
  ['Secret/a', contentOfSecret({ data: { k1: b64('s1'), k2: b64('s2') } })],
  ['Secret/b', contentOfSecret({ data: { k3: b64('s3') } })],
]);

type Spec = Record<string, unknown>;
type Annotations = Record<string, string>;

function hashOf(spec: unknown, annotations: Annotations = {}): string {
  const { sources } = findSources(spec, annotations);
  return computeHash(
    KEY,
    sources.map((source) => ({ ...source, content: STORE.get(`${source.kind}/${source.name}`) })),
  );
}

function sourceListOf(spec: unknown, annotations: Annotations = {}): string {
  return formatSourceList(findSources(spec, annotations).sources);
}

// --- arbitraries: every reference form of docs/design.md §3 -------------------------

const name = fc.constantFrom('a', 'b', 'c', 'd');
const key = fc.constantFrom('k1', 'k2', 'k3', 'k9');
const optional = fc.option(fc.boolean(), { nil: undefined });
const items = fc.option(
  fc.array(fc.record({ key, path: fc.constantFrom('x', 'y/z') }), { maxLength: 3 }),
  {
    nil: undefined,
  },
);

const configMapSource = fc.record({ name, items, optional }, { requiredKeys: ['name'] });
const secretVolumeSource = fc.record(
  { secretName: name, items, optional },
  { requiredKeys: ['secretName'] },
);
const projectedSecret = fc.record({ name, items, optional }, { requiredKeys: ['name'] });

const volume = fc.oneof(
  fc.record({ name: fc.constant('cm'), configMap: configMapSource }),
  fc.record({ name: fc.constant('secret'), secret: secretVolumeSource }),
  fc.record({
    name: fc.constant('projected'),
    projected: fc.record({
      sources: fc.array(
        fc.oneof(
          fc.record({ configMap: configMapSource }),
          fc.record({ secret: projectedSecret }),
          fc.constant({ serviceAccountToken: { path: 'token' } }),
        ),
        { maxLength: 4 },
      ),
    }),
  }),
);

const envFrom = fc.oneof(
  fc.record({ configMapRef: fc.record({ name, optional }, { requiredKeys: ['name'] }) }),
  fc.record({
    prefix: fc.constant('P_'),
    secretRef: fc.record({ name, optional }, { requiredKeys: ['name'] }),
  }),
);

const keyRef = fc.record({ name, key, optional }, { requiredKeys: ['name', 'key'] });
const env = fc.oneof(
  fc.record({ name: fc.constant('CM'), valueFrom: fc.record({ configMapKeyRef: keyRef }) }),
  fc.record({ name: fc.constant('SECRET'), valueFrom: fc.record({ secretKeyRef: keyRef }) }),
);

const container = fc.record({
  name: fc.constantFrom('app', 'sidecar', 'init'),
  envFrom: fc.array(envFrom, { maxLength: 3 }),
  env: fc.array(env, { maxLength: 4 }),
});

const podSpec: fc.Arbitrary<Spec> = fc.record({
  volumes: fc.array(volume, { maxLength: 5 }),
  initContainers: fc.array(container, { maxLength: 2 }),
  containers: fc.array(container, { minLength: 1, maxLength: 3 }),
});

const sourceList = fc
  .array(fc.tuple(fc.constantFrom('configmap', 'secret', 'ConfigMap'), name), { maxLength: 3 })
  .map((entries) => entries.map(([kind, entryName]) => `${kind}/${entryName}`));

const sourceAnnotations: fc.Arbitrary<Annotations> = fc
  .record({ include: sourceList, exclude: sourceList })
  .map(({ include, exclude }) => ({
    ...(include.length > 0 ? { [INCLUDE]: include.join(',') } : {}),
    ...(exclude.length > 0 ? { [EXCLUDE]: exclude.join(',') } : {}),
  }));

// --- rearranging and decorating a spec ------------------------------------------

function shuffle<T>(g: GeneratorValue, list: readonly T[]): T[] {
  const result = [...list];
  for (let index = result.length - 1; index > 0; index--) {
    const other = g(fc.nat, { max: index });
    [result[index], result[other]] = [result[other]!, result[index]!];
  }
  return result;
}

function asList(value: unknown): Spec[] {
  return Array.isArray(value) ? (value as Spec[]) : [];
}

/** The same references in another order: volumes, containers, env, projections, items. */
function rearrange(g: GeneratorValue, spec: Spec): Spec {
  const withItems = (source: unknown): unknown => {
    const object = source as Spec;
    return Array.isArray(object.items) ? { ...object, items: shuffle(g, object.items) } : object;
  };
  const rearrangeVolume = (volume: Spec): Spec => {
    if (volume.configMap) return { ...volume, configMap: withItems(volume.configMap) };
    if (volume.secret) return { ...volume, secret: withItems(volume.secret) };
    const projected = volume.projected as { sources: Spec[] };
    const sources = projected.sources.map((projection) =>
      Object.fromEntries(
        Object.entries(projection).map(([field, value]) => [field, withItems(value)]),
      ),
    );
    return { ...volume, projected: { sources: shuffle(g, sources) } };
  };
  const rearrangeContainer = (container: Spec): Spec => ({
    ...container,
    envFrom: shuffle(g, asList(container.envFrom)),
    env: shuffle(g, asList(container.env)),
  });
  return {
    volumes: shuffle(g, asList(spec.volumes).map(rearrangeVolume)),
    initContainers: shuffle(g, asList(spec.initContainers).map(rearrangeContainer)),
    containers: shuffle(g, asList(spec.containers).map(rearrangeContainer)),
  };
}

function rearrangeAnnotations(g: GeneratorValue, annotations: Annotations): Annotations {
  const rearranged: Annotations = {};
  for (const [key, value] of shuffle(g, Object.entries(annotations))) {
    rearranged[key] = shuffle(g, value.split(',')).join(' , ');
  }
  return rearranged;
}

/** Fields and entries that name things but are not config sources. */
const unrelated = fc.record({
  image: fc.constantFrom('nginx:1.27', 'example/app@sha256:0123', 'busybox'),
  ports: fc.array(fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }) }), {
    maxLength: 2,
  }),
  args: fc.array(fc.string(), { maxLength: 2 }),
  plainEnv: fc.array(fc.record({ name: fc.constantFrom('A', 'B'), value: fc.string() }), {
    maxLength: 2,
  }),
  fieldEnv: fc.boolean(),
  volumes: fc.subarray([
    { name: 'scratch', emptyDir: {} },
    {
      name: 'csi',
      csi: { driver: 'secrets-store.csi.k8s.io', nodePublishSecretRef: { name: 'a' } },
    },
    { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
    { name: 'host', hostPath: { path: '/etc/config' } },
    { name: 'pvc', persistentVolumeClaim: { claimName: 'a' } },
  ]),
  imagePullSecrets: fc.array(fc.record({ name }), { maxLength: 2 }),
  serviceAccountName: fc.option(name, { nil: undefined }),
  nodeSelector: fc.dictionary(fc.constantFrom('zone', 'disk'), fc.string(), { maxKeys: 2 }),
  labels: fc.dictionary(fc.constantFrom('app', 'tier', 'configmap'), fc.constantFrom('a', 'web'), {
    maxKeys: 3,
  }),
});

type Unrelated = typeof unrelated extends fc.Arbitrary<infer T> ? T : never;

function decorate(spec: Spec, extra: Unrelated): Spec {
  const decorateContainer = (container: Spec): Spec => ({
    ...container,
    image: extra.image,
    ports: extra.ports,
    args: extra.args,
    volumeMounts: extra.volumes.map((volume) => ({
      name: volume.name,
      mountPath: `/m/${volume.name}`,
    })),
    env: [
      ...extra.plainEnv,
      ...asList(container.env),
      ...(extra.fieldEnv
        ? [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]
        : []),
    ],
  });
  return {
    ...spec,
    volumes: [...asList(spec.volumes), ...extra.volumes],
    initContainers: asList(spec.initContainers).map(decorateContainer),
    containers: asList(spec.containers).map(decorateContainer),
    imagePullSecrets: extra.imagePullSecrets,
    ...(extra.serviceAccountName ? { serviceAccountName: extra.serviceAccountName } : {}),
    nodeSelector: extra.nodeSelector,
  };
}

/** Workload annotations that look related but are not include/exclude. */
function unrelatedAnnotations(labels: Record<string, string>): Annotations {
  return {
    ...labels,
    [HASH]: 'f'.repeat(64),
    [SOURCES]: 'configmap/a,secret/b',
    'example.com/include': 'configmap/b',
  };
}

// --- properties ---------------------------------------------------------------------

describe('findSources + computeHash over random pod specs', () => {
  it('the arbitraries reach every source state (present, absent, keyed, whole)', () => {
    const seen = new Set<string>();
    for (const spec of fc.sample(podSpec, { numRuns: 300, seed: 1 })) {
      for (const source of findSources(spec).sources) {
        seen.add(STORE.has(`${source.kind}/${source.name}`) ? 'present' : 'absent');
        seen.add(source.selection.all ? 'whole' : 'keyed');
        seen.add(source.optional ? 'optional' : 'required');
        seen.add(source.kind);
      }
    }
    expect([...seen].sort()).toEqual(
      ['ConfigMap', 'Secret', 'absent', 'keyed', 'optional', 'present', 'required', 'whole'].sort(),
    );
  });

  it('returns the same hash whatever the order of volumes, containers and env entries', () => {
    fc.assert(
      fc.property(podSpec, sourceAnnotations, fc.gen(), (spec, annotations, g) => {
        const rearranged = rearrange(g, spec);
        const rearrangedAnnotations = rearrangeAnnotations(g, annotations);
        expect(hashOf(rearranged, rearrangedAnnotations)).toBe(hashOf(spec, annotations));
        expect(sourceListOf(rearranged, rearrangedAnnotations)).toBe(
          sourceListOf(spec, annotations),
        );
      }),
      RUNS,
    );
  });

  it('returns the same hash when unrelated fields and annotations are added', () => {
    fc.assert(
      fc.property(podSpec, sourceAnnotations, unrelated, (spec, annotations, extra) => {
        const decorated = decorate(spec, extra);
        const moreAnnotations = { ...unrelatedAnnotations(extra.labels), ...annotations };
        expect(hashOf(decorated, moreAnnotations)).toBe(hashOf(spec, annotations));
        expect(sourceListOf(decorated, moreAnnotations)).toBe(sourceListOf(spec, annotations));
      }),
      RUNS,
    );
  });

  it('lists each (kind, name) once', () => {
    fc.assert(
      fc.property(podSpec, sourceAnnotations, (spec, annotations) => {
        const ids = findSources(spec, annotations).sources.map((s) => `${s.kind}/${s.name}`);
        expect(new Set(ids).size).toBe(ids.length);
      }),
      RUNS,
    );
  });

  it('changes the hash when a referenced, selected value changes', () => {
    // The guard against a vacuous order property: the hash does depend on content.
    fc.assert(
      fc.property(podSpec, (spec) => {
        const { sources } = findSources(spec);
        const target = sources.find(
          (source) =>
            source.kind === 'ConfigMap' &&
            source.name === 'a' &&
            (source.selection.all || source.selection.keys.has('k1')),
        );
        fc.pre(target !== undefined);
        const changed = new Map(STORE);
        changed.set(
          'ConfigMap/a',
          contentOfConfigMap({ data: { k1: 'changed', k2: 'a2', k3: 'a3' } }),
        );
        const hashWith = (store: ReadonlyMap<string, SourceContent>): string =>
          computeHash(
            KEY,
            sources.map((source) => ({
              ...source,
              content: store.get(`${source.kind}/${source.name}`),
            })),
          );
        expect(hashWith(changed)).not.toBe(hashWith(STORE));
      }),
      RUNS,
    );
  });
});
