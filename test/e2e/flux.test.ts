// docs/design.md §5's Flux row on a real kube-apiserver and deployment controller:
// each reconcile is tools/flux-apply — Flux's apply library (fluxcd/pkg/ssa)
// called as kustomize-controller calls it (ApplyAllStaged: dry-run every object,
// then apply, in order, those whose dry-run differs from the live object). A
// "commit" is a new content of the reconciled directory. A rollout is a new
// ReplicaSet and `deployment.kubernetes.io/revision`, made by the real controller.
//
// Measured: in a `true` namespace a config-only commit rolls one reconcile late —
// the Deployment's dry-run runs before the ConfigMap is applied, so the webhook
// hashes the old config, the dry-run matches the live object, and the Deployment
// is not written; the next reconcile (same commit) writes it. In a `follow`
// namespace follow mode rolls it at once. Config + image in one commit rolls once.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_FOLLOW_ARGS } from '../../tools/cluster/main.js';
import {
  configMap,
  e2eFile,
  namespace,
  secret,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { fluxReconcile } from '../support/flux.js';
import { followLogEntries, judgedEveryChange } from '../support/follow-log.js';

let repos: string;
let counter = 0;
// Follow mode on, for the follow namespaces (a true namespace is admission only either way).
const file = e2eFile([], {
  follow: LOCAL_FOLLOW_ARGS,
  async setup() {
    repos = await mkdtemp(join(tmpdir(), 'confighash-flux-'));
  },
  async teardown() {
    if (repos) await rm(repos, { recursive: true, force: true });
  },
});

/** Follow mode's debounce (LOCAL_FOLLOW_ARGS), less the time between its log line of a change and its timer. */
const VERDICT_NOT_BEFORE_MS = 2_000 - 250;

/**
 * Waits until follow mode has seen a change of Deployment `web`'s sources since `since` and
 * judged each change it saw after its debounce; returns those verdicts. A roll it owed would
 * be its verdict, so what is asked after this sees it.
 */
async function followVerdictsSince(ns: string, since: number): Promise<readonly string[]> {
  let verdicts: readonly string[] = [];
  await waitUntil(async () => {
    const log = await readFile(join(file.e2e.dir, 'confighash-follow.log'), 'utf8');
    const judged = judgedEveryChange(followLogEntries(log), {
      namespace: ns,
      deployment: 'web',
      since,
      verdictNotBeforeMs: VERDICT_NOT_BEFORE_MS,
    });
    verdicts = judged?.verdicts ?? [];
    return judged !== undefined && judged.changesSeen > 0;
  }, `follow mode's verdict on the change in ${ns}`);
  return verdicts;
}

/** A Kustomization's path in a Git repository: what the commits write, what a reconcile applies. */
interface FluxApp {
  readonly ns: string;
  /** Writes the app's manifests as a commit would. */
  commit(config: string, image?: string): Promise<void>;
  /** One reconcile of the current commit; the actions on the ConfigMap and the Deployment. */
  reconcile(): Promise<{ configMap?: string; deployment?: string }>;
  revision(): Promise<number>;
}

async function fluxApp(label: 'true' | 'follow'): Promise<FluxApp> {
  const ns = `flux-${label}-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, label)));
  const dir = await mkdtemp(join(repos, `${ns}-`));
  return {
    ns,
    async commit(config, image = 'registry.example/app:1') {
      const objects = [
        configMap(ns, 'web-config', { 'app.yaml': config }),
        secret(ns, 'web-secret', { password: 'hunter2-flux' }),
        workload(ns, 'web', { image }),
      ];
      await writeFile(join(dir, 'app.yaml'), yamlDocuments(...objects));
    },
    async reconcile() {
      const changes = await fluxReconcile(file.e2e.controlPlane.kubeconfig, dir);
      return {
        configMap: changes.get(`ConfigMap/${ns}/web-config`),
        deployment: changes.get(`Deployment/${ns}/web`),
      };
    },
    revision: () => file.api.revision(ns, 'web'),
  };
}

describe('Flux (kustomize-controller apply) in a true namespace', () => {
  it('rolls a config-only commit one reconcile late, and only once', async () => {
    const app = await fluxApp('true');
    await app.commit('v: 1');
    expect(await app.reconcile()).toEqual({ configMap: 'created', deployment: 'created' });
    expect(await app.revision()).toBe(1);
    const first = await file.api.hash(app.ns, 'deployment', 'web');
    expect(first).toMatch(/^[0-9a-f]{64}$/);

    await app.commit('v: 2');
    // The reconcile that brings the change: the Deployment's dry-run saw the old config.
    expect(await app.reconcile()).toEqual({ configMap: 'configured', deployment: 'unchanged' });
    expect(await app.revision()).toBe(1);
    expect(await file.api.hash(app.ns, 'deployment', 'web')).toBe(first);

    // The next reconcile of the same commit: now the dry-run carries the new hash.
    expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'configured' });
    expect(await app.revision()).toBe(2);
    expect(await file.api.hash(app.ns, 'deployment', 'web')).not.toBe(first);

    expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'unchanged' });
    expect(await app.revision()).toBe(2);
  });

  it('rolls a commit of config and image once, on the reconcile that brings it', async () => {
    const app = await fluxApp('true');
    await app.commit('v: 1');
    await app.reconcile();
    expect(await app.revision()).toBe(1);
    await app.commit('v: 2', 'registry.example/app:2');
    // Applied in order, ConfigMap before Deployment: the workload write hashes the new config.
    expect(await app.reconcile()).toEqual({ configMap: 'configured', deployment: 'configured' });
    expect(await app.revision()).toBe(2);
    expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'unchanged' });
    expect(await app.revision()).toBe(2);
    expect(await file.api.replicaSets(app.ns, 'web')).toHaveLength(2);
  });

  it('rolls nothing on an unchanged reconcile', async () => {
    const app = await fluxApp('true');
    await app.commit('v: 1');
    await app.reconcile();
    for (let i = 0; i < 2; i++) {
      expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'unchanged' });
    }
    expect(await app.revision()).toBe(1);
  });
});

describe('Flux (kustomize-controller apply) in a follow namespace', () => {
  it('rolls a config-only commit at once: follow mode touches the workload', async () => {
    const app = await fluxApp('follow');
    await app.commit('v: 1');
    await app.reconcile();
    expect(await app.revision()).toBe(1);
    const first = await file.api.hash(app.ns, 'deployment', 'web');

    await app.commit('v: 2');
    expect(await app.reconcile()).toEqual({ configMap: 'configured', deployment: 'unchanged' });
    await waitUntil(
      async () => (await file.api.hash(app.ns, 'deployment', 'web')) !== first,
      'follow mode to roll the workload',
    );
    expect(await app.revision()).toBe(2);
    // The next reconcile finds the workload as the commit and the config make it.
    expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'unchanged' });
    expect(await app.revision()).toBe(2);
  });

  it('rolls a commit of config and image once', async () => {
    const app = await fluxApp('follow');
    await app.commit('v: 1');
    await app.reconcile();
    await app.commit('v: 2', 'registry.example/app:2');
    const reconcileStarted = Date.now();
    expect(await app.reconcile()).toEqual({ configMap: 'configured', deployment: 'configured' });
    expect(await app.revision()).toBe(2);
    // Follow mode finds nothing to touch: the write already carried the new hash.
    expect(await followVerdictsSince(app.ns, reconcileStarted)).not.toContain('follow: touched');
    expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'unchanged' });
    expect(await app.revision()).toBe(2);
  });

  it('rolls nothing on an unchanged reconcile', async () => {
    const app = await fluxApp('follow');
    await app.commit('v: 1');
    await app.reconcile();
    expect(await app.reconcile()).toEqual({ configMap: 'unchanged', deployment: 'unchanged' });
    expect(await app.revision()).toBe(1);
  });
});
