// Snapshots on a real control plane (docs/design.md §13): `kubectl rollout undo` brings back the
// config a revision rolled with. A Deployment reads ConfigMap `app` three ways (envFrom, an env
// key ref, a volume) and Secret `app-secret`; config v1, then v2 applied and rolled, then undo:
// the template names v1's snapshot everywhere, on the first ReplicaSet, and stays so while
// follow mode resyncs; an apply of the manifest rolls forward onto the second. A dry run creates
// nothing, no Secret is copied, and a deleted Deployment leaves no snapshot.

import { describe, expect, it } from 'vitest';
import { SNAPSHOT, SNAPSHOT_OF, SNAPSHOTS } from '../../src/workload/annotations.js';
import { configMap, e2eFile, namespace, secret, waitUntil, yamlDocuments } from '../support/e2e.js';
import { runConfighash } from '../support/process.js';

const file = e2eFile(['--snapshots', '--snapshot-resync=1s', '--snapshot-grace=0s'], {
  follow: [
    '--lease-namespace=default',
    '--follow-debounce=1s',
    '--follow-min-interval=1s',
    '--follow-resync=2s',
  ],
});
let counter = 0;

// biome-ignore lint/suspicious/noExplicitAny: API objects, read by the paths the rows name.
type Obj = Record<string, any>;

function deployment(ns: string): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: ns, annotations: { [SNAPSHOT]: 'true' } },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          volumes: [{ name: 'config', configMap: { name: 'app' } }],
          containers: [
            {
              name: 'app',
              image: 'registry.example/app:1',
              envFrom: [{ configMapRef: { name: 'app' } }, { secretRef: { name: 'app-secret' } }],
              env: [
                { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'app', key: 'LEVEL' } } },
              ],
              volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
            },
          ],
        },
      },
    },
  };
}

/** Every name the template's three ConfigMap references give, and the Secret's. */
function namesIn(template: Obj) {
  const container = template.spec.containers[0];
  return {
    envFrom: container.envFrom[0].configMapRef.name as string,
    keyRef: container.env[0].valueFrom.configMapKeyRef.name as string,
    volume: template.spec.volumes[0].configMap.name as string,
    secret: container.envFrom[1].secretRef.name as string,
  };
}

async function apply(...objects: Obj[]): Promise<string> {
  return applyWith([], ...objects);
}

async function applyWith(flags: string[], ...objects: Obj[]): Promise<string> {
  const result = await file.e2e.kubectl(
    ['apply', '--server-side', ...flags, '-f', '-'],
    yamlDocuments(...objects),
  );
  expect(result.code, result.stderr).toBe(0);
  return result.stderr;
}

async function getJson(args: string[]): Promise<Obj> {
  return JSON.parse(await file.e2e.k([...args, '-o', 'json']));
}

async function template(ns: string): Promise<Obj> {
  return (await getJson(['get', '-n', ns, 'deployment', 'web'])).spec.template;
}

async function snapshots(ns: string): Promise<Obj[]> {
  return (await getJson(['get', '-n', ns, 'configmap', '-l', `${SNAPSHOT}=true`])).items;
}

/** `confighash ARGS` against the file's control plane: its exit code and stdout. */
async function confighash(args: string[], input?: string) {
  const running = runConfighash(
    args,
    { KUBECONFIG: file.e2e.controlPlane.kubeconfig, NO_COLOR: '1' },
    input,
  );
  const code = await running.exited;
  return { code, stdout: running.output.stdout, stderr: running.output.stderr };
}

/** The ReplicaSets, once the controller has seen the Deployment's latest generation. */
async function replicaSets(ns: string): Promise<Obj[]> {
  await file.api.revision(ns, 'web');
  return (await getJson(['get', '-n', ns, 'replicaset'])).items;
}

/** The one ReplicaSet whose template is the Deployment's now. */
async function currentReplicaSet(ns: string): Promise<Obj> {
  const now = await template(ns);
  const sets = await replicaSets(ns);
  const current = sets.filter(({ spec }) => {
    const { 'pod-template-hash': _, ...labels } = spec.template.metadata.labels;
    return (
      JSON.stringify({ ...spec.template, metadata: { ...spec.template.metadata, labels } }) ===
      JSON.stringify(now)
    );
  });
  expect(current).toHaveLength(1);
  return current[0]!;
}

/** v1 created, v2 applied and rolled: the namespace, and the two templates. */
async function twoRevisions(label: 'true' | 'follow') {
  const ns = `snapshots-${++counter}`;
  await apply(namespace(ns, label) as Obj);
  await apply(
    configMap(ns, 'app', { LEVEL: 'v1', 'app.yaml': 'level: v1' }) as Obj,
    secret(ns, 'app-secret', { TOKEN: 't' }) as Obj,
    deployment(ns),
  );
  const v1 = await template(ns);
  await file.api.revision(ns, 'web');
  await apply(configMap(ns, 'app', { LEVEL: 'v2', 'app.yaml': 'level: v2' }) as Obj);
  if (label === 'true') await apply(deployment(ns));
  await waitUntil(
    async () => namesIn(await template(ns)).volume !== namesIn(v1).volume,
    'v2 rolled',
  );
  const v2 = await template(ns);
  expect((await replicaSets(ns)).length).toBe(2);
  return { ns, v1, v2 };
}

describe('a Deployment annotated confighash.dev/snapshot (docs/design.md §13)', () => {
  it('names one snapshot of v1 in envFrom, the key ref and the volume; the Secret stays live and is never copied', async () => {
    const { ns, v1 } = await twoRevisions('true');
    const names = namesIn(v1);
    expect(names.envFrom).toMatch(/^app-snap-[0-9a-f]{16}$/);
    expect([names.keyRef, names.volume]).toEqual([names.envFrom, names.envFrom]);
    expect(names.secret).toBe('app-secret');
    expect(v1.metadata.annotations[SNAPSHOTS]).toBe(`configmap/app=${names.envFrom}`);
    const made = await snapshots(ns);
    expect(made.map((o) => o.metadata.annotations[SNAPSHOT_OF])).toEqual([
      'configmap/app',
      'configmap/app',
    ]);
    expect(made.every((o) => o.immutable === true)).toBe(true);
    const secrets = (await getJson(['get', '-n', ns, 'secret'])).items as Obj[];
    expect(secrets.map((o) => o.metadata.name)).toEqual(['app-secret']);
  });

  it('`kubectl rollout undo` brings back v1 on the first ReplicaSet; an apply of the manifest rolls forward onto the second', async () => {
    const { ns, v1, v2 } = await twoRevisions('true');
    const first = (await replicaSets(ns)).find(
      ({ spec }) => namesIn(spec.template).volume === namesIn(v1).volume,
    );
    const undo = await file.e2e.kubectl(['rollout', 'undo', '-n', ns, 'deployment/web']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stderr).toContain('pinned to the config of an earlier revision by a rollback');
    expect(namesIn(await template(ns))).toEqual(namesIn(v1));
    expect((await replicaSets(ns)).length).toBe(2);
    expect((await currentReplicaSet(ns)).metadata.uid).toBe(first!.metadata.uid);
    // explain names what the pods read, and why nothing rolls it forward.
    const explained = await confighash(['explain', '-n', ns, 'deployment/web', '-o', 'json']);
    expect(explained.code, explained.stderr).toBe(0);
    const explanation = JSON.parse(explained.stdout);
    expect(explanation.pinned).toBe(true);
    expect(explanation.snapshots).toEqual([
      { source: 'configmap/app', snapshot: namesIn(v1).volume },
    ]);
    expect(explanation.sources.map((source: Obj) => source.ref)).toEqual([
      'configmap/app',
      'secret/app-secret',
    ]);
    // kubectl's undo copied v1's ReplicaSet's annotations onto the Deployment; the pin holds
    // across the next write all the same.
    await file.e2e.k(['set', 'image', '-n', ns, 'deployment/web', 'app=registry.example/app:2']);
    expect(namesIn(await template(ns))).toEqual(namesIn(v1));
    // The snapshot holds v1, whatever the live ConfigMap holds now.
    const pinned = await getJson(['get', '-n', ns, 'configmap', namesIn(v1).volume]);
    expect(pinned.data).toEqual({ LEVEL: 'v1', 'app.yaml': 'level: v1' });

    // The undo took the names' fields from the server-side applier: its next apply forces them back.
    await applyWith(['--force-conflicts'], deployment(ns));
    expect(namesIn(await template(ns))).toEqual(namesIn(v2));
  });

  it('an edit of the live ConfigMap leaves the current ReplicaSet on its snapshot', async () => {
    const { ns, v2 } = await twoRevisions('true');
    await apply(configMap(ns, 'app', { LEVEL: 'v3', 'app.yaml': 'level: v3' }) as Obj);
    const current = await currentReplicaSet(ns);
    expect(namesIn(current.spec.template)).toEqual(namesIn(v2));
    const held = await getJson(['get', '-n', ns, 'configmap', namesIn(v2).volume]);
    expect(held.data.LEVEL).toBe('v2');
  });

  it('plan names the snapshots an apply makes and the revision an undo after it restores', async () => {
    const { ns } = await twoRevisions('true');
    const manifests = yamlDocuments(
      configMap(ns, 'app', { LEVEL: 'v3', 'app.yaml': 'level: v3' }) as Obj,
      deployment(ns),
    );
    const planned = await confighash(['plan', '-f', '-', '-o', 'json'], manifests);
    expect(planned.code, planned.stderr).toBe(1);
    const [web] = JSON.parse(planned.stdout).items as Obj[];
    expect(web!.verdict).toBe('roll');
    expect(web!.reasons).toContain(
      'new snapshots of configmap/app; `kubectl rollout undo` after it brings back revision 2, with the config it reads now',
    );
  });

  it('a dry run of the next write creates nothing', async () => {
    const { ns } = await twoRevisions('true');
    await apply(configMap(ns, 'app', { LEVEL: 'v3', 'app.yaml': 'level: v3' }) as Obj);
    const before = (await snapshots(ns)).map((o) => o.metadata.name);
    const dry = await file.e2e.kubectl(
      ['apply', '--server-side', '--dry-run=server', '-f', '-'],
      yamlDocuments(deployment(ns)),
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain('would be created');
    const diff = await file.e2e.kubectl(
      ['diff', '--server-side', '-f', '-'],
      yamlDocuments(deployment(ns)),
    );
    expect(diff.code).toBe(1); // differences: v3's snapshot name
    expect((await snapshots(ns)).map((o) => o.metadata.name)).toEqual(before);
  });

  it('in a follow namespace an undo stays undone across resyncs, and new content rolls it forward', async () => {
    const { ns, v1 } = await twoRevisions('follow');
    const undo = await file.e2e.kubectl(['rollout', 'undo', '-n', ns, 'deployment/web']);
    expect(undo.code, undo.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 5_000)); // two resyncs of 2 s
    expect(namesIn(await template(ns))).toEqual(namesIn(v1));
    expect((await replicaSets(ns)).length).toBe(2);
    await apply(configMap(ns, 'app', { LEVEL: 'v3', 'app.yaml': 'level: v3' }) as Obj);
    await waitUntil(async () => (await replicaSets(ns)).length === 3, 'v3 rolled by follow mode');
  });

  it('a deleted Deployment leaves no snapshot', async () => {
    const { ns } = await twoRevisions('true');
    expect((await snapshots(ns)).length).toBe(2);
    await file.e2e.k(['delete', '-n', ns, 'deployment', 'web', '--wait']);
    await waitUntil(async () => (await snapshots(ns)).length === 0, 'the snapshots collected');
  });
});
