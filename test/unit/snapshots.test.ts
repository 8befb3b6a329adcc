// docs/design.md §13 against the core use case: a snapshot workload's writes, its pins and what
// fails. The ConfigMaps come from an in-memory ConfigSource and snapshots go to an in-memory
// store; test/e2e/snapshots.test.ts runs the same story on the real control plane.

import { describe, expect, it } from 'vitest';
import { createMutator } from '../../src/admission/mutate.js';
import { createEvaluator } from '../../src/evaluate/index.js';
import { decideReconcile } from '../../src/follow/reconcile.js';
import { readReferences } from '../../src/follow/references.js';
import { liveView, readListed, snapshotName } from '../../src/snapshot/index.js';
import {
  HANDLED_KINDS,
  HASH,
  HASHED_VERSIONS,
  PINNED_WARNING,
  readWorkload,
  SNAPSHOT,
  SNAPSHOT_OF,
  SNAPSHOTS,
} from '../../src/workload/index.js';
import { applyPatch } from '../support/json-patch.js';
import { MemorySnapshots } from '../support/memory-snapshots.js';
import { MemorySource } from '../support/memory-source.js';
import { everyNamespaceOptedIn } from '../support/namespaces.js';
import { admissionRequest, NAMESPACE, THREE_SOURCES, workload } from '../support/workloads.js';

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 9);
const NO_DEADLINE = new AbortController().signal;
const UID = 'uid-of-web';
// biome-ignore lint/suspicious/noExplicitAny: workload objects, walked by the paths the rows name.
type Json = Record<string, any>;

function sources(appYaml = 'port: 8080'): MemorySource {
  return new MemorySource()
    .configMap('app-config', { 'app.yaml': appYaml })
    .secret('db', { password: 'hunter2' })
    .configMap('flags', { mode: 'fast', unrelated: 'x' });
}

interface Cluster {
  source: MemorySource;
  store: MemorySnapshots | undefined;
  hashKey?: Buffer;
  previousHashKeys?: Buffer[];
}

async function write(
  cluster: Cluster,
  object: Json,
  oldObject?: Json,
  options: { dryRun?: boolean } = {},
) {
  const mutator = createMutator({
    configSource: cluster.source,
    hashKey: cluster.hashKey ?? KEY,
    ...(cluster.previousHashKeys ? { previousHashKeys: cluster.previousHashKeys } : {}),
    namespaces: everyNamespaceOptedIn,
    ...(cluster.store ? { snapshots: cluster.store } : {}),
  });
  const request = admissionRequest({
    object,
    ...(oldObject ? { oldObject, operation: 'UPDATE' } : {}),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const result = await mutator.review(request, NO_DEADLINE);
  const after = applyPatch(structuredClone(object) as never, result.patch as never) as Json;
  return { result, after };
}

/** The manifest as applied: live names, the stored object's annotations and uid. */
function applied(stored?: Json, image?: string): Json {
  const object = workload({
    annotations: { [SNAPSHOT]: 'true', ...stored?.metadata.annotations },
    ...(stored ? { templateAnnotations: stored.spec.template.metadata.annotations } : {}),
    ...(image ? { image } : {}),
  }) as Json;
  if (stored) object.metadata.uid = UID;
  return object;
}

/** `stored` with another template, as a write that changes the template alone. */
function withTemplate(stored: Json, template: Json): Json {
  const object = structuredClone(stored);
  object.spec.template = structuredClone(template);
  return object;
}

/**
 * What `kubectl rollout undo` to `revision` writes over `stored`: that revision's template, and
 * its annotations, which its ReplicaSet kept from the workload of its day (kubectl's rollback).
 */
function undo(stored: Json, revision: Json): Json {
  const object = withTemplate(stored, templateOf(revision));
  object.metadata.annotations = structuredClone(revision.metadata.annotations);
  return object;
}

const templateOf = (object: Json) => object.spec.template;
const podSpec = (object: Json) => templateOf(object).spec;
const volumeName = (object: Json) => podSpec(object).volumes[0].configMap.name;
const keyRefName = (object: Json) =>
  podSpec(object).containers[0].env[0].valueFrom.configMapKeyRef.name;
const secretName = (object: Json) => podSpec(object).containers[0].envFrom[0].secretRef.name;
const listed = (object: Json) => readListed(templateOf(object).metadata.annotations[SNAPSHOTS]);

/** v1 written by a CREATE, then stored with a uid. */
async function firstRevision(cluster: Cluster) {
  const { result, after } = await write(cluster, applied());
  const stored = structuredClone(after);
  stored.metadata.uid = UID;
  return { result, stored };
}

describe('a snapshot workload, written (docs/design.md §13)', () => {
  it('names a snapshot of each ConfigMap it reads, holding only the keys it selects; Secrets stay live', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const { result, stored } = await firstRevision(cluster);
    expect(result.outcome).toBe('patched');
    expect(volumeName(stored)).toMatch(/^app-config-snap-[0-9a-f]{16}$/);
    expect(keyRefName(stored)).toMatch(/^flags-snap-[0-9a-f]{16}$/);
    expect(secretName(stored)).toBe('db');
    expect([...listed(stored)]).toEqual([
      ['app-config', volumeName(stored)],
      ['flags', keyRefName(stored)],
    ]);
    const flags = cluster.store.objects.get(`${NAMESPACE}/${keyRefName(stored)}`)!.object as Json;
    expect(flags).toMatchObject({
      immutable: true,
      data: { mode: 'fast' },
      metadata: {
        labels: { [SNAPSHOT]: 'true' },
        annotations: { [SNAPSHOT_OF]: 'configmap/flags' },
      },
    });
    expect(flags.data.unrelated).toBeUndefined();
    // No uid on a CREATE: the keeper gives it its owners.
    expect(flags.metadata.ownerReferences).toBeUndefined();
  });

  it('carries the hash the same workload gets without snapshots', async () => {
    const { stored } = await firstRevision({ source: sources(), store: new MemorySnapshots() });
    const plain = await write({ source: sources(), store: undefined }, workload() as Json);
    expect(templateOf(stored).metadata.annotations[HASH]).toBe(
      templateOf(plain.after).metadata.annotations[HASH],
    );
  });

  it('an apply of the same content names the same snapshots: the template is unchanged, and the workload becomes an owner', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const { stored } = await firstRevision(cluster);
    cluster.store.calls.length = 0;
    const { after } = await write(cluster, applied(stored), stored);
    expect(templateOf(after)).toEqual(templateOf(stored));
    expect(cluster.store.calls.filter((call) => call.startsWith('create'))).toEqual([]);
    expect(cluster.store.calls).toContain(`owner ${volumeName(stored)} ${UID}`);
  });

  it('new content names new snapshots, and the old ones stay', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const { stored } = await firstRevision(cluster);
    cluster.source.configMap('app-config', { 'app.yaml': 'port: 9090' });
    const { result, after } = await write(cluster, applied(stored), stored);
    expect(result.hashChanged).toBe(true);
    expect(volumeName(after)).not.toBe(volumeName(stored));
    expect(keyRefName(after)).toBe(keyRefName(stored));
    expect(cluster.store.names()).toContain(volumeName(stored));
    const made = cluster.store.objects.get(`${NAMESPACE}/${volumeName(after)}`)!.object as Json;
    expect(made.data).toEqual({ 'app.yaml': 'port: 9090' });
    expect(made.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: UID },
    ]);
  });

  it('a dry run creates nothing and names what a write would', async () => {
    const store = new MemorySnapshots();
    const dry = await write({ source: sources(), store }, applied(), undefined, { dryRun: true });
    expect(store.names()).toEqual([]);
    expect(dry.result.warnings.join('\n')).toContain('would be created');
    const real = await write({ source: sources(), store }, applied());
    expect(templateOf(dry.after)).toEqual(templateOf(real.after));
  });
});

describe('a rollback pins (docs/design.md §13)', () => {
  async function rolledForward() {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const v1 = (await firstRevision(cluster)).stored;
    cluster.source.configMap('app-config', { 'app.yaml': 'port: 9090' });
    const v2 = (await write(cluster, applied(v1), v1)).after;
    return { cluster, v1, v2 };
  }

  it('`rollout undo` to v1 while the content is v2: the template is kept as it is, and says so', async () => {
    const { cluster, v1, v2 } = await rolledForward();
    const { result, after } = await write(cluster, undo(v2, v1), v2);
    expect(templateOf(after)).toEqual(templateOf(v1));
    expect(result.warnings[0]).toBe(PINNED_WARNING);
    // The record v1's ReplicaSet brought back is v2's again: the content last rolled forward to.
    expect(after.metadata.annotations[HASHED_VERSIONS]).toBe(
      v2.metadata.annotations[HASHED_VERSIONS],
    );
    const { result: next } = await write(cluster, structuredClone(after), after);
    expect(next.patch).toEqual([]);
  });

  it('a write that changes the image keeps the pin', async () => {
    const { cluster, v1, v2 } = await rolledForward();
    const pinned = (await write(cluster, undo(v2, v1), v2)).after;
    const imageBump = structuredClone(pinned);
    podSpec(imageBump).containers[0].image = 'registry.example/app:2';
    const { result } = await write(cluster, imageBump, pinned);
    expect(result.patch).toEqual([]);
  });

  it('an apply of the manifest rolls forward, to the template v2 had', async () => {
    const { cluster, v1, v2 } = await rolledForward();
    const pinned = (await write(cluster, undo(v2, v1), v2)).after;
    const { after } = await write(cluster, applied(pinned), pinned);
    expect(templateOf(after)).toEqual(templateOf(v2));
  });

  it('content the workload has not rolled before rolls it forward, on any write', async () => {
    const { cluster, v1, v2 } = await rolledForward();
    const pinned = (await write(cluster, undo(v2, v1), v2)).after;
    cluster.source.configMap('app-config', { 'app.yaml': 'port: 7070' });
    const { result, after } = await write(cluster, structuredClone(pinned), pinned);
    expect(result.hashChanged).toBe(true);
    expect(volumeName(after)).not.toBe(volumeName(v1));
    expect(volumeName(after)).not.toBe(volumeName(v2));
    expect(after.metadata.annotations[HASHED_VERSIONS]).not.toBe(
      pinned.metadata.annotations[HASHED_VERSIONS],
    );
  });

  it('a source that cannot be read keeps the pinned template as it is', async () => {
    const { cluster, v1, v2 } = await rolledForward();
    cluster.source.fail('ConfigMap', 'flags', 'timeout');
    const { result } = await write(cluster, undo(v2, v1), v2);
    expect(result.patch).toEqual([]);
    expect(result.outcome).toBe('kept-old');
  });

  it('a key rotation keeps a template whose hash a previous key made', async () => {
    const { cluster, v2 } = await rolledForward();
    const rotated = { ...cluster, hashKey: OTHER_KEY, previousHashKeys: [KEY] };
    const { result } = await write(rotated, structuredClone(v2), v2);
    expect(result.patch).toEqual([]);
  });
});

describe('follow mode decides as the webhook writes (docs/design.md §13)', () => {
  async function decide(cluster: Cluster, object: Json) {
    const workload = readWorkload(object, HANDLED_KINDS[0]!);
    const view = liveView(workload.template, workload.annotations);
    const evaluate = createEvaluator({ configSource: cluster.source, hashKey: KEY });
    const live = { template: view.template, annotations: workload.annotations };
    return decideReconcile(workload, await evaluate(live, NAMESPACE, NO_DEADLINE), view);
  }

  it('indexes a snapshot workload by its sources, not by its copies', async () => {
    const { stored } = await firstRevision({ source: sources(), store: new MemorySnapshots() });
    const references = readReferences(stored, HANDLED_KINDS[0]!, 'key-id');
    expect(references?.sources).toEqual(['configmap/app-config', 'secret/db', 'configmap/flags']);
  });

  it('leaves an undo undone, and rolls it forward when the content moves on', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const v1 = (await firstRevision(cluster)).stored;
    cluster.source.configMap('app-config', { 'app.yaml': 'port: 9090' });
    const v2 = (await write(cluster, applied(v1), v1)).after;
    expect(await decide(cluster, v2)).toEqual({ touch: false, why: 'up-to-date' });
    const pinned = (await write(cluster, undo(v2, v1), v2)).after;
    expect(await decide(cluster, pinned)).toEqual({ touch: false, why: 'pinned' });
    cluster.source.configMap('app-config', { 'app.yaml': 'port: 7070' });
    expect(await decide(cluster, pinned)).toEqual({ touch: true, why: 'config-changed' });
  });
});

describe('what fails, and what is kept (docs/design.md §13)', () => {
  it('a create refused leaves that source live and says why; the write goes on', async () => {
    const store = new MemorySnapshots();
    store.createFailure = 'forbidden: exceeded quota';
    const { result, after } = await write({ source: sources(), store }, applied());
    expect(result.outcome).toBe('patched');
    expect(volumeName(after)).toBe('app-config');
    expect(templateOf(after).metadata.annotations[SNAPSHOTS]).toBeUndefined();
    expect(result.warnings.join('\n')).toContain(
      'no snapshot of configmap/app-config (forbidden: exceeded quota)',
    );
    expect(result.snapshots).toEqual(['failed', 'failed']);
  });

  it('a name taken by an object that is not its snapshot is never used', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const { stored } = await firstRevision(cluster);
    const taken = volumeName(stored);
    const store = new MemorySnapshots().put(NAMESPACE, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: taken, namespace: NAMESPACE },
      data: { 'app.yaml': 'port: 8080' },
    });
    const { result, after } = await write({ source: sources(), store }, applied());
    expect(volumeName(after)).toBe('app-config');
    expect(result.warnings.join('\n')).toContain(
      'name taken by an object that is not its snapshot',
    );
  });

  it('a pinned snapshot deleted by hand is made again while its source still holds that content', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const { stored } = await firstRevision(cluster);
    cluster.store.delete(NAMESPACE, volumeName(stored));
    const { result } = await write(cluster, structuredClone(stored), stored);
    expect(result.patch).toEqual([]);
    expect(cluster.store.names()).toContain(volumeName(stored));
  });

  it('one deleted after its source changed is reported: this revision cannot start new pods', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const v1 = (await firstRevision(cluster)).stored;
    cluster.source.configMap('app-config', { 'app.yaml': 'port: 9090' });
    const v2 = (await write(cluster, applied(v1), v1)).after;
    cluster.store.delete(NAMESPACE, volumeName(v1));
    const { result, after } = await write(cluster, undo(v2, v1), v2);
    expect(templateOf(after)).toEqual(templateOf(v1));
    expect(result.warnings.join('\n')).toContain(
      `snapshot ${volumeName(v1)} of configmap/app-config is gone and its content changed`,
    );
  });

  it('without snapshots in the install, the references stay live and the write says so', async () => {
    const { result, after } = await write({ source: sources(), store: undefined }, applied());
    expect(volumeName(after)).toBe('app-config');
    expect(result.warnings.join('\n')).toContain('snapshots are not enabled in this install');
  });

  it('a workload no longer annotated goes back to its live names', async () => {
    const cluster = { source: sources(), store: new MemorySnapshots() };
    const { stored } = await firstRevision(cluster);
    const unannotated = structuredClone(stored);
    delete unannotated.metadata.annotations[SNAPSHOT];
    const { after } = await write(cluster, unannotated, stored);
    expect(podSpec(after)).toEqual(THREE_SOURCES);
    expect(templateOf(after).metadata.annotations[SNAPSHOTS]).toBeUndefined();
  });

  it('a workload not annotated is written as before, with no snapshot asked for', async () => {
    const store = new MemorySnapshots();
    const { after } = await write({ source: sources(), store }, workload() as Json);
    expect(podSpec(after)).toEqual(THREE_SOURCES);
    expect(store.calls).toEqual([]);
  });
});

describe('snapshot names', () => {
  it('cut a long source to fit 253 characters, ending in a letter or digit', () => {
    const name = snapshotName(`${'a'.repeat(230)}.b`, '0123456789abcdef0123');
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toBe(`${'a'.repeat(230)}-snap-0123456789abcdef`);
  });
});
