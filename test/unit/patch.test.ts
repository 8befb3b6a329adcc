// The JSONPatch for confighash's annotations (docs/design.md §4 "Patch"): minimal, and
// always applicable. Every row is applied with an RFC 6902 applier that, like the
// apiserver, refuses to add into a map that does not exist.

import { describe, expect, it } from 'vitest';
import {
  type AnnotationTarget,
  buildAnnotationPatch,
  escapePointerSegment,
  type JsonPatchOperation,
} from '../../src/patch/index.js';
import { ADOPTED_HASH, HASH, SOURCES } from '../../src/workload/index.js';
import { applyPatch } from '../support/json-patch.js';
import { named } from '../support/named.js';

/** Table rows as [name, row]: `%s` shows the whole name, where `$name` quotes and truncates. */
const TEMPLATE_METADATA = ['spec', 'template', 'metadata'];
const TEMPLATE_ANNOTATIONS = '/spec/template/metadata/annotations';

function deployment(template: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', ...metadata },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'app' }] }, ...template } },
  };
}

function templateWith(annotations: Record<string, unknown>) {
  return deployment({ metadata: { labels: { app: 'web' }, annotations } });
}

function annotationsAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const segment of [...path, 'annotations']) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

interface Row {
  name: string;
  object: unknown;
  targets: AnnotationTarget[];
  operations: JsonPatchOperation[];
  /** Annotations at each target's metadata once the patch is applied (undefined: no map). */
  after: (Record<string, string> | undefined)[];
}

const template = (desired: AnnotationTarget['desired']): AnnotationTarget => ({
  metadataPath: TEMPLATE_METADATA,
  desired,
});

const rows: Row[] = [
  {
    name: 'creates /spec/template/metadata when the template has none',
    object: deployment({}),
    targets: [template({ [SOURCES]: 'configmap/app', [HASH]: 'h1' })],
    operations: [
      {
        op: 'add',
        path: '/spec/template/metadata',
        value: { annotations: { [HASH]: 'h1', [SOURCES]: 'configmap/app' } },
      },
    ],
    after: [{ [HASH]: 'h1', [SOURCES]: 'configmap/app' }],
  },
  {
    name: 'creates the annotations map when metadata has none',
    object: deployment({ metadata: { labels: { app: 'web' } } }),
    targets: [template({ [HASH]: 'h1', [SOURCES]: 'configmap/app' })],
    operations: [
      {
        op: 'add',
        path: TEMPLATE_ANNOTATIONS,
        value: { [HASH]: 'h1', [SOURCES]: 'configmap/app' },
      },
    ],
    after: [{ [HASH]: 'h1', [SOURCES]: 'configmap/app' }],
  },
  {
    name: 'replaces metadata that is null',
    object: deployment({ metadata: null }),
    targets: [template({ [HASH]: 'h1' })],
    operations: [
      { op: 'add', path: '/spec/template/metadata', value: { annotations: { [HASH]: 'h1' } } },
    ],
    after: [{ [HASH]: 'h1' }],
  },
  {
    name: 'replaces annotations that are not a map',
    object: deployment({ metadata: { annotations: ['not', 'a', 'map'] } }),
    targets: [template({ [HASH]: 'h1' })],
    operations: [{ op: 'add', path: TEMPLATE_ANNOTATIONS, value: { [HASH]: 'h1' } }],
    after: [{ [HASH]: 'h1' }],
  },
  {
    name: 'leaves out desired-undefined keys when creating the map',
    object: deployment({}),
    targets: [template({ [HASH]: 'h1', [SOURCES]: undefined })],
    operations: [
      { op: 'add', path: '/spec/template/metadata', value: { annotations: { [HASH]: 'h1' } } },
    ],
    after: [{ [HASH]: 'h1' }],
  },
  {
    name: 'adds a key into an existing map, escaping / as ~1',
    object: templateWith({ 'example.com/owner': 'team-a' }),
    targets: [template({ [HASH]: 'h1' })],
    operations: [{ op: 'add', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: 'h1' }],
    after: [{ 'example.com/owner': 'team-a', [HASH]: 'h1' }],
  },
  {
    name: 'replaces a differing value',
    object: templateWith({ [HASH]: 'old', [SOURCES]: 'configmap/app' }),
    targets: [template({ [HASH]: 'new', [SOURCES]: 'configmap/app' })],
    operations: [
      { op: 'replace', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: 'new' },
    ],
    after: [{ [HASH]: 'new', [SOURCES]: 'configmap/app' }],
  },
  {
    name: 'replaces a value that is not a string',
    object: templateWith({ [HASH]: 42 }),
    targets: [template({ [HASH]: '42' })],
    operations: [
      { op: 'replace', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: '42' },
    ],
    after: [{ [HASH]: '42' }],
  },
  {
    name: 'removes a key whose desired value is undefined',
    object: templateWith({ [HASH]: 'h1', [SOURCES]: 'configmap/app', keep: 'me' }),
    targets: [template({ [HASH]: undefined, [SOURCES]: undefined })],
    operations: [
      { op: 'remove', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash` },
      { op: 'remove', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1sources` },
    ],
    after: [{ keep: 'me' }],
  },
  {
    name: 'adds, replaces and removes in one map, in key order',
    object: templateWith({ [HASH]: 'old', [ADOPTED_HASH]: 'stale' }),
    targets: [template({ [SOURCES]: 'secret/db', [HASH]: 'new', [ADOPTED_HASH]: undefined })],
    operations: [
      { op: 'remove', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1adopted-hash` },
      { op: 'replace', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: 'new' },
      { op: 'add', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1sources`, value: 'secret/db' },
    ],
    after: [{ [HASH]: 'new', [SOURCES]: 'secret/db' }],
  },
  {
    name: 'no operations when every value is already as desired',
    object: templateWith({ [HASH]: 'h1', [SOURCES]: 'configmap/app' }),
    targets: [template({ [HASH]: 'h1', [SOURCES]: 'configmap/app', [ADOPTED_HASH]: undefined })],
    operations: [],
    after: [{ [HASH]: 'h1', [SOURCES]: 'configmap/app' }],
  },
  {
    name: 'desired undefined with no annotations map yields nothing',
    object: deployment({ metadata: { labels: { app: 'web' } } }),
    targets: [template({ [HASH]: undefined, [SOURCES]: undefined })],
    operations: [],
    after: [undefined],
  },
  {
    name: 'desired undefined with no metadata yields nothing',
    object: deployment({}),
    targets: [template({ [HASH]: undefined })],
    operations: [],
    after: [undefined],
  },
  {
    name: 'no targets, no operations',
    object: deployment({}),
    targets: [],
    operations: [],
    after: [],
  },
  {
    name: 'escapes ~ as ~0 (before / as ~1)',
    object: templateWith({}),
    targets: [template({ 'a~b/c': 'v', '~1': 'literal' })],
    operations: [
      { op: 'add', path: `${TEMPLATE_ANNOTATIONS}/a~0b~1c`, value: 'v' },
      { op: 'add', path: `${TEMPLATE_ANNOTATIONS}/~01`, value: 'literal' },
    ],
    after: [{ 'a~b/c': 'v', '~1': 'literal' }],
  },
  {
    name: 'template and workload metadata in one patch (adoption ends)',
    object: deployment({ metadata: {} }, { annotations: { [ADOPTED_HASH]: 'h0', other: 'x' } }),
    targets: [
      template({ [HASH]: 'h1', [SOURCES]: 'configmap/app' }),
      { metadataPath: ['metadata'], desired: { [ADOPTED_HASH]: undefined } },
    ],
    operations: [
      {
        op: 'add',
        path: TEMPLATE_ANNOTATIONS,
        value: { [HASH]: 'h1', [SOURCES]: 'configmap/app' },
      },
      { op: 'remove', path: '/metadata/annotations/confighash.dev~1adopted-hash' },
    ],
    after: [{ [HASH]: 'h1', [SOURCES]: 'configmap/app' }, { other: 'x' }],
  },
  {
    name: 'adopted-hash on a workload without annotations',
    object: deployment({}),
    targets: [{ metadataPath: ['metadata'], desired: { [ADOPTED_HASH]: 'h1' } }],
    operations: [{ op: 'add', path: '/metadata/annotations', value: { [ADOPTED_HASH]: 'h1' } }],
    after: [{ [ADOPTED_HASH]: 'h1' }],
  },
];

describe('buildAnnotationPatch', () => {
  it.each(named(rows))('%s', (_name, { object, targets, operations, after }) => {
    const before = structuredClone(object);
    const patch = buildAnnotationPatch(object, targets);
    expect(patch).toEqual(operations);
    expect(object).toEqual(before);

    const patched = applyPatch(object, patch);
    expect(targets.map((target) => annotationsAt(patched, target.metadataPath))).toEqual(after);
    // Applying the patch reaches the desired state: building again finds nothing to do.
    expect(buildAnnotationPatch(patched, targets)).toEqual([]);
  });

  it('touches nothing outside the targeted metadata', () => {
    const object = deployment(
      { metadata: { labels: { app: 'web' }, annotations: { [HASH]: 'old' } } },
      { labels: { tier: 'frontend' } },
    );
    const patched = applyPatch(object, buildAnnotationPatch(object, [template({ [HASH]: 'new' })]));
    expect(patched).toEqual({
      ...object,
      spec: {
        ...object.spec,
        template: {
          ...object.spec.template,
          metadata: { labels: { app: 'web' }, annotations: { [HASH]: 'new' } },
        },
      },
    });
  });

  it('would fail to apply if it added into a missing map (the applier is strict)', () => {
    const object = deployment({});
    const naive = [{ op: 'add', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: 'h' }];
    expect(() => applyPatch(object, naive)).toThrow();
  });
});

describe('escapePointerSegment', () => {
  it.each([
    ['plain', 'plain'],
    ['confighash.dev/hash', 'confighash.dev~1hash'],
    ['a~b', 'a~0b'],
    ['~1', '~01'],
    ['/~', '~1~0'],
    ['', ''],
  ])('%s → %s', (segment, escaped) => {
    expect(escapePointerSegment(segment)).toBe(escaped);
  });
});
