// Follow mode on a real control plane (docs/design.md §6): config changes that no
// write of the workload carries still roll it, exactly once, only when the
// consumed content changed, and only inside its rollout window. Workloads are
// applied client-side, as the users who need follow mode apply them.

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type LocalFollower, startLocalFollower } from '../../tools/cluster/webhook.js';
import {
  configMap,
  e2eFile,
  namespace,
  secret,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { followLogEntries } from '../support/follow-log.js';
import { runConfighash } from '../support/process.js';

const followers: LocalFollower[] = [];
let counter = 0;

const FOLLOW_ARGS = [
  '--lease-namespace=default',
  '--follow-debounce=2s',
  '--follow-min-interval=3s',
  // Short, so that a row proving a resync finds nothing to roll waits seconds, not minutes.
  '--follow-resync=10s',
];

// The registered webhook judges every write; two `confighash follow` replicas compete for the Lease.
const file = e2eFile([], {
  async setup({ e2e }) {
    for (const name of ['follower-1', 'follower-2']) {
      followers.push(
        await startLocalFollower({
          dir: e2e.dir,
          kubeconfig: e2e.controlPlane.kubeconfig,
          webhook: e2e.webhook,
          name,
          extraArgs: [...FOLLOW_ARGS, `--identity=${name}`],
        }),
      );
    }
    await waitUntil(async () => (await leaseHolder()) !== '', 'a follow-mode leader', 30_000);
  },
  async teardown() {
    for (const follower of followers) await follower.stop();
  },
});

function leaseHolder(): Promise<string> {
  return file.api.leaseHolder('default', 'confighash-follow');
}

async function leaderLog(): Promise<string> {
  const holder = await leaseHolder();
  return readFile(`${file.e2e.dir}/${holder}.log`, 'utf8');
}

async function followNamespace(label = 'follow'): Promise<string> {
  const ns = `follow-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, label)));
  return ns;
}

async function applyClientSide(...objects: object[]): Promise<string> {
  return file.e2e.k(['apply', '-f', '-'], yamlDocuments(...objects));
}

async function replace(...objects: object[]): Promise<void> {
  await file.e2e.k(['replace', '-f', '-'], yamlDocuments(...objects));
}

/** Waits until the leader has evaluated `name` in `ns` and found nothing to roll. */
async function waitForNoRollVerdict(
  ns: string,
  name: string,
  after: number,
  timeoutMs = 30_000,
): Promise<void> {
  await waitUntil(
    async () => {
      // JSON lines only (followLogEntries): the runtime's own warnings may share the file.
      return followLogEntries(await leaderLog()).some(
        (entry) =>
          entry.time >= after &&
          entry.namespace === ns &&
          entry.name === name &&
          entry.msg === 'follow: nothing to roll',
      );
    },
    `the follower's verdict on ${ns}/${name}`,
    timeoutMs,
  );
}

/** Waits until the leader has run a resync that started after `after`. */
async function waitForResync(after: number, timeoutMs: number): Promise<void> {
  await waitUntil(
    async () =>
      followLogEntries(await leaderLog()).some(
        (entry) => entry.time >= after && entry.msg === 'follow: resync',
      ),
    'a resync of the leader',
    timeoutMs,
  );
}

/** The change, the debounce (2 s) and the deferral Event take a few seconds. */
const WINDOW_LEAD_MS = 12_000;
/** The workload whose roll a closed window deferred, and when that window opens. */
let deferred: { ns: string; opensAt: number } | undefined;

/** When the ReplicaSet of a Deployment's `revision` was created, by the apiserver's clock. */
async function replicaSetCreatedAt(ns: string, name: string, revision: number): Promise<number> {
  const list = JSON.parse(
    await file.e2e.k(['get', '-n', ns, 'replicasets', '-l', `app=${name}`, '-o', 'json']),
  ) as {
    items: { metadata: { creationTimestamp: string; annotations?: Record<string, string> } }[];
  };
  const created = list.items.find(
    (rs) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === String(revision),
  )?.metadata.creationTimestamp;
  if (!created) throw new Error(`no ReplicaSet of revision ${revision} of ${ns}/${name}`);
  return Date.parse(created);
}

interface EventItem {
  type: string;
  reason: string;
  note: string;
  regarding: { name: string; kind: string };
}

async function events(ns: string): Promise<EventItem[]> {
  const list = JSON.parse(
    await file.e2e.k(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json']),
  ) as {
    items: EventItem[];
  };
  return list.items;
}

// A closed rollout window opens at a minute boundary (its granularity), 12–72 s after its row's
// change: the deferral is proven first, the rows below run while the window is still closed, and
// the row before the last one checks the roll that came when it opened.
describe('a closed rollout window', () => {
  it('defers the roll: a RolloutDeferred Event, and nothing rolls while it is closed', async () => {
    const ns = await followNamespace();
    // The window opens far enough ahead for the change, the debounce and the deferral Event to
    // happen while it is still closed.
    const opensAt = new Date(Math.ceil((Date.now() + WINDOW_LEAD_MS) / 60_000) * 60_000);
    const closesAt = new Date(opensAt.getTime() + 10 * 60_000);
    const hhmm = (date: Date) => date.toISOString().slice(11, 16);
    const window = `* ${hhmm(opensAt)}-${hhmm(closesAt)} UTC`;
    await applyClientSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(ns, 'web-secret', { password: 'p' }),
      workload(ns, 'web', { annotations: { 'confighash.dev/rollout-window': window } }),
    );
    await replace(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }));
    await waitUntil(
      async () => (await events(ns)).some((event) => event.reason === 'RolloutDeferred'),
      'the deferral Event',
    );
    expect(await file.api.revision(ns, 'web')).toBe(1);
    deferred = { ns, opensAt: opensAt.getTime() };
  });
});

describe('out-of-band config changes roll', () => {
  it('kubectl replace of a referenced ConfigMap rolls the Deployment; the Event names it, without content', async () => {
    const ns = await followNamespace();
    await applyClientSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(ns, 'web-secret', { password: 'p' }),
      workload(ns, 'web'),
    );
    expect(await file.api.revision(ns, 'web')).toBe(1);
    await replace(configMap(ns, 'web-config', { 'app.yaml': 'v: secret-ish-value-2' }));
    await waitUntil(
      async () => (await file.api.revision(ns, 'web')) === 2,
      'the follow-mode rollout',
    );
    await waitUntil(
      async () => (await events(ns)).some((event) => event.reason === 'ConfigChanged'),
      'the Event',
    );
    const changed = (await events(ns)).filter((event) => event.reason === 'ConfigChanged');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.regarding.name).toBe('web');
    expect(changed[0]!.note).toContain('configmap/web-config');
    expect(changed[0]!.note).not.toContain('secret-ish-value');

    // `confighash explain` shows the same Event to whoever asks why the pods rolled.
    const explain = runConfighash(
      ['explain', 'deploy/web', '-n', ns, '-o', 'json', '--lease-namespace=default'],
      { KUBECONFIG: file.e2e.controlPlane.kubeconfig },
    );
    expect(await explain.exited).toBe(0);
    const explanation = JSON.parse(explain.output.stdout) as {
      events: { reason: string; note: string }[];
    };
    expect(explanation.events.map(({ reason }) => reason)).toContain('ConfigChanged');
    expect(explanation.events.find(({ reason }) => reason === 'ConfigChanged')?.note).toBe(
      changed[0]!.note,
    );
    expect(explain.output.stdout).not.toContain('secret-ish-value');
  });

  it('a paused Deployment: the touch writes the new hash and a RolloutHeld Warning Event says its pods keep the old config', async () => {
    const ns = await followNamespace();
    const paused = workload(ns, 'web') as { spec: Record<string, unknown> };
    await applyClientSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(ns, 'web-secret', { password: 'p' }),
      { ...paused, spec: { ...paused.spec, paused: true } },
    );
    const before = await file.api.hash(ns, 'deployment', 'web');
    await replace(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }));
    await waitUntil(
      async () => (await events(ns)).some((event) => event.reason === 'RolloutHeld'),
      'the RolloutHeld Event',
    );
    expect(await file.api.hash(ns, 'deployment', 'web')).not.toBe(before);
    const held = (await events(ns)).filter((event) => event.reason === 'RolloutHeld');
    expect(held).toEqual([
      expect.objectContaining({
        type: 'Warning',
        note: 'confighash: paused: pods keep the old config until it is resumed',
        regarding: expect.objectContaining({ name: 'web', kind: 'Deployment' }),
      }),
    ]);
  });

  it('a Secret used only by an init container', async () => {
    const ns = await followNamespace();
    const podSpec = {
      initContainers: [
        {
          name: 'migrate',
          image: 'registry.example/migrate:1',
          envFrom: [{ secretRef: { name: 'db' } }],
        },
      ],
      containers: [{ name: 'app', image: 'registry.example/app:1' }],
    };
    await applyClientSide(
      secret(ns, 'db', { url: 'postgres://a' }),
      workload(ns, 'web', { podSpec }),
    );
    expect(await file.api.hash(ns, 'deployment', 'web')).toMatch(/^[0-9a-f]{64}$/);
    await replace(secret(ns, 'db', { url: 'postgres://b' }));
    await waitUntil(
      async () => (await file.api.revision(ns, 'web')) === 2,
      'the follow-mode rollout',
    );
  });

  it.each(['StatefulSet', 'DaemonSet'] as const)(
    'a %s template gets the new hash',
    async (kind) => {
      const ns = await followNamespace();
      await applyClientSide(
        configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
        secret(ns, 'web-secret', { password: 'p' }),
        workload(ns, 'web', { kind }),
      );
      const before = await file.api.hash(ns, kind.toLowerCase(), 'web');
      expect(before).toMatch(/^[0-9a-f]{64}$/);
      await replace(secret(ns, 'web-secret', { password: 'q' }));
      await waitUntil(
        async () => (await file.api.hash(ns, kind.toLowerCase(), 'web')) !== before,
        `the ${kind} template hash to change`,
      );
    },
  );
});

describe('changes that must not roll', () => {
  it.each([
    [
      'a label-only change',
      (ns: string) => ({
        ...configMap(ns, 'shared', { mode: 'fast', other: '1' }),
        metadata: { name: 'shared', namespace: ns, labels: { team: 'b' } },
      }),
    ],
    [
      'a change to a key the workload does not consume',
      (ns: string) => configMap(ns, 'shared', { mode: 'fast', other: '2' }),
    ],
  ])('%s', async (_name, changedConfigMap) => {
    const ns = await followNamespace();
    const podSpec = {
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'shared', key: 'mode' } } }],
        },
      ],
    };
    await applyClientSide(
      configMap(ns, 'shared', { mode: 'fast', other: '1' }),
      workload(ns, 'web', { podSpec }),
    );
    expect(await file.api.revision(ns, 'web')).toBe(1);
    const changedAt = Date.now();
    await replace(changedConfigMap(ns));
    await waitForNoRollVerdict(ns, 'web', changedAt);
    expect(await file.api.revision(ns, 'web')).toBe(1);
  });

  it('a namespace labelled true (admission only) does not roll on an out-of-band change', async () => {
    const ns = await followNamespace('true');
    await applyClientSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(ns, 'web-secret', { password: 'p' }),
      workload(ns, 'web'),
    );
    await replace(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }));
    // Control: the same change in a follow namespace rolls within this time.
    const control = await followNamespace();
    await applyClientSide(
      configMap(control, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(control, 'web-secret', { password: 'p' }),
      workload(control, 'web'),
    );
    await replace(configMap(control, 'web-config', { 'app.yaml': 'v: 2' }));
    await waitUntil(
      async () => (await file.api.revision(control, 'web')) === 2,
      'the control rollout',
    );
    expect(await file.api.revision(ns, 'web')).toBe(1);
  });
});

describe('guards', () => {
  it('ten changes within the debounce window make exactly one new ReplicaSet', async () => {
    const ns = await followNamespace();
    await applyClientSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 0' }),
      secret(ns, 'web-secret', { password: 'p' }),
      workload(ns, 'web'),
    );
    // One kubectl process replaces the ConfigMap ten times in a row.
    const versions = Array.from({ length: 10 }, (_, i) =>
      configMap(ns, 'web-config', { 'app.yaml': `v: ${i + 1}` }),
    );
    await replace(...versions);
    await waitUntil(async () => (await file.api.revision(ns, 'web')) === 2, 'the rollout');
    // A straggling event would be touched, and the 10 s resync re-evaluates whatever the
    // touch did not see: after both, still one new ReplicaSet.
    await waitForResync(Date.now() + 3000, 25_000);
    expect(await file.api.replicaSets(ns, 'web')).toHaveLength(2);
  });

  it('a Deployment applied client-side together with its changed ConfigMap rolls once, not twice', async () => {
    const ns = await followNamespace();
    const objects = (config: string, image: string) => [
      configMap(ns, 'web-config', { 'app.yaml': config }),
      secret(ns, 'web-secret', { password: 'p' }),
      workload(ns, 'web', { image }),
    ];
    await applyClientSide(...objects('v: 1', 'registry.example/app:1'));
    const changedAt = Date.now();
    await applyClientSide(...objects('v: 2', 'registry.example/app:2'));
    expect(await file.api.revision(ns, 'web')).toBe(2);
    await waitForNoRollVerdict(ns, 'web', changedAt);
    expect(await file.api.replicaSets(ns, 'web')).toHaveLength(2);
  });
});

describe('a closed rollout window, once it opens', () => {
  it('the deferred roll happens then, not before: its ReplicaSet is no older than the opening', async () => {
    if (!deferred) throw new Error('the deferral row did not run');
    const { ns, opensAt } = deferred;
    await waitUntil(
      async () => (await file.api.revision(ns, 'web')) === 2,
      'the rollout when the window opens',
      180_000,
    );
    // The apiserver's own clock, in whole seconds; the window opens on a whole minute.
    expect(await replicaSetCreatedAt(ns, 'web', 2)).toBeGreaterThanOrEqual(opensAt);
  }, 240_000);
});

describe('one follower', () => {
  it('exactly one holds the Lease; kill it and the other takes over, rolling what changed meanwhile', async () => {
    const holder = await leaseHolder();
    expect(['follower-1', 'follower-2']).toContain(holder);
    const leader = followers.find((follower) =>
      follower.process.logFile.endsWith(`${holder}.log`),
    )!;
    const standby = followers.find((follower) => follower !== leader)!;
    const standbyName = holder === 'follower-1' ? 'follower-2' : 'follower-1';
    expect(standby.process.child.exitCode).toBeNull();

    const ns = await followNamespace();
    await applyClientSide(
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(ns, 'web-secret', { password: 'p' }),
      workload(ns, 'web'),
    );

    // SIGKILL: no chance to release the Lease, as when a node dies.
    process.kill(-leader.process.child.pid!, 'SIGKILL');
    const killedAt = Date.now();
    await replace(configMap(ns, 'web-config', { 'app.yaml': 'v: 2' }));
    await waitUntil(
      async () => (await leaseHolder()) === standbyName,
      'the standby to take the Lease',
      30_000,
    );
    // Lease duration (15 s) plus one retry period and our polling.
    expect(Date.now() - killedAt).toBeLessThan(15_000 + 2_000 + 3_000);
    await waitUntil(
      async () => (await file.api.revision(ns, 'web')) === 2,
      'the change made while nobody led to roll',
    );
  }, 90_000);
});
