// Hash v2 on a real apiserver and deployment controller (docs/design.md §3 "Version 2",
// §10 second row). A running install of the last release that writes v1 — its own
// source, from the repository's history — hashes and adopts workloads; then the
// current webhook replaces it with the same hash key, and every way a workload is
// written again (server-side apply, the `{}` touch, a follower's resync, `plan`) rolls
// nothing and leaves the v1 hash. A later config change writes v2 with one rollout, and
// the same Secret in two namespaces gets two hashes; going back to v1 rolls what carries
// a v2 hash, once. Expected digests are computed here from the DESIGN text, not by the
// code under test.

import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseMain } from '../../tools/cluster/release-source.js';
import {
  type LocalWebhook,
  registerLocalWebhook,
  startLocalWebhook,
} from '../../tools/cluster/webhook.js';
import {
  type ClusterApi,
  cluster,
  configMap,
  namespace,
  type SharedControlPlane,
  secret,
  useSharedControlPlane,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { verboseLog } from '../support/per-worker.js';
import { runConfighash, stopStartedProcesses } from '../support/process.js';

// The last commit whose webhook writes v1 hashes (main before hash v2). CI clones the
// repository with its history, so `git archive` finds it.
const V1_RELEASE = 'f461df17ec4c7aba088d23d3edf3aba10d599c92';

const NS = 'hash-upgrade';
const FOLLOW_NS = 'hash-upgrade-follow';
const ADOPTED_HASH = 'confighash.dev/adopted-hash';

let shared: SharedControlPlane;
let api: ClusterApi;
let hashKey: Buffer;
const started: LocalWebhook[] = [];

async function startWebhook(
  name: string,
  options: { main?: string; shareCertsWith?: LocalWebhook; extraArgs?: string[] } = {},
) {
  const webhook = await startLocalWebhook({
    dir: shared.dir,
    kubeconfig: shared.controlPlane.kubeconfig,
    log: verboseLog(),
    name,
    ...options,
    // Replaced only once the apiserver calls its successor: no drain to wait for.
    extraArgs: ['--shutdown-timeout=1', ...(options.extraArgs ?? [])],
  });
  started.push(webhook);
  return webhook;
}

beforeAll(async () => {
  shared = await useSharedControlPlane();
  api = cluster(shared);
  const v1 = await startWebhook('confighash-v1', { main: await releaseMain(V1_RELEASE) });
  await registerLocalWebhook(shared.kubectl, v1);
  hashKey = await readFile(join(v1.certsDir, 'hash.key'));
});

afterAll(async () => {
  await stopStartedProcesses();
  for (const webhook of started) await webhook.stop();
  await shared?.stop();
});

// --- the digests, from docs/design.md §3 --------------------------------------------------

/** Content of `workload(ns, name)`: ConfigMap NAME-config and Secret NAME-secret, one key each. */
interface App {
  readonly name: string;
  readonly config: string;
  readonly password: string;
}

function encoding(version: 'v1' | 'v2', { name, config, password }: App): string {
  const entry = (key: string, value: string) => `${key}\n${Buffer.byteLength(value)}\n${value}\n`;
  return (
    `confighash/${version}\n` +
    `ConfigMap\n${name}-config\npresent\n${entry('app.yaml', config)}` +
    `Secret\n${name}-secret\npresent\n${entry('password', password)}`
  );
}

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text);

function v1Digest(app: App): string {
  return hmac(hashKey, encoding('v1', app)).digest('hex');
}

function v2Digest(ns: string, app: App): string {
  const namespaceKey = hmac(hashKey, `confighash/v2 namespace\n${ns}`).digest();
  return hmac(namespaceKey, encoding('v2', app)).digest('hex');
}

// --- writes ------------------------------------------------------------------------

function objects(ns: string, { name, config, password }: App): object[] {
  return [
    configMap(ns, `${name}-config`, { 'app.yaml': config }),
    secret(ns, `${name}-secret`, { password }),
    workload(ns, name),
  ];
}

async function applyServerSide(...docs: object[]): Promise<void> {
  await shared.k(['apply', '--server-side', '-f', '-'], yamlDocuments(...docs));
}

async function touch(ns: string, name: string): Promise<void> {
  await shared.k(['patch', 'deployment', name, '-n', ns, '--type=merge', '-p', '{}']);
}

async function workloadAnnotations(ns: string, name: string): Promise<Record<string, string>> {
  return (await api.get(ns, 'deployment', name)).metadata.annotations ?? {};
}

/**
 * Waits until the apiserver calls the `version` webhook: a server-side dry-run CREATE of a
 * probe comes back with that version's digest. A write sent to a webhook that is not (or no
 * longer) there is let through unhashed (failurePolicy Ignore): it would roll nothing for
 * the wrong reason.
 */
async function waitForWebhook(version: 'v1' | 'v2'): Promise<void> {
  const expected = version === 'v1' ? v1Digest(PROBE) : v2Digest(NS, PROBE);
  await waitUntil(async () => {
    const created = await shared.kubectl(
      ['apply', '--server-side', '--dry-run=server', '-o', 'json', '-f', '-'],
      yamlDocuments(workload(NS, PROBE.name)),
    );
    const template = JSON.parse(created.stdout || '{}').spec?.template;
    return template?.metadata?.annotations?.['confighash.dev/hash'] === expected;
  }, `the apiserver to call the ${version} webhook`);
}

/** Registers `next`, and stops `previous` once the apiserver calls `next`. */
async function switchTo(next: LocalWebhook, version: 'v1' | 'v2', previous: LocalWebhook) {
  await registerLocalWebhook(shared.kubectl, next);
  await waitForWebhook(version);
  await previous.stop();
}

// --- the rows ----------------------------------------------------------------------

const PROBE: App = { name: 'probe', config: 'probe: 1', password: 'probe' };

const WEB: App = { name: 'web', config: 'v: 1', password: 'hunter2' };
const ADOPTED: App = { name: 'adopted', config: 'mode: quiet', password: 's3cret' };
const TRACKED: App = { name: 'tracked', config: 'level: info', password: 'token-1' };

const WORKLOADS = [
  [NS, 'web'],
  [NS, 'adopted'],
  [FOLLOW_NS, 'tracked'],
] as const;

describe('upgrading a running install from v1 to v2', () => {
  const before = new Map<string, number>();

  /** Every workload keeps its v1 hash and its ReplicaSets. */
  async function expectNothingRolled(): Promise<void> {
    expect(await rollouts()).toEqual(new Map([...before].map(([key, count]) => [key, count])));
    expect(await api.hash(NS, 'deployment', 'web')).toBe(v1Digest(WEB));
    expect((await workloadAnnotations(NS, 'adopted'))[ADOPTED_HASH]).toBe(v1Digest(ADOPTED));
    expect(await api.hash(NS, 'deployment', 'adopted')).toBeUndefined();
    expect(await api.hash(FOLLOW_NS, 'deployment', 'tracked')).toBe(v1Digest(TRACKED));
  }

  it('the v1 release hashes and adopts with v1 digests', async () => {
    // Made before the namespace opts in: the v1 webhook adopts it on its next write.
    await applyServerSide(namespace(NS), ...objects(NS, ADOPTED));
    await applyServerSide(
      namespace(NS, 'true'),
      namespace(FOLLOW_NS, 'follow'),
      ...objects(NS, PROBE).slice(0, 2),
    );
    await waitForWebhook('v1');
    await applyServerSide(...objects(NS, WEB));
    await touch(NS, ADOPTED.name);
    await applyServerSide(...objects(FOLLOW_NS, TRACKED));

    expect(await api.hash(NS, 'deployment', 'web')).toBe(v1Digest(WEB));
    expect((await workloadAnnotations(NS, 'adopted'))[ADOPTED_HASH]).toBe(v1Digest(ADOPTED));
    expect(await api.hash(NS, 'deployment', 'adopted')).toBeUndefined();
    expect(await api.hash(FOLLOW_NS, 'deployment', 'tracked')).toBe(v1Digest(TRACKED));
    for (const [key, count] of await rollouts()) before.set(key, count);
    expect(before).toEqual(
      new Map([
        [`${NS}/adopted`, 1],
        [`${NS}/web`, 1],
        [`${FOLLOW_NS}/tracked`, 1],
      ]),
    );
  });

  it('the v2 webhook, same hash key: apply, touch, a follower and plan roll nothing', async () => {
    const v1 = started[0]!;
    const v2 = await startWebhook('confighash-v2', { shareCertsWith: v1 });
    await switchTo(v2, 'v2', v1);

    await applyServerSide(...objects(NS, WEB), ...objects(NS, ADOPTED));
    await applyServerSide(...objects(FOLLOW_NS, TRACKED));
    for (const [ns, name] of WORKLOADS) await touch(ns, name);
    await expectNothingRolled();

    // plan and explain ask the webhook by a dry-run touch: it keeps the v1 hashes too. They
    // run while the follower starts: each is a process of its own.
    const env = { KUBECONFIG: shared.controlPlane.kubeconfig, NO_COLOR: '1' };
    const plan = runConfighash(
      ['plan', '-f', '-', '-o', 'json'],
      env,
      yamlDocuments(...objects(NS, WEB), ...objects(NS, ADOPTED), ...objects(FOLLOW_NS, TRACKED)),
    );
    const explain = runConfighash(['explain', 'deployment/web', '-n', NS, '-o', 'json'], env);

    // A follower of the new release evaluates every follow workload when it takes the lead.
    const followerStart = Date.now();
    const follower = await startWebhook('follower-v2', {
      shareCertsWith: v2,
      extraArgs: [
        '--follow',
        `--lease-namespace=${FOLLOW_NS}`,
        '--identity=follower-v2',
        '--follow-debounce=1s',
      ],
    });
    await waitForNoRollVerdict(follower, FOLLOW_NS, 'tracked', followerStart);
    await expectNothingRolled();

    expect(await plan.exited, plan.output.stderr).toBe(0);
    const verdicts = JSON.parse(plan.output.stdout) as { name: string; verdict: string }[];
    expect(verdicts.map(({ name, verdict }) => `${name}: ${verdict}`).sort()).toEqual([
      'adopted: no-roll',
      'tracked: no-roll',
      'web: no-roll',
    ]);
    expect(await explain.exited, explain.output.stderr).toBe(0);
    expect(JSON.parse(explain.output.stdout)).toMatchObject({
      templateHash: v1Digest(WEB),
      wouldWrite: v1Digest(WEB),
      nextWriteRolls: false,
    });
    await follower.stop();
  });

  it('a later config change writes v2, with exactly one new ReplicaSet', async () => {
    const changed = { ...WEB, config: 'v: 2' };
    await applyServerSide(...objects(NS, changed));
    expect(await api.hash(NS, 'deployment', 'web')).toBe(v2Digest(NS, changed));
    expect(await api.replicaSets(NS, 'web')).toHaveLength(before.get(`${NS}/web`)! + 1);
  });
});

it('the same Secret and ConfigMap in two namespaces: two different hashes', async () => {
  const app: App = { name: 'same', config: 'shared: true', password: 'guessable' };
  const [a, b] = ['hash-same-a', 'hash-same-b'];
  await applyServerSide(namespace(a, 'true'), namespace(b, 'true'));
  await applyServerSide(...objects(a, app), ...objects(b, app));
  const hashA = await api.hash(a, 'deployment', 'same');
  const hashB = await api.hash(b, 'deployment', 'same');
  expect(hashA).toBe(v2Digest(a, app));
  expect(hashB).toBe(v2Digest(b, app));
  expect(hashA).not.toBe(hashB);
});

// docs/install.md "Upgrade": going back to a v1 release rolls what carries a v2 hash, once.
it('a downgrade to the v1 release rolls a v2-hashed workload once, and a v1-hashed one never', async () => {
  const [v1, v2] = started as [LocalWebhook, LocalWebhook];
  await v1.restart();
  await switchTo(v1, 'v1', v2);
  const changed = { ...WEB, config: 'v: 2' };
  const web = (await api.replicaSets(NS, 'web')).length;
  const adopted = (await api.replicaSets(NS, 'adopted')).length;
  await touch(NS, 'web');
  await touch(NS, 'adopted');
  expect(await api.hash(NS, 'deployment', 'web')).toBe(v1Digest(changed));
  expect(await api.replicaSets(NS, 'web')).toHaveLength(web + 1);
  await touch(NS, 'web');
  expect(await api.replicaSets(NS, 'web')).toHaveLength(web + 1);
  expect(await api.replicaSets(NS, 'adopted')).toHaveLength(adopted);
});

interface Listed {
  items: {
    kind: string;
    metadata: {
      name: string;
      generation?: number;
      annotations?: Record<string, string>;
      ownerReferences?: { name: string }[];
    };
    status?: { observedGeneration?: number };
  }[];
}

/**
 * ReplicaSets of each Deployment of the upgrade's namespaces (`NS/NAME` → count), once the
 * deployment controller has seen every Deployment's latest generation and made its
 * ReplicaSet: one `get` per namespace, where ClusterApi.replicaSets takes three per workload.
 */
async function rollouts(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  await waitUntil(async () => {
    counts.clear();
    for (const ns of [NS, FOLLOW_NS]) {
      const { items } = JSON.parse(
        await shared.k(['get', 'deployments,replicasets', '-n', ns, '-o', 'json']),
      ) as Listed;
      const revision = (item: Listed['items'][number]) =>
        item.metadata.annotations?.['deployment.kubernetes.io/revision'];
      for (const deployment of items.filter(({ kind }) => kind === 'Deployment')) {
        if (deployment.status?.observedGeneration !== deployment.metadata.generation) return false;
        const owned = items.filter(
          (item) =>
            item.kind === 'ReplicaSet' &&
            item.metadata.ownerReferences?.some((owner) => owner.name === deployment.metadata.name),
        );
        if (!owned.some((rs) => revision(rs) === revision(deployment))) return false;
        counts.set(`${ns}/${deployment.metadata.name}`, owned.length);
      }
    }
    return true;
  }, 'the deployment controller');
  return counts;
}

/** Waits until `follower` has evaluated `name` in `ns` since `after` and found nothing to roll. */
async function waitForNoRollVerdict(
  follower: LocalWebhook,
  ns: string,
  name: string,
  after: number,
): Promise<void> {
  await waitUntil(async () => {
    // JSON lines only: the runtime's own warnings may share the file.
    const lines = (await readFile(follower.process.logFile, 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const entries = lines.map(
      (line) =>
        JSON.parse(line) as { time: number; namespace?: string; name?: string; msg: string },
    );
    const touched = entries.find(
      (e) =>
        e.time >= after && e.namespace === ns && e.name === name && e.msg === 'follow: touched',
    );
    if (touched) throw new Error(`the follower touched ${ns}/${name}: ${JSON.stringify(touched)}`);
    return entries.some(
      (e) =>
        e.time >= after &&
        e.namespace === ns &&
        e.name === name &&
        e.msg === 'follow: nothing to roll',
    );
  }, `the follower's verdict on ${ns}/${name}`);
}
