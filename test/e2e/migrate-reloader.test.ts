// docs/migrate.md "Only the workloads Reloader managed" on a real control plane: a namespace
// of Deployments, some annotated for Reloader (`reloader.stakater.com/auto`,
// `configmap.reloader.stakater.com/reload`), some not, migrated by the guide's steps — the
// namespace labelled follow and annotated-only in one command, each Reloader-managed workload
// annotated `confighash.dev/enabled: "true"` with Reloader's annotation removed in one write.
// Afterwards the migrated ones are adopted (no new ReplicaSet), the others carry nothing of
// confighash, and a ConfigMap change rolls exactly the migrated workloads that read it.
// No Reloader runs here: its annotations are what the guide rewrites.

import { describe, expect, it } from 'vitest';
import { LOCAL_FOLLOW_ARGS } from '../../tools/cluster/main.js';
import { configMap, e2eFile, namespace, waitUntil, yamlDocuments } from '../support/e2e.js';

const NS = 'migrate-reloader';

/**
 * A Deployment mounting ConfigMap `reads`, with Reloader's annotations (or none). No replicas,
 * and no canaries (--follow-canaries=0): with no kubelet here no canary could prove a change,
 * and two migrated workloads read `shared` (canary-first fan-out has its own file,
 * canary.test.ts).
 */
function deployment(name: string, reads: string, annotations?: Record<string, string>): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          volumes: [{ name: 'config', configMap: { name: reads } }],
          containers: [
            {
              name: 'app',
              image: 'registry.example/app:1',
              volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
            },
          ],
        },
      },
    },
  };
}

/** Name → the ConfigMap it reads and the Reloader annotation it has (undefined: not managed). */
const WORKLOADS: Record<string, { reads: string; reloader?: [string, string] }> = {
  'auto-shared': { reads: 'shared', reloader: ['reloader.stakater.com/auto', 'true'] },
  'auto-other': { reads: 'other', reloader: ['reloader.stakater.com/auto', 'true'] },
  'named-shared': {
    reads: 'shared',
    reloader: ['configmap.reloader.stakater.com/reload', 'shared'],
  },
  'plain-shared': { reads: 'shared' },
  'plain-other': { reads: 'other' },
};
const MANAGED = Object.keys(WORKLOADS).filter((name) => WORKLOADS[name]!.reloader);
const UNMANAGED = Object.keys(WORKLOADS).filter((name) => !WORKLOADS[name]!.reloader);

const file = e2eFile([], {
  follow: [...LOCAL_FOLLOW_ARGS, '--follow-canaries=0'],
  async setup({ e2e }) {
    await e2e.k(
      ['apply', '-f', '-'],
      yamlDocuments(
        namespace(NS),
        configMap(NS, 'shared', { 'app.yaml': 'v: 1' }),
        configMap(NS, 'other', { 'app.yaml': 'v: 1' }),
        ...Object.entries(WORKLOADS).map(([name, { reads, reloader }]) =>
          deployment(name, reads, reloader ? { [reloader[0]]: reloader[1] } : undefined),
        ),
      ),
    );
  },
});

async function revisions(): Promise<Record<string, number>> {
  const entries = await Promise.all(
    Object.keys(WORKLOADS).map(async (name) => [name, await file.api.revision(NS, name)] as const),
  );
  return Object.fromEntries(entries);
}

/** Every `confighash.dev/` annotation of the workload and of its pod template. */
async function ours(name: string): Promise<string[]> {
  const object = await file.api.get(NS, 'deployment', name);
  return [
    ...Object.keys(object.metadata.annotations ?? {}),
    ...Object.keys(object.spec.template.metadata?.annotations ?? {}),
  ].filter((key) => key.startsWith('confighash.dev/'));
}

/** confighash's Events about one workload (follow mode records one per touch). */
async function confighashEvents(name: string): Promise<number> {
  const list = JSON.parse(
    await file.e2e.k(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json']),
  ) as { items: { reportingController?: string; regarding?: { name?: string } }[] };
  return list.items.filter(
    (event) => event.regarding?.name === name && event.reportingController?.includes('confighash'),
  ).length;
}

describe('migrating from Reloader workload by workload', () => {
  it('adopts exactly the workloads Reloader managed, rolls nothing, then rolls only migrated readers of a change', async () => {
    const { k } = file.e2e;
    const before = await revisions();
    expect(Object.values(before)).toEqual([1, 1, 1, 1, 1]);

    // The guide's steps. Both labels in one write: the namespace is never "every workload".
    await k([
      'label',
      'namespace',
      NS,
      'confighash.dev/enabled=follow',
      'confighash.dev/workloads=annotated',
    ]);
    for (const name of MANAGED) {
      const [key] = WORKLOADS[name]!.reloader!;
      await k(['annotate', '-n', NS, 'deployment', name, 'confighash.dev/enabled=true', `${key}-`]);
    }

    for (const name of MANAGED) {
      const object = await file.api.get(NS, 'deployment', name);
      const annotations = object.metadata.annotations ?? {};
      expect(annotations['confighash.dev/adopted-hash']).toMatch(/^[0-9a-f]{64}$/);
      expect(Object.keys(annotations).filter((key) => key.includes('reloader'))).toEqual([]);
      expect(await file.api.hash(NS, 'deployment', name)).toBeUndefined();
    }
    // A write of an unmanaged workload, as its owners keep making them: the webhook leaves it alone.
    await k(['annotate', '-n', NS, 'deployment', 'plain-other', 'team=payments']);
    for (const name of UNMANAGED) expect(await ours(name)).toEqual([]);
    expect(await revisions()).toEqual(before);

    // A change of `shared`, out of band: follow mode touches the migrated readers only.
    await k([
      'patch',
      'configmap',
      'shared',
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"data":{"app.yaml":"v: 2"}}',
    ]);
    await waitUntil(
      async () =>
        (await file.api.hash(NS, 'deployment', 'auto-shared')) !== undefined &&
        (await file.api.hash(NS, 'deployment', 'named-shared')) !== undefined,
      'the migrated readers of shared to be touched',
    );
    expect(await revisions()).toEqual({
      'auto-shared': 2,
      'auto-other': 1,
      'named-shared': 2,
      'plain-shared': 1,
      'plain-other': 1,
    });
    // By now the follower has listed the namespace and evaluated what it handles.
    for (const name of UNMANAGED) {
      expect(await ours(name)).toEqual([]);
      expect(await confighashEvents(name)).toBe(0);
    }
    expect(await confighashEvents('auto-shared')).toBe(1);
  });
});
