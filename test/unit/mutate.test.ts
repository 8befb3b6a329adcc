// Every row of docs/design.md §4 against the core use case. The lookups come from an
// in-memory ConfigSource; the same rows run over HTTP in test/integration.

import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../../src/admission/index.js';
import { createMutator } from '../../src/admission/mutate.js';
import type { NamespaceCheck } from '../../src/admission/namespace-check.js';
import type { MutationResult } from '../../src/admission/result.js';
import { hashKeyId } from '../../src/hash/index.js';
import { formatSource } from '../../src/sources/index.js';
import {
  ADOPTED_HASH,
  findSources,
  HANDLED_KINDS,
  HASH,
  HASHED_VERSIONS,
  PREVIOUS_KEY_WARNING,
  readHashedVersions,
  readWorkload,
  SOURCES,
} from '../../src/workload/index.js';
import { applyPatch } from '../support/json-patch.js';
import { digestOf, MemorySource } from '../support/memory-source.js';
import { named } from '../support/named.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import {
  admissionRequest,
  type KeyReference,
  NAMESPACE,
  type RequestOptions,
  readingKeys,
  workload,
} from '../support/workloads.js';

const KEY = Buffer.alloc(32, 7);
const NO_DEADLINE = new AbortController().signal;
type Workload = ReturnType<typeof workload>;

function standardSource(): MemorySource {
  return new MemorySource()
    .configMap('app-config', { 'app.yaml': 'port: 8080' })
    .secret('db', { password: 'hunter2' })
    .configMap('flags', { mode: 'fast', unrelated: 'x' });
}

async function review(
  source: MemorySource,
  options: RequestOptions,
  keys: { hashKey: Buffer; previousHashKeys?: Buffer[] } = { hashKey: KEY },
) {
  const mutator = createMutator({
    configSource: source,
    ...keys,
    namespaces: everyNamespaceOptedIn,
  });
  const request = admissionRequest(options);
  const full = await mutator.review(request, NO_DEADLINE);
  const after = applyPatch(request.object as Workload, full.patch as never);
  // The rows are about the template's annotations and adopted-hash; hashed-versions, which
  // nearly every write sets beside them, has rows of its own that read `full`.
  const result = { ...full, patch: withoutHashedVersions(full.patch) };
  return { result, full, after };
}

/** `patch` without what it does to the hashed-versions annotation. */
function withoutHashedVersions(patch: MutationResult['patch']): MutationResult['patch'] {
  const escaped = HASHED_VERSIONS.replace('/', '~1');
  return patch.flatMap((operation) => {
    if (operation.path.endsWith(`/annotations/${escaped}`)) return [];
    if (operation.op !== 'add' || !operation.path.startsWith('/metadata')) return [operation];
    const value = structuredClone(operation.value) as Record<string, unknown>;
    const annotations = (operation.path === '/metadata' ? value.annotations : value) as Record<
      string,
      string
    >;
    delete annotations[HASHED_VERSIONS];
    return Object.keys(annotations).length === 0 ? [] : [{ ...operation, value }];
  });
}

function templateAnnotationsOf(object: unknown): Record<string, string> {
  const template = (
    object as { spec: { template: { metadata?: { annotations?: Record<string, string> } } } }
  ).spec.template;
  return template.metadata?.annotations ?? {};
}

function workloadAnnotationsOf(object: unknown): Record<string, string> {
  return (
    (object as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {}
  );
}

/** The same workload with another image: a template change of its own. */
function withImage(object: Workload, image: string): Workload {
  const changed = structuredClone(object);
  (changed.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
    .containers[0]!.image = image;
  return changed;
}

/** A workload as the webhook left it after CREATE: the baseline for UPDATE rows. */
async function created(source: MemorySource, options: Parameters<typeof workload>[0] = {}) {
  const { after } = await review(source, { operation: 'CREATE', object: workload(options) });
  return after;
}

function expectWellFormedWarnings(result: MutationResult) {
  for (const warning of result.warnings) {
    expect(warning.startsWith('confighash: ')).toBe(true);
    expect(warning.length).toBeLessThanOrEqual(120);
  }
}

describe('CREATE/UPDATE of a handled kind, all sources readable', () => {
  it('sets hash and sources on the pod template, not on the workload', async () => {
    const { result, after } = await review(standardSource(), { operation: 'CREATE' });
    expect(result.outcome).toBe('patched');
    expect(templateAnnotationsOf(after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(templateAnnotationsOf(after)[SOURCES]).toBe(
      'configmap/app-config,configmap/flags,secret/db',
    );
    expect(workloadAnnotationsOf(after)[HASH]).toBeUndefined();
    expect(result.warnings).toEqual([]);
  });

  it('a second call on its own output yields no patch', async () => {
    const source = standardSource();
    const first = await created(source);
    const { result } = await review(source, { operation: 'CREATE', object: first });
    expect(result.patch).toEqual([]);
    expect(result.outcome).toBe('unchanged');
  });

  it.each(['Deployment', 'StatefulSet', 'DaemonSet'] as const)('handles %s', async (kind) => {
    const { after } = await review(standardSource(), { object: workload({ kind }) });
    expect(templateAnnotationsOf(after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('an UPDATE after a config change writes a new hash and reports the change', async () => {
    const source = standardSource();
    const old = await created(source);
    source.secret('db', { password: 'correct horse' });
    const { result, after } = await review(source, {
      operation: 'UPDATE',
      object: old,
      oldObject: old,
    });
    expect(result.outcome).toBe('patched');
    expect(result.hashChanged).toBe(true);
    expect(templateAnnotationsOf(after)[HASH]).not.toBe(templateAnnotationsOf(old)[HASH]);
  });

  it('an UPDATE that changes only the image keeps the hash', async () => {
    const source = standardSource();
    const old = await created(source);
    const changed = structuredClone(old);
    (changed.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
      .containers[0]!.image = 'registry.example/app:2';
    const { result } = await review(source, {
      operation: 'UPDATE',
      object: changed,
      oldObject: old,
    });
    expect(result.patch).toEqual([]);
    expect(result.hashChanged).toBe(false);
  });

  it('an UPDATE whose request dropped the annotations gets them back', async () => {
    const source = standardSource();
    const old = await created(source);
    const { result, after } = await review(source, {
      operation: 'UPDATE',
      object: workload(),
      oldObject: old,
    });
    expect(result.outcome).toBe('patched');
    expect(templateAnnotationsOf(after)).toEqual(templateAnnotationsOf(old));
  });

  it('a workload with no sources gets neither annotation, and loses stale ones', async () => {
    const bare = { containers: [{ name: 'app', image: 'x' }] };
    const { result } = await review(standardSource(), { object: workload({ podSpec: bare }) });
    expect(result.patch).toEqual([]);
    const stale = workload({
      podSpec: bare,
      templateAnnotations: { [HASH]: 'a'.repeat(64), [SOURCES]: 'secret/x', keep: 'me' },
    });
    const second = await review(standardSource(), { object: stale });
    expect(templateAnnotationsOf(second.after)).toEqual({ keep: 'me' });
  });
});

describe('adoption', () => {
  async function adoptedBaseline() {
    const source = standardSource();
    const neverHashed = workload();
    const { result, after } = await review(source, {
      operation: 'UPDATE',
      object: neverHashed,
      oldObject: neverHashed,
    });
    return { source, result, after };
  }

  it('an UPDATE of a never-hashed workload with an unchanged template writes adopted-hash only', async () => {
    const { result, after } = await adoptedBaseline();
    expect(result.outcome).toBe('adopted');
    expect(workloadAnnotationsOf(after)[ADOPTED_HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(templateAnnotationsOf(after)).toEqual({});
    expect(result.hashChanged).toBe(false);
  });

  it('the adopted hash equals the hash a CREATE would write', async () => {
    const { source, after } = await adoptedBaseline();
    const fresh = await created(source);
    expect(workloadAnnotationsOf(after)[ADOPTED_HASH]).toBe(templateAnnotationsOf(fresh)[HASH]);
  });

  it('a later write with the same config and template changes nothing', async () => {
    const { source, after } = await adoptedBaseline();
    const { result } = await review(source, {
      operation: 'UPDATE',
      object: after,
      oldObject: after,
    });
    expect(result.patch).toEqual([]);
  });

  it('a later write after a config change hashes the template and drops adopted-hash', async () => {
    const { source, after } = await adoptedBaseline();
    source.configMap('app-config', { 'app.yaml': 'port: 9090' });
    const second = await review(source, { operation: 'UPDATE', object: after, oldObject: after });
    expect(second.result.outcome).toBe('patched');
    expect(second.result.hashChanged).toBe(true);
    expect(templateAnnotationsOf(second.after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(workloadAnnotationsOf(second.after)[ADOPTED_HASH]).toBeUndefined();
  });

  it('a later write that changes the template for another reason hashes it too', async () => {
    const { source, after } = await adoptedBaseline();
    const changed = structuredClone(after);
    (
      changed.spec as { template: { metadata: { labels: Record<string, string> } } }
    ).template.metadata.labels.tier = 'front';
    const second = await review(source, { operation: 'UPDATE', object: changed, oldObject: after });
    expect(templateAnnotationsOf(second.after)[HASH]).toBe(
      workloadAnnotationsOf(after)[ADOPTED_HASH],
    );
    expect(workloadAnnotationsOf(second.after)[ADOPTED_HASH]).toBeUndefined();
  });

  it('a CREATE is never adopted', async () => {
    const { result } = await review(standardSource(), { operation: 'CREATE' });
    expect(result.outcome).toBe('patched');
  });

  // docs/design.md §4, adoption: whenever the template keeps or gets `hash`, the same patch
  // removes `adopted-hash`, current or stale. Each row pins the whole patch.
  describe('adopted-hash goes when the template carries the hash', () => {
    const SOURCE_LIST = 'configmap/app-config,configmap/flags,secret/db';
    const STALE = 'f'.repeat(64);
    const NEW_KEY = Buffer.alloc(32, 9);
    const TEMPLATE_ANNOTATIONS = '/spec/template/metadata/annotations';
    const TEMPLATE_HASH = `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`;
    const TEMPLATE_SOURCES = `${TEMPLATE_ANNOTATIONS}/confighash.dev~1sources`;
    const REMOVE_ADOPTED = {
      op: 'remove',
      path: '/metadata/annotations/confighash.dev~1adopted-hash',
    };

    function withLabel(object: Workload): Workload {
      const changed = structuredClone(object);
      (
        changed.spec as { template: { metadata: { labels: Record<string, string> } } }
      ).template.metadata.labels.tier = 'front';
      return changed;
    }

    interface Hashes {
      /** The current key's digest of the config as the request finds it. */
      readonly now: string;
      /** The same content's digest with the key before a rotation (rotated rows). */
      readonly previousKey: string;
    }

    interface Row {
      readonly name: string;
      readonly request: (hashes: Hashes) => RequestOptions;
      readonly rotated?: true;
      readonly configChanged?: true;
      /** The whole patch, given the current key's digest of the config when the review runs. */
      readonly patch: (now: string) => unknown[];
      readonly warnings?: readonly string[];
    }

    const hashedTemplate = (hash: string, adopted: string) =>
      workload({
        annotations: { [ADOPTED_HASH]: adopted },
        templateAnnotations: { [HASH]: hash, [SOURCES]: SOURCE_LIST },
      });
    const touch = (object: Workload): RequestOptions => ({
      operation: 'UPDATE',
      object,
      oldObject: object,
    });

    it.each(
      named<Row>([
        {
          name: 'a touch of a hashed template with a stale adopted-hash',
          request: ({ now }) => touch(hashedTemplate(now, STALE)),
          patch: () => [REMOVE_ADOPTED],
        },
        {
          name: 'a touch of a hashed template with a current adopted-hash',
          request: ({ now }) => touch(hashedTemplate(now, now)),
          patch: () => [REMOVE_ADOPTED],
        },
        {
          name: 'a touch of a template hashed with a previous key, with an adopted-hash',
          rotated: true,
          request: ({ previousKey }) => touch(hashedTemplate(previousKey, STALE)),
          patch: () => [REMOVE_ADOPTED],
          warnings: [PREVIOUS_KEY_WARNING],
        },
        {
          name: 'a template label changed on a hashed template with an adopted-hash',
          request: ({ now }) => {
            const old = hashedTemplate(now, now);
            return { operation: 'UPDATE', object: withLabel(old), oldObject: old };
          },
          patch: () => [REMOVE_ADOPTED],
        },
        {
          name: 'a template label changed on an adopted workload: the hash goes into the template',
          request: ({ now }) => {
            const old = workload({ annotations: { [ADOPTED_HASH]: now } });
            return { operation: 'UPDATE', object: withLabel(old), oldObject: old };
          },
          patch: (now) => [
            {
              op: 'add',
              path: TEMPLATE_ANNOTATIONS,
              value: { [HASH]: now, [SOURCES]: SOURCE_LIST },
            },
            REMOVE_ADOPTED,
          ],
        },
        {
          name: 'our template annotations dropped by the request are put back, and adopted-hash goes',
          request: ({ now }) => ({
            operation: 'UPDATE',
            object: workload({ annotations: { [ADOPTED_HASH]: STALE } }),
            oldObject: hashedTemplate(now, STALE),
          }),
          patch: (now) => [
            {
              op: 'add',
              path: TEMPLATE_ANNOTATIONS,
              value: { [HASH]: now, [SOURCES]: SOURCE_LIST },
            },
            REMOVE_ADOPTED,
          ],
        },
        {
          name: 'a config change on a hashed template with an adopted-hash',
          configChanged: true,
          request: ({ now }) => touch(hashedTemplate(now, now)),
          patch: (now) => [{ op: 'replace', path: TEMPLATE_HASH, value: now }, REMOVE_ADOPTED],
        },
        {
          name: 'a CREATE carrying an adopted-hash',
          request: ({ now }) => ({
            operation: 'CREATE',
            object: workload({ annotations: { [ADOPTED_HASH]: now } }),
          }),
          patch: (now) => [
            {
              op: 'add',
              path: TEMPLATE_ANNOTATIONS,
              value: { [HASH]: now, [SOURCES]: SOURCE_LIST },
            },
            REMOVE_ADOPTED,
          ],
        },
        {
          name: 'a CREATE carrying both (a manifest exported from the cluster)',
          request: ({ now }) => ({ operation: 'CREATE', object: hashedTemplate(now, now) }),
          patch: () => [REMOVE_ADOPTED],
        },
        {
          name: "not a template that gets the hash: a request adding our hash to an adopted workload's template is put back as it was, still adopted",
          request: ({ now }) => {
            const old = workload({ annotations: { [ADOPTED_HASH]: now } });
            const object = workload({
              annotations: { [ADOPTED_HASH]: now },
              templateAnnotations: { [HASH]: now, [SOURCES]: SOURCE_LIST },
            });
            return { operation: 'UPDATE', object, oldObject: old };
          },
          patch: () => [
            { op: 'remove', path: TEMPLATE_HASH },
            { op: 'remove', path: TEMPLATE_SOURCES },
          ],
        },
      ]),
    )('%s', async (_name, row) => {
      const source = standardSource();
      const digest = (key: Buffer) =>
        digestOf(source, readWorkload(workload(), HANDLED_KINDS[0]!), key, NAMESPACE);
      const keys = row.rotated ? { hashKey: NEW_KEY, previousHashKeys: [KEY] } : { hashKey: KEY };
      const request = row.request({
        now: await digest(keys.hashKey),
        previousKey: await digest(KEY),
      });
      if (row.configChanged) source.secret('db', { password: 'correct horse' });
      const { result } = await review(source, request, keys);
      expect(result.patch).toEqual(row.patch(await digest(keys.hashKey)));
      expect(result.warnings).toEqual(row.warnings ?? []);
    });
  });
});

// docs/security.md "Rotate the hash key": hashes a previous key made stay as they are until
// the hash changes for a real reason; then, and on every CREATE, the current key is used.
describe('key rotation', () => {
  const SOURCE_LIST = 'configmap/app-config,configmap/flags,secret/db';
  const NEW_KEY = Buffer.alloc(32, 9);
  const OLD_KEY = KEY;
  const ROTATED = { hashKey: NEW_KEY, previousHashKeys: [OLD_KEY] };
  const digest = (source: MemorySource, key: Buffer, namespace = NAMESPACE) =>
    digestOf(source, readWorkload(workload(), HANDLED_KINDS[0]!), key, namespace);
  const rotatedReview = (source: MemorySource, options: RequestOptions) =>
    review(source, options, ROTATED);

  /** The workload as the webhook left it before the rotation: the old key's digest. */
  async function writtenWithPreviousKey(where: 'template' | 'adopted' = 'template') {
    const source = standardSource();
    const stored = await digest(source, OLD_KEY);
    const old =
      where === 'template'
        ? workload({ templateAnnotations: { [HASH]: stored, [SOURCES]: SOURCE_LIST } })
        : workload({ annotations: { [ADOPTED_HASH]: stored } });
    return { source, stored, old };
  }

  it('the two keys digest the same content differently (the test would prove nothing else)', async () => {
    const source = standardSource();
    expect(await digest(source, OLD_KEY)).not.toBe(await digest(source, NEW_KEY));
  });

  interface Row {
    readonly name: string;
    /** The key the stored hash was made with. */
    readonly madeWith: Buffer;
    /** The namespace it was made in (default: the workload's). */
    readonly hashedIn?: string;
    readonly configChanged?: boolean;
    readonly operation?: 'UPDATE' | 'CREATE';
    /** undefined: not current, so the current key's hash is written. */
    readonly current: 'current-key' | 'previous-key' | undefined;
  }

  it.each(
    named<Row>([
      {
        name: 'a current-key hash of the content now is current',
        madeWith: NEW_KEY,
        current: 'current-key',
      },
      {
        name: 'a previous-key hash of the content now is current: not rewritten on an unchanged re-apply',
        madeWith: OLD_KEY,
        current: 'previous-key',
      },
      {
        name: 'a previous-key hash of other content is not current',
        madeWith: OLD_KEY,
        configChanged: true,
        current: undefined,
      },
      {
        name: "a previous key's hash of another namespace is not current",
        madeWith: OLD_KEY,
        hashedIn: 'other-team',
        current: undefined,
      },
      {
        name: 'a hash of a key no longer kept is not current',
        madeWith: Buffer.alloc(32, 1),
        current: undefined,
      },
      {
        name: 'new writes use the current key: a CREATE carrying a previous-key hash',
        madeWith: OLD_KEY,
        operation: 'CREATE',
        current: undefined,
      },
    ]),
  )('%s', async (_name, row) => {
    const source = standardSource();
    const stored = await digest(source, row.madeWith, row.hashedIn);
    const old = workload({ templateAnnotations: { [HASH]: stored, [SOURCES]: SOURCE_LIST } });
    if (row.configChanged) source.configMap('app-config', { 'app.yaml': 'port: 9090' });
    const request: RequestOptions =
      row.operation === 'CREATE'
        ? { operation: 'CREATE', object: old }
        : { operation: 'UPDATE', object: old, oldObject: old };
    const { result, after } = await rotatedReview(source, request);
    if (row.current === undefined) {
      expect(templateAnnotationsOf(after)[HASH]).toBe(await digest(source, NEW_KEY));
      expect(templateAnnotationsOf(after)[HASH]).not.toBe(stored);
      expect(result.previousKeyHash).toBeUndefined();
      return;
    }
    expect(result.patch).toEqual([]);
    expect(result.hashChanged).toBe(false);
    expect(templateAnnotationsOf(after)).toEqual({ [HASH]: stored, [SOURCES]: SOURCE_LIST });
    const previous = row.current === 'previous-key';
    expect(result.warnings).toEqual(previous ? [PREVIOUS_KEY_WARNING] : []);
    expect(result.previousKeyHash).toBe(previous ? true : undefined);
  });

  it('the previous-key warning is well formed', async () => {
    const { source, old } = await writtenWithPreviousKey();
    const { result } = await rotatedReview(source, {
      operation: 'UPDATE',
      object: old,
      oldObject: old,
    });
    expect(result.warnings).toEqual([PREVIOUS_KEY_WARNING]);
    expectWellFormedWarnings(result);
  });

  it('the previous-key warning comes first, so that it is kept beside many others', async () => {
    const source = standardSource();
    const include = Array.from({ length: 12 }, (_, i) => `bogus-${i}/x`).join(',');
    const annotations = { 'confighash.dev/include': include };
    const stored = await digestOf(
      source,
      readWorkload(workload({ annotations }), HANDLED_KINDS[0]!),
      OLD_KEY,
      NAMESPACE,
    );
    const old = workload({
      annotations,
      templateAnnotations: { [HASH]: stored, [SOURCES]: SOURCE_LIST },
    });
    const { result } = await rotatedReview(source, {
      operation: 'UPDATE',
      object: old,
      oldObject: old,
    });
    expect(result.warnings).toHaveLength(10);
    expect(result.warnings[0]).toBe(PREVIOUS_KEY_WARNING);
    expect(result.patch).toEqual([]);
  });

  it('a replace whose manifest lacks our annotations keeps the previous-key hash', async () => {
    const { source, stored, old } = await writtenWithPreviousKey();
    const { result, after } = await rotatedReview(source, {
      operation: 'UPDATE',
      object: workload(),
      oldObject: old,
    });
    expect(templateAnnotationsOf(after)).toEqual({ [HASH]: stored, [SOURCES]: SOURCE_LIST });
    expect(result.hashChanged).toBe(false);
  });

  it('a touch of a previous-key hashed template writes no patch at all', async () => {
    const { source, old } = await writtenWithPreviousKey();
    const touch = (object: Workload) =>
      rotatedReview(source, { operation: 'UPDATE', object, oldObject: object });
    // The first touch records what the kept hash stands for, as the write before the rotation would have.
    const first = await touch(old);
    expect(first.result.patch).toEqual([]);
    const { full } = await touch(first.after);
    expect(full.patch).toEqual([]);
    expect(full.outcome).toBe('unchanged');
  });

  it('without the previous key, the same touch rewrites the hash: one rollout', async () => {
    const { source, old } = await writtenWithPreviousKey();
    const { result, after } = await review(
      source,
      { operation: 'UPDATE', object: old, oldObject: old },
      { hashKey: NEW_KEY },
    );
    expect(result.hashChanged).toBe(true);
    expect(templateAnnotationsOf(after)[HASH]).toBe(await digest(source, NEW_KEY));
  });

  it('a template change with the config unchanged rolls anyway, so it uses the current key', async () => {
    const { source, old } = await writtenWithPreviousKey();
    const { result, after } = await rotatedReview(source, {
      operation: 'UPDATE',
      object: withImage(old, 'registry.example/app:2'),
      oldObject: old,
    });
    expect(result.outcome).toBe('patched');
    expect(result.hashChanged).toBe(true);
    expect(templateAnnotationsOf(after)[HASH]).toBe(await digest(source, NEW_KEY));
  });

  it('a dry-run answers as the real request: the previous-key hash stays, with its warning', async () => {
    const { source, old } = await writtenWithPreviousKey();
    const request = { operation: 'UPDATE', object: old, oldObject: old } as const;
    const real = await rotatedReview(source, request);
    const dry = await rotatedReview(source, { ...request, dryRun: true });
    expect(dry.result.patch).toEqual(real.result.patch);
    expect(dry.result.patch).toEqual([]);
    expect(dry.result.warnings).toEqual([PREVIOUS_KEY_WARNING]);
  });

  it('a required source gone keeps the previous-key hash, as it keeps any previous one', async () => {
    const { source, stored, old } = await writtenWithPreviousKey();
    source.delete('Secret', 'db');
    const { result, after } = await rotatedReview(source, {
      operation: 'UPDATE',
      object: old,
      oldObject: old,
    });
    expect(result.outcome).toBe('kept-old');
    expect(templateAnnotationsOf(after)[HASH]).toBe(stored);
  });

  describe("adopted before the rotation (adopted-hash holds the old key's digest)", () => {
    it('an unchanged write changes nothing: no patch, still adopted with it', async () => {
      const { source, stored, old } = await writtenWithPreviousKey('adopted');
      const { result, after } = await rotatedReview(source, {
        operation: 'UPDATE',
        object: old,
        oldObject: old,
      });
      expect(result.patch).toEqual([]);
      expect(result.previousKeyHash).toBe(true);
      expect(workloadAnnotationsOf(after)[ADOPTED_HASH]).toBe(stored);
      expect(templateAnnotationsOf(after)).toEqual({});
    });

    it('a config change hashes the template with the current key and drops adopted-hash', async () => {
      const { source, old } = await writtenWithPreviousKey('adopted');
      source.secret('db', { password: 'correct horse' });
      const { result, after } = await rotatedReview(source, {
        operation: 'UPDATE',
        object: old,
        oldObject: old,
      });
      expect(result.hashChanged).toBe(true);
      expect(templateAnnotationsOf(after)[HASH]).toBe(await digest(source, NEW_KEY));
      expect(workloadAnnotationsOf(after)[ADOPTED_HASH]).toBeUndefined();
    });

    it('a template change hashes the template with the current key and drops adopted-hash', async () => {
      const { source, old } = await writtenWithPreviousKey('adopted');
      const { after } = await rotatedReview(source, {
        operation: 'UPDATE',
        object: withImage(old, 'registry.example/app:2'),
        oldObject: old,
      });
      expect(templateAnnotationsOf(after)[HASH]).toBe(await digest(source, NEW_KEY));
      expect(workloadAnnotationsOf(after)[ADOPTED_HASH]).toBeUndefined();
    });
  });
});

describe('absent sources', () => {
  const optionalOnly = {
    volumes: [{ name: 'c', configMap: { name: 'maybe', optional: true } }],
    containers: [{ name: 'app', image: 'x' }],
  };
  const requiredOnly = {
    volumes: [{ name: 'c', configMap: { name: 'missing' } }],
    containers: [{ name: 'app', image: 'x' }],
  };

  it('an optional absent source is hashed as absent, without a warning', async () => {
    const { result, after } = await review(new MemorySource(), {
      object: workload({ podSpec: optionalOnly }),
    });
    expect(result.warnings).toEqual([]);
    expect(templateAnnotationsOf(after)[SOURCES]).toBe('configmap/maybe');
  });

  it('an optional source appearing later changes the hash', async () => {
    const source = new MemorySource();
    const before = await created(source, { podSpec: optionalOnly });
    source.configMap('maybe', { a: '1' });
    const { result } = await review(source, {
      operation: 'UPDATE',
      object: before,
      oldObject: before,
    });
    expect(result.hashChanged).toBe(true);
  });

  it('a required absent source on CREATE is hashed as absent, with a warning', async () => {
    const { result, after } = await review(new MemorySource(), {
      object: workload({ podSpec: requiredOnly }),
    });
    expect(templateAnnotationsOf(after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(result.warnings).toEqual([
      'confighash: ConfigMap missing not found; pods will not start until it exists',
    ]);
  });

  it('a required absent source on UPDATE keeps the previous values, with a warning', async () => {
    const source = standardSource();
    const old = await created(source);
    source.delete('Secret', 'db');
    const { result, after } = await review(source, {
      operation: 'UPDATE',
      object: workload({ image: 'registry.example/app:2' }),
      oldObject: old,
    });
    expect(result.outcome).toBe('kept-old');
    expect(templateAnnotationsOf(after)).toEqual(templateAnnotationsOf(old));
    expect(result.warnings).toEqual(['confighash: Secret db not found; kept the previous hash']);
    expectWellFormedWarnings(result);
  });
});

// docs/design.md §3 "Required keys", §4: a selected key that a reference not marked optional
// names, missing from an object that exists, is treated as a required object that is absent.
describe('missing keys', () => {
  const TEMPLATE_ANNOTATIONS = '/spec/template/metadata/annotations';
  const reference = (
    by: KeyReference['by'],
    kind: KeyReference['kind'],
    optional?: boolean,
  ): KeyReference => ({
    by,
    kind,
    name: 'app',
    key: 'LOG_LEVEL',
    ...(optional === undefined ? {} : { optional }),
  });
  const withKey = () =>
    new MemorySource()
      .configMap('app', { LOG_LEVEL: 'info', other: 'x' })
      .secret('app', { LOG_LEVEL: 'info', other: 'x' });
  const removeKey = (source: MemorySource) =>
    source.configMap('app', { other: 'x' }).secret('app', { other: 'x' });
  const deleteObjects = (source: MemorySource) =>
    source.delete('ConfigMap', 'app').delete('Secret', 'app');

  interface Row {
    readonly name: string;
    readonly reference: KeyReference;
    readonly operation: 'CREATE' | 'UPDATE';
    /** What happens to the config between the workload's last write and this one. */
    readonly change: (source: MemorySource) => MemorySource;
    /** The request changes the image too (a template change of its own). */
    readonly newImage?: true;
    readonly outcome: MutationResult['outcome'];
    /** The whole patch, given the digest of the config now and the sources annotation. */
    readonly patch: (written: { now: string; sources: string }) => unknown[];
    readonly warnings: readonly string[];
  }

  const KEPT = 'confighash: ConfigMap app key "LOG_LEVEL" not found; kept the previous hash';
  const keptUpdate = (by: KeyReference['by'], kind: KeyReference['kind']): Row => ({
    name: `UPDATE: a required ${by} key of a ${kind} removed keeps the previous hash, with a warning`,
    reference: reference(by, kind),
    operation: 'UPDATE',
    change: removeKey,
    outcome: 'kept-old',
    patch: () => [],
    warnings: [KEPT.replace('ConfigMap', kind)],
  });

  it.each(
    named<Row>([
      keptUpdate('volume items', 'ConfigMap'),
      keptUpdate('env key ref', 'ConfigMap'),
      keptUpdate('volume items', 'Secret'),
      keptUpdate('env key ref', 'Secret'),
      {
        name: 'UPDATE: a required key removed keeps the previous hash even when the template changes too',
        reference: reference('env key ref', 'ConfigMap', false),
        operation: 'UPDATE',
        change: removeKey,
        newImage: true,
        outcome: 'kept-old',
        patch: () => [],
        warnings: [KEPT],
      },
      {
        name: 'UPDATE: an optional env key ref key removed is content: hashed as missing, rolls, no warning',
        reference: reference('env key ref', 'ConfigMap', true),
        operation: 'UPDATE',
        change: removeKey,
        outcome: 'patched',
        patch: ({ now }) => [
          { op: 'replace', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: now },
        ],
        warnings: [],
      },
      {
        name: 'UPDATE: an optional volume items key removed rolls, no warning',
        reference: reference('volume items', 'Secret', true),
        operation: 'UPDATE',
        change: removeKey,
        outcome: 'patched',
        patch: ({ now }) => [
          { op: 'replace', path: `${TEMPLATE_ANNOTATIONS}/confighash.dev~1hash`, value: now },
        ],
        warnings: [],
      },
      {
        name: 'CREATE: a required env key ref key missing is hashed as missing, pods will not start',
        reference: reference('env key ref', 'ConfigMap'),
        operation: 'CREATE',
        change: removeKey,
        outcome: 'patched',
        patch: ({ now, sources }) => [
          { op: 'add', path: TEMPLATE_ANNOTATIONS, value: { [HASH]: now, [SOURCES]: sources } },
        ],
        warnings: [
          'confighash: ConfigMap app key "LOG_LEVEL" not found; pods will not start until it exists',
        ],
      },
      {
        name: 'CREATE: a required volume items key of a Secret missing: the same',
        reference: reference('volume items', 'Secret'),
        operation: 'CREATE',
        change: removeKey,
        outcome: 'patched',
        patch: ({ now, sources }) => [
          { op: 'add', path: TEMPLATE_ANNOTATIONS, value: { [HASH]: now, [SOURCES]: sources } },
        ],
        warnings: [
          'confighash: Secret app key "LOG_LEVEL" not found; pods will not start until it exists',
        ],
      },
      {
        name: 'CREATE: an optional key missing is hashed as missing, no warning',
        reference: reference('env key ref', 'Secret', true),
        operation: 'CREATE',
        change: removeKey,
        outcome: 'patched',
        patch: ({ now, sources }) => [
          { op: 'add', path: TEMPLATE_ANNOTATIONS, value: { [HASH]: now, [SOURCES]: sources } },
        ],
        warnings: [],
      },
      {
        name: 'UPDATE: a key ref whose object is deleted follows the object rule: one warning, for the object',
        reference: reference('env key ref', 'ConfigMap'),
        operation: 'UPDATE',
        change: deleteObjects,
        outcome: 'kept-old',
        patch: () => [],
        warnings: ['confighash: ConfigMap app not found; kept the previous hash'],
      },
      {
        name: 'CREATE: a volume items key of an absent object follows the object rule',
        reference: reference('volume items', 'Secret'),
        operation: 'CREATE',
        change: deleteObjects,
        outcome: 'patched',
        patch: ({ now, sources }) => [
          { op: 'add', path: TEMPLATE_ANNOTATIONS, value: { [HASH]: now, [SOURCES]: sources } },
        ],
        warnings: ['confighash: Secret app not found; pods will not start until it exists'],
      },
    ]),
  )('%s', async (_name, row) => {
    const source = withKey();
    const podSpec = readingKeys(row.reference);
    const old = await created(source, { podSpec });
    const stored = templateAnnotationsOf(old)[HASH]!;
    row.change(source);
    const object =
      row.operation === 'CREATE'
        ? workload({ podSpec })
        : row.newImage
          ? withImage(old, 'registry.example/app:2')
          : old;
    const { result } = await review(source, {
      operation: row.operation,
      object,
      ...(row.operation === 'UPDATE' ? { oldObject: old } : {}),
    });
    const now = await digestOf(source, readWorkload(object, HANDLED_KINDS[0]!), KEY, NAMESPACE);
    const sources = row.reference.kind === 'ConfigMap' ? 'configmap/app' : 'secret/app';
    expect(result.outcome).toBe(row.outcome);
    expect(result.patch).toEqual(row.patch({ now, sources }));
    expect(result.warnings).toEqual(row.warnings);
    expect(result.hashChanged).toBe(row.operation === 'UPDATE' && row.outcome === 'patched');
    expectWellFormedWarnings(result);
    if (row.outcome === 'patched' && row.operation === 'UPDATE') expect(now).not.toBe(stored);
  });
});

describe('lookup failures', () => {
  it.each(['forbidden', 'timeout', 'server-error', 'network'] as const)(
    '%s on UPDATE keeps the previous values and names the object',
    async (failure) => {
      const source = standardSource();
      const old = await created(source);
      source
        .configMap('app-config', { 'app.yaml': 'changed' })
        .fail('ConfigMap', 'app-config', failure);
      const { result, after } = await review(source, {
        operation: 'UPDATE',
        object: workload(),
        oldObject: old,
      });
      expect(result.outcome).toBe('kept-old');
      expect(result.hashChanged).toBe(false);
      expect(templateAnnotationsOf(after)).toEqual(templateAnnotationsOf(old));
      expect(result.warnings).toEqual([
        `confighash: could not read ConfigMap app-config (${failure}); kept the previous hash`,
      ]);
      expect(result.lookups).toContainEqual({ kind: 'ConfigMap', result: failure });
    },
  );

  it('on CREATE writes no hash and says so', async () => {
    const source = standardSource().fail('Secret', 'db', 'forbidden');
    const { result } = await review(source, { operation: 'CREATE' });
    expect(result.patch).toEqual([]);
    expect(result.warnings).toEqual([
      'confighash: could not read Secret db (forbidden); no hash written',
    ]);
  });

  it('keeps an adopted workload adopted', async () => {
    const source = standardSource();
    const neverHashed = workload();
    const adopted = (
      await review(source, { operation: 'UPDATE', object: neverHashed, oldObject: neverHashed })
    ).after;
    source.fail('ConfigMap', 'flags', 'timeout');
    const { after } = await review(source, {
      operation: 'UPDATE',
      object: workload(),
      oldObject: adopted,
    });
    expect(workloadAnnotationsOf(after)).toEqual(workloadAnnotationsOf(adopted));
    expect(templateAnnotationsOf(after)).toEqual({});
  });
});

describe('requests left alone', () => {
  const rows: [string, RequestOptions][] = [
    [
      'an opted-out workload',
      { object: workload({ annotations: { 'confighash.dev/enabled': 'false' } }) },
    ],
    ['another kind', { kind: { group: 'batch', version: 'v1', kind: 'Job' } }],
    ['another version', { kind: { group: 'apps', version: 'v1beta1', kind: 'Deployment' } }],
    ['a subresource', { operation: 'UPDATE', subResource: 'scale', oldObject: workload() }],
    ['DELETE', { operation: 'DELETE' }],
    ['CONNECT', { operation: 'CONNECT' }],
    ['a dry-run DELETE', { operation: 'DELETE', dryRun: true }],
    [
      'a dry-run of an opted-out workload',
      { dryRun: true, object: workload({ annotations: { 'confighash.dev/enabled': 'false' } }) },
    ],
  ];
  it.each(rows)('%s: allowed, no patch, no lookups', async (_name, options) => {
    const source = standardSource();
    const { result } = await review(source, options);
    expect(result.outcome).toBe('skipped');
    expect(result.patch).toEqual([]);
    expect(source.calls).toEqual([]);
    expect(result.skipReason).toBeTruthy();
  });
});

// docs/design.md §2 "opt workloads in one at a time", §4: a namespace labelled
// confighash.dev/workloads=annotated, as the namespace check reports it.
describe('a namespace that handles annotated workloads only', () => {
  const annotatedOnly: NamespaceCheck = {
    check: async () => ({ status: 'opted-in', workloads: 'annotated' }),
  };
  async function reviewThere(source: MemorySource, options: RequestOptions) {
    const mutator = createMutator({
      configSource: source,
      hashKey: KEY,
      namespaces: annotatedOnly,
    });
    const request = admissionRequest(options);
    const result = await mutator.review(request, NO_DEADLINE);
    return { result, after: applyPatch(request.object as Workload, result.patch as never) };
  }
  const optedIn = { 'confighash.dev/enabled': 'true' };

  const skippedRows: [string, RequestOptions][] = [
    ['a CREATE of an unannotated workload', { operation: 'CREATE', object: workload() }],
    [
      'an UPDATE of an unannotated workload',
      { operation: 'UPDATE', object: workload(), oldObject: workload() },
    ],
    ['a dry-run of an unannotated workload', { dryRun: true, object: workload() }],
    [
      'a workload annotated with another value ("yes")',
      { object: workload({ annotations: { 'confighash.dev/enabled': 'yes' } }) },
    ],
    [
      'an UPDATE that removes the annotation',
      {
        operation: 'UPDATE',
        object: workload(),
        oldObject: workload({ annotations: optedIn }),
      },
    ],
  ];
  it.each(skippedRows)('%s: allowed, no patch, no lookup, not-handled', async (_n, options) => {
    const source = standardSource();
    const { result } = await reviewThere(source, options);
    expect(result).toMatchObject({ outcome: 'skipped', patch: [], skipCode: 'not-handled' });
    expect(source.calls).toEqual([]);
    expect(result.skipReason).toBe(
      'not handled: namespace shop handles annotated workloads only; this one is not annotated confighash.dev/enabled: "true"',
    );
  });

  it('an opted-out workload is skipped as opted out', async () => {
    const source = standardSource();
    const object = workload({ annotations: { 'confighash.dev/enabled': 'false' } });
    const { result } = await reviewThere(source, { object });
    expect(result).toMatchObject({ outcome: 'skipped', skipCode: 'not-handled' });
    expect(result.skipReason).toMatch(/^opted out/);
    expect(source.calls).toEqual([]);
  });

  it('a CREATE of an annotated workload is hashed as anywhere else', async () => {
    const source = standardSource();
    const object = workload({ annotations: optedIn });
    const there = await reviewThere(source, { operation: 'CREATE', object });
    const elsewhere = await review(source, { operation: 'CREATE', object });
    expect(there.result.outcome).toBe('patched');
    expect(templateAnnotationsOf(there.after)[HASH]).toMatch(/^[0-9a-f]{64}$/);
    expect(templateAnnotationsOf(there.after)).toEqual(templateAnnotationsOf(elsewhere.after));
  });

  it('annotating a never-hashed workload adopts it: nothing rolls', async () => {
    const source = standardSource();
    const { result, after } = await reviewThere(source, {
      operation: 'UPDATE',
      object: workload({ annotations: optedIn }),
      oldObject: workload(),
    });
    expect(result.outcome).toBe('adopted');
    expect(result.hashChanged).toBe(false);
    expect(templateAnnotationsOf(after)).toEqual({});
    expect(workloadAnnotationsOf(after)[ADOPTED_HASH]).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('dry-run', () => {
  it('is computed exactly as a real request', async () => {
    const source = standardSource();
    const old = await created(source);
    source.configMap('flags', { mode: 'slow', unrelated: 'x' });
    const real = await review(source, { operation: 'UPDATE', object: old, oldObject: old });
    const dry = await review(source, {
      operation: 'UPDATE',
      object: old,
      oldObject: old,
      dryRun: true,
    });
    expect(dry.result.patch).toEqual(real.result.patch);
    expect(dry.result.patch).not.toEqual([]);
  });
});

describe('key precision and include/exclude', () => {
  it('a change to an unreferenced key of a shared ConfigMap changes nothing', async () => {
    const source = standardSource();
    const old = await created(source);
    source.configMap('flags', { mode: 'fast', unrelated: 'changed' });
    const { result } = await review(source, { operation: 'UPDATE', object: old, oldObject: old });
    expect(result.patch).toEqual([]);
  });

  it('include adds an object the pod spec does not reference; exclude removes one', async () => {
    const source = standardSource().configMap('extra', { k: 'v' });
    const annotations = {
      'confighash.dev/include': 'configmap/extra',
      'confighash.dev/exclude': 'secret/db',
    };
    const { after } = await review(source, { object: workload({ annotations }) });
    expect(templateAnnotationsOf(after)[SOURCES]).toBe(
      'configmap/app-config,configmap/extra,configmap/flags',
    );
  });

  it('an unreadable include entry is ignored with a warning', async () => {
    const annotations = { 'confighash.dev/include': 'deployment/foo' };
    const { result, after } = await review(standardSource(), { object: workload({ annotations }) });
    expect(result.warnings).toEqual([
      "confighash: confighash.dev/include: ignored 'deployment/foo' (expected configmap/NAME or secret/NAME)",
    ]);
    expect(templateAnnotationsOf(after)[HASH]).toBeDefined();
  });
});

describe('warnings', () => {
  it('an unreadable rollout window is reported at write time, and the hash is still written', async () => {
    const annotations = { 'confighash.dev/rollout-window': 'weekdays 9-5' };
    const { result, after } = await review(standardSource(), { object: workload({ annotations }) });
    expect(result.warnings).toEqual([
      "confighash: rollout window 'weekdays 9-5': 'weekdays' is not a day or day range (Mon, Tue, … Sun)",
    ]);
    expect(templateAnnotationsOf(after)[HASH]).toBeDefined();
  });

  it('a valid rollout window gives no warning', async () => {
    const annotations = { 'confighash.dev/rollout-window': 'Mon-Fri 09:00-17:00 Europe/Berlin' };
    const { result } = await review(standardSource(), { object: workload({ annotations }) });
    expect(result.warnings).toEqual([]);
  });

  it('are cut to 120 characters and still name the object', async () => {
    const long = 'x'.repeat(200);
    const podSpec = { volumes: [{ name: 'c', configMap: { name: long } }], containers: [] };
    const { result } = await review(new MemorySource(), { object: workload({ podSpec }) });
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/^confighash: ConfigMap x+…$/);
    expectWellFormedWarnings(result);
  });

  it('are capped in number', async () => {
    const volumes = Array.from({ length: 30 }, (_, i) => ({
      name: `v${i}`,
      secret: { secretName: `s${i}` },
    }));
    const { result } = await review(new MemorySource(), {
      object: workload({ podSpec: { volumes, containers: [] } }),
    });
    expect(result.warnings).toHaveLength(10);
    expect(result.warnings[9]).toBe('confighash: and 21 more problems');
  });
});

it('reads every source once per review, in parallel', async () => {
  const source = standardSource();
  await review(source, {});
  expect([...source.calls].sort()).toEqual([
    'ConfigMap/app-config',
    'ConfigMap/flags',
    'Secret/db',
  ]);
});

it('does not rehash sources whose versions it has hashed, but notices a new version', async () => {
  const source = standardSource();
  const mutator = createMutator({
    configSource: source,
    hashKey: KEY,
    namespaces: everyNamespaceOptedIn,
  });
  const request: AdmissionRequest = admissionRequest();
  const first = await mutator.review(request, NO_DEADLINE);
  const second = await mutator.review(request, NO_DEADLINE);
  expect(second.patch).toEqual(first.patch);
  source.configMap('flags', { mode: 'other' });
  const third = await mutator.review(request, NO_DEADLINE);
  expect(third.patch).not.toEqual(first.patch);
});

// docs/design.md §2, §4: beside the hash a write gets or keeps, the versions it was computed
// from, which follow mode takes as evaluated (§6).
describe('hashed-versions', () => {
  /** The versions `object`'s annotation records, by source, when it holds for its hash and template. */
  function recordedVersions(
    object: Workload,
    key = KEY,
  ): Record<string, string | undefined> | undefined {
    const read = readWorkload(object, HANDLED_KINDS[0]!);
    const refs = findSources(read.template?.spec, read.annotations).sources;
    const hash = templateAnnotationsOf(object)[HASH] ?? read.annotations[ADOPTED_HASH];
    const made = { keyId: hashKeyId(key), hash };
    const versions = readHashedVersions(read.annotations[HASHED_VERSIONS], made, refs);
    return versions && Object.fromEntries(refs.map((ref, i) => [formatSource(ref), versions[i]]));
  }
  // standardSource's objects, as it numbers them.
  const READ_FIRST = { 'configmap/app-config': '1', 'secret/db': '2', 'configmap/flags': '3' };

  it('a CREATE records the version of every source it read, for the hash it wrote', async () => {
    const { after } = await review(standardSource(), { operation: 'CREATE' });
    expect(recordedVersions(after)).toEqual(READ_FIRST);
  });

  it('a write of its own output writes nothing', async () => {
    const source = standardSource();
    const first = await created(source);
    const { full } = await review(source, { operation: 'UPDATE', object: first, oldObject: first });
    expect(full.patch).toEqual([]);
    expect(full.outcome).toBe('unchanged');
  });

  it('a source written again with the same content: only the version moves, nothing rolls', async () => {
    const source = standardSource();
    const first = await created(source);
    source.configMap('flags', { mode: 'fast', unrelated: 'x' });
    const { full, after } = await review(source, {
      operation: 'UPDATE',
      object: first,
      oldObject: first,
    });
    expect(full.patch).toEqual([
      {
        op: 'replace',
        path: '/metadata/annotations/confighash.dev~1hashed-versions',
        value: expect.any(String),
      },
    ]);
    expect(full.hashChanged).toBe(false);
    expect(recordedVersions(after)).toEqual({ ...READ_FIRST, 'configmap/flags': '4' });
  });

  it('a write that keeps the previous hash (a lookup failed) keeps what it was computed from', async () => {
    const source = standardSource();
    const first = await created(source);
    source.configMap('app-config', { 'app.yaml': 'port: 9090' }).fail('Secret', 'db', 'timeout');
    const dropped = structuredClone(first) as { metadata: { annotations?: object } };
    delete dropped.metadata.annotations;
    const { after } = await review(source, {
      operation: 'UPDATE',
      object: dropped,
      oldObject: first,
    });
    expect(recordedVersions(after)).toEqual(READ_FIRST);
  });

  it('an adoption records them for the adopted hash', async () => {
    const neverHashed = workload();
    const { after } = await review(standardSource(), {
      operation: 'UPDATE',
      object: neverHashed,
      oldObject: neverHashed,
    });
    expect(templateAnnotationsOf(after)[HASH]).toBeUndefined();
    expect(recordedVersions(after)).toEqual(READ_FIRST);
  });

  it('a hash kept from a previous key keeps the record that key wrote: nothing to a reader of the new key', async () => {
    const source = standardSource();
    const old = await created(source);
    source.configMap('flags', { mode: 'fast', unrelated: 'x' }); // a version moved, no content
    const newKey = Buffer.alloc(32, 9);
    const { full, after } = await review(
      source,
      { operation: 'UPDATE', object: old, oldObject: old },
      { hashKey: newKey, previousHashKeys: [KEY] },
    );
    expect(full.patch).toEqual([]);
    expect(recordedVersions(after)).toEqual(READ_FIRST);
    expect(recordedVersions(after, newKey)).toBeUndefined();
  });

  it('an absent optional source is recorded as absent', async () => {
    const source = standardSource().delete('ConfigMap', 'flags');
    const optional = readingKeys({
      by: 'env key ref',
      kind: 'ConfigMap',
      name: 'flags',
      key: 'mode',
      optional: true,
    });
    const { after } = await review(source, {
      operation: 'CREATE',
      object: workload({ podSpec: optional }),
    });
    expect(recordedVersions(after)).toEqual({ 'configmap/flags': undefined });
  });

  it('a workload without sources has none', async () => {
    const source = standardSource();
    const first = await created(source);
    const bare = structuredClone(first) as { spec: { template: { spec: unknown } } };
    bare.spec.template.spec = { containers: [{ name: 'app', image: 'x' }] };
    const { after } = await review(source, { operation: 'UPDATE', object: bare, oldObject: first });
    expect(workloadAnnotationsOf(after)[HASHED_VERSIONS]).toBeUndefined();
  });
});
