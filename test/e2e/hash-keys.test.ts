// The hash keys on a real apiserver and deployment controller (docs/design.md §3 "Digest").
// The same Secret in two namespaces hashes differently. Rotating the hash key on a running
// install (docs/security.md "Rotate the hash key"): the webhook hashes and adopts workloads with
// key A; it is replaced by one with current key B and previous key A, and every way a
// workload is written again (server-side apply, the `{}` touch, a follower taking the lead,
// `plan`, `explain`) rolls nothing and leaves A's hashes; the follower counts what still
// needs A. A config change then writes B's hash with exactly one new ReplicaSet, after
// which a restarted follower counts nothing. The same keys read from the hash key Secret
// (`hash.key`, `previous-a`) keep A's hashes too. Dropping A rolls what still carries its
// hash once, on its next write. Expected digests are computed here from docs/design.md §3, not
// by the code under test.

import { createHmac, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../../tools/cluster/http.js';
import {
  type LocalFollower,
  type LocalWebhook,
  registerLocalWebhook,
  startLocalFollower,
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

const NS = 'key-rotation';
const FOLLOW_NS = 'key-rotation-follow';
/** The webhook's own namespace for the Secret form: its hash key Secret lives there. */
const KEYS_NS = 'key-rotation-keys';
const ADOPTED_HASH = 'confighash.dev/adopted-hash';
const PREVIOUS_KEY_HASHES = 'confighash_previous_key_hashes_total{component="follow"}';

let shared: SharedControlPlane;
let api: ClusterApi;
let keyA: Buffer;
let keyAFile: string;
const keyB = randomBytes(32);
let keyBFile: string;
const started: LocalWebhook[] = [];

/** The file flags of the install after the rotation: B current, A previous. */
const rotatedKeys = () => [`--hash-key-file=${keyBFile}`, `--previous-hash-key-file=${keyAFile}`];

async function startWebhook(
  name: string,
  options: { shareCertsWith?: LocalWebhook; extraArgs?: string[]; hashKeyArgs?: string[] } = {},
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
  const a = await startWebhook('confighash-key-a');
  await registerLocalWebhook(shared.kubectl, a);
  keyAFile = join(a.certsDir, 'hash.key');
  keyA = await readFile(keyAFile);
  keyBFile = join(shared.dir, 'key-b');
  await writeFile(keyBFile, keyB, { mode: 0o600 });
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

function encoding({ name, config, password }: App): string {
  const entry = (key: string, value: string) => `${key}\n${Buffer.byteLength(value)}\n${value}\n`;
  return (
    'confighash/v2\n' +
    `ConfigMap\n${name}-config\npresent\n${entry('app.yaml', config)}` +
    `Secret\n${name}-secret\npresent\n${entry('password', password)}`
  );
}

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text);

function digest(key: Buffer, ns: string, app: App): string {
  const namespaceKey = hmac(key, `confighash/v2 namespace\n${ns}`).digest();
  return hmac(namespaceKey, encoding(app)).digest('hex');
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

/** The template hash a server-side dry-run `{}` touch of `ns/name` comes back with. */
async function dryRunTouchHash(ns: string, name: string): Promise<string | undefined> {
  const touched = await shared.k([
    'patch',
    'deployment',
    name,
    '-n',
    ns,
    '--type=merge',
    '-p',
    '{}',
    '--dry-run=server',
    '-o',
    'json',
  ]);
  return JSON.parse(touched).spec?.template?.metadata?.annotations?.['confighash.dev/hash'];
}

async function workloadAnnotations(ns: string, name: string): Promise<Record<string, string>> {
  return (await api.get(ns, 'deployment', name)).metadata.annotations ?? {};
}

/**
 * Waits until the apiserver calls a webhook whose current key is `key`: a server-side
 * dry-run CREATE of a probe comes back with that key's digest. A write sent to a webhook
 * that is not (or no longer) there is let through unhashed (failurePolicy Ignore): it would
 * roll nothing for the wrong reason.
 */
async function waitForWebhook(key: Buffer): Promise<void> {
  const expected = digest(key, NS, PROBE);
  await waitUntil(async () => {
    const created = await shared.kubectl(
      ['apply', '--server-side', '--dry-run=server', '-o', 'json', '-f', '-'],
      yamlDocuments(workload(NS, PROBE.name)),
    );
    const template = JSON.parse(created.stdout || '{}').spec?.template;
    return template?.metadata?.annotations?.['confighash.dev/hash'] === expected;
  }, 'the apiserver to call the webhook with the new key');
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

describe('rotating the hash key on a running install', () => {
  const before = new Map<string, number>();

  /** Every workload keeps key A's hash and its ReplicaSets. */
  async function expectNothingRolled(): Promise<void> {
    expect(await rollouts()).toEqual(before);
    expect(await api.hash(NS, 'deployment', 'web')).toBe(digest(keyA, NS, WEB));
    expect((await workloadAnnotations(NS, 'adopted'))[ADOPTED_HASH]).toBe(
      digest(keyA, NS, ADOPTED),
    );
    expect(await api.hash(NS, 'deployment', 'adopted')).toBeUndefined();
    expect(await api.hash(FOLLOW_NS, 'deployment', 'tracked')).toBe(
      digest(keyA, FOLLOW_NS, TRACKED),
    );
  }

  it('the webhook with key A hashes and adopts with A', async () => {
    // Made before the namespace opts in: the webhook adopts it on its next write.
    await applyServerSide(namespace(NS), ...objects(NS, ADOPTED));
    await applyServerSide(
      namespace(NS, 'true'),
      namespace(FOLLOW_NS, 'follow'),
      ...objects(NS, PROBE).slice(0, 2),
    );
    await waitForWebhook(keyA);
    await applyServerSide(...objects(NS, WEB));
    await touch(NS, ADOPTED.name);
    await applyServerSide(...objects(FOLLOW_NS, TRACKED));

    expect(await api.hash(NS, 'deployment', 'web')).toBe(digest(keyA, NS, WEB));
    expect((await workloadAnnotations(NS, 'adopted'))[ADOPTED_HASH]).toBe(
      digest(keyA, NS, ADOPTED),
    );
    expect(await api.hash(FOLLOW_NS, 'deployment', 'tracked')).toBe(
      digest(keyA, FOLLOW_NS, TRACKED),
    );
    for (const [key, count] of await rollouts()) before.set(key, count);
    expect(before).toEqual(
      new Map([
        [`${NS}/adopted`, 1],
        [`${NS}/web`, 1],
        [`${FOLLOW_NS}/tracked`, 1],
      ]),
    );
  });

  it('restarted with key B current and A previous: apply, touch, a follower, plan and explain roll nothing', async () => {
    const a = started[0]!;
    const b = await startWebhook('confighash-key-b', {
      shareCertsWith: a,
      extraArgs: rotatedKeys(),
    });
    await registerLocalWebhook(shared.kubectl, b);
    await waitForWebhook(keyB);
    await a.stop();

    await applyServerSide(...objects(NS, WEB), ...objects(NS, ADOPTED));
    await applyServerSide(...objects(FOLLOW_NS, TRACKED));
    for (const [ns, name] of WORKLOADS) await touch(ns, name);
    await expectNothingRolled();

    // plan and explain ask the webhook by a dry-run touch; each is a process of its own.
    const env = { KUBECONFIG: shared.controlPlane.kubeconfig, NO_COLOR: '1' };
    const plan = runConfighash(
      ['plan', '-f', '-', '-o', 'json'],
      env,
      yamlDocuments(...objects(NS, WEB), ...objects(NS, ADOPTED), ...objects(FOLLOW_NS, TRACKED)),
    );
    const explain = runConfighash(['explain', 'deployment/web', '-n', NS, '-o', 'json'], env);

    // A follower with the same keys evaluates every follow workload when it takes the lead.
    const follower = await startFollower('follower-b');
    await waitForNoRollVerdict(follower, FOLLOW_NS, 'tracked', 'up-to-date-previous-key');
    expect(await followerMetric(follower)).toBe(1);
    await expectNothingRolled();

    expect(await plan.exited, plan.output.stderr).toBe(0);
    const verdicts = (
      JSON.parse(plan.output.stdout) as {
        items: { name: string; verdict: string; reasons: string[] }[];
      }
    ).items;
    expect(verdicts.map(({ name, verdict }) => `${name}: ${verdict}`).sort()).toEqual([
      'adopted: no-roll',
      'tracked: no-roll',
      'web: no-roll',
    ]);
    for (const { reasons } of verdicts) {
      expect(reasons).toContainEqual(expect.stringMatching(/^hash made with a previous key/));
    }
    expect(await explain.exited, explain.output.stderr).toBe(0);
    const explained = JSON.parse(explain.output.stdout);
    expect(explained).toMatchObject({
      templateHash: digest(keyA, NS, WEB),
      wouldWrite: digest(keyA, NS, WEB),
      nextWriteRolls: false,
      previousKey: true,
    });
    expect(explained.explanation).toContainEqual(
      expect.stringMatching(/hash made with a previous key/),
    );
    await follower.stop();
  });

  it('the next config change writes B, with exactly one new ReplicaSet; then a follower reads nothing and counts nothing', async () => {
    const changed = { ...WEB, config: 'v: 2' };
    await applyServerSide(...objects(NS, changed));
    expect(await api.hash(NS, 'deployment', 'web')).toBe(digest(keyB, NS, changed));
    expect(await api.replicaSets(NS, 'web')).toHaveLength(before.get(`${NS}/web`)! + 1);

    // The followed workload's config changes too; the next follower finds no hash of A.
    const tracked = { ...TRACKED, config: 'level: debug' };
    await applyServerSide(...objects(FOLLOW_NS, tracked));
    expect(await api.hash(FOLLOW_NS, 'deployment', 'tracked')).toBe(
      digest(keyB, FOLLOW_NS, tracked),
    );
    expect(await api.replicaSets(FOLLOW_NS, 'tracked')).toHaveLength(
      before.get(`${FOLLOW_NS}/tracked`)! + 1,
    );
    // B's write recorded what it hashed (hashed-versions, docs/design.md §6): the new leader
    // takes it as evaluated, and its first resync finds nothing to read.
    const follower = await startFollower('follower-b-again');
    expect(await firstResync(follower)).toMatchObject({ stale: 0, workloads: 1 });
    expect(await followerMetric(follower)).toBe(0);
    await follower.stop();
  });

  it("the same keys from the Secret (hash.key B, previous-a A): A's hashes stay, with the warning", async () => {
    const b = started[1]!;
    await shared.k(['create', 'namespace', KEYS_NS]);
    await shared.k([
      'create',
      'secret',
      'generic',
      'confighash-hash-key',
      '-n',
      KEYS_NS,
      `--from-file=hash.key=${keyBFile}`,
      `--from-file=previous-a=${keyAFile}`,
    ]);
    const s = await startWebhook('confighash-key-secret', {
      shareCertsWith: b,
      hashKeyArgs: [
        '--hash-key-secret=confighash-hash-key',
        `--namespace=${KEYS_NS}`,
        `--runtime-dir=${join(shared.dir, 'runtime')}`,
      ],
    });
    await registerLocalWebhook(shared.kubectl, s);
    await b.stop();
    // Only `s` can answer now; the warning says it knew A, and read it from the Secret.
    const adopted = (await api.replicaSets(NS, 'adopted')).length;
    await waitUntil(async () => {
      const touched = await shared.kubectl([
        'patch',
        'deployment',
        'adopted',
        '-n',
        NS,
        '--type=merge',
        '-p',
        '{}',
      ]);
      return touched.stderr.includes('confighash: hash made with a previous key');
    }, 'the webhook that reads the keys from the Secret');
    expect((await workloadAnnotations(NS, 'adopted'))[ADOPTED_HASH]).toBe(
      digest(keyA, NS, ADOPTED),
    );
    expect(await api.replicaSets(NS, 'adopted')).toHaveLength(adopted);
    expect(await readFile(join(shared.dir, 'runtime', 'previous-a'))).toEqual(keyA);
  });

  it('dropping key A rolls a workload still carrying its hash once, on its next write', async () => {
    const s = started[2]!;
    const c = await startWebhook('confighash-key-b-only', {
      shareCertsWith: s,
      extraArgs: [`--hash-key-file=${keyBFile}`],
    });
    await registerLocalWebhook(shared.kubectl, c);
    // B and C have the same current key: tell them apart by what they do with A's hashes.
    const rehashed = digest(keyB, NS, ADOPTED);
    await waitUntil(
      async () => (await dryRunTouchHash(NS, 'adopted')) === rehashed,
      'the apiserver to call the webhook without key A',
    );
    await s.stop();
    const rolled = (await api.replicaSets(NS, 'adopted')).length;
    await touch(NS, 'adopted');
    expect(await api.hash(NS, 'deployment', 'adopted')).toBe(rehashed);
    expect(await api.replicaSets(NS, 'adopted')).toHaveLength(rolled + 1);
    await touch(NS, 'adopted');
    expect(await api.replicaSets(NS, 'adopted')).toHaveLength(rolled + 1);
  });
});

it('the same Secret and ConfigMap in two namespaces: two different hashes', async () => {
  const app: App = { name: 'same', config: 'shared: true', password: 'guessable' };
  const [a, b] = ['hash-same-a', 'hash-same-b'];
  await applyServerSide(namespace(a, 'true'), namespace(b, 'true'));
  await applyServerSide(...objects(a, app), ...objects(b, app));
  const hashA = await api.hash(a, 'deployment', 'same');
  const hashB = await api.hash(b, 'deployment', 'same');
  expect(hashA).toBe(digest(keyB, a, app));
  expect(hashB).toBe(digest(keyB, b, app));
  expect(hashA).not.toBe(hashB);
});

// --- the follower --------------------------------------------------------------------

function startFollower(name: string): Promise<LocalFollower> {
  return startLocalFollower({
    dir: shared.dir,
    kubeconfig: shared.controlPlane.kubeconfig,
    log: verboseLog(),
    name,
    webhook: started[1]!,
    extraArgs: [
      ...rotatedKeys(),
      `--lease-namespace=${FOLLOW_NS}`,
      `--identity=${name}`,
      '--follow-debounce=1s',
      // The resync's line is a debug line.
      '--log-level=debug',
    ],
  });
}

/** The follower's JSON log lines so far (the runtime's own warnings may share the file). */
async function logEntries(follower: LocalFollower): Promise<Record<string, unknown>[]> {
  return (await readFile(follower.process.logFile, 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The follower's first resync after taking the lead: how many workloads it found to read. */
async function firstResync(follower: LocalFollower): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitUntil(async () => {
    found = (await logEntries(follower)).find((entry) => entry.msg === 'follow: resync');
    return found !== undefined;
  }, "the follower's first resync");
  return found!;
}

/** confighash_previous_key_hashes_total{component="follow"} on the follower's /metrics. */
async function followerMetric(follower: LocalFollower): Promise<number> {
  const response = await httpRequest(`http://127.0.0.1:${follower.port}/metrics`, {
    timeoutMs: 5000,
  });
  const line = response.body
    .split('\n')
    .find((entry) => entry.startsWith(`${PREVIOUS_KEY_HASHES} `));
  if (line === undefined) throw new Error(`no ${PREVIOUS_KEY_HASHES} on /metrics`);
  return Number(line.slice(PREVIOUS_KEY_HASHES.length + 1));
}

/** Waits until `follower` has evaluated `ns/name` and found nothing to roll, for `why`. */
async function waitForNoRollVerdict(
  follower: LocalFollower,
  ns: string,
  name: string,
  why: string,
): Promise<void> {
  await waitUntil(async () => {
    const entries = await logEntries(follower);
    const touched = entries.find(
      (e) => e.namespace === ns && e.name === name && e.msg === 'follow: touched',
    );
    if (touched) throw new Error(`the follower touched ${ns}/${name}: ${JSON.stringify(touched)}`);
    return entries.some(
      (e) =>
        e.namespace === ns &&
        e.name === name &&
        e.msg === 'follow: nothing to roll' &&
        e.why === why,
    );
  }, `the follower's verdict on ${ns}/${name}`);
}

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
 * ReplicaSets of each Deployment of the rotation's namespaces (`NS/NAME` → count), once the
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
