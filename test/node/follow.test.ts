// The follow overlay on a real node: the webhook's two replicas, and follow
// mode's own Deployment, confighash-follow, whose two replicas elect one leader.
// Deleting the leader's pod hands the Lease to the other confighash-follow pod
// within the lease duration (15 s, counted from the old leader's last renewal by
// the apiserver's own timestamps), and a ConfigMap changed meanwhile — with no
// write of the workload — rolls it exactly once, into pods that print the new value.
// Canary-first fan-out with pods that really crash (docs/design.md §6 "The state of a
// change"): a ConfigMap value that makes the app exit, read by five Deployments, crash-loops
// the canary alone; its pod's restart halts the change within seconds of the touch — long
// before the Deployment's 10-minute progress deadline — and the four others keep their old
// pods; the fix is tested on the canary for its window, and a healthy canary releases the
// rest.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY, HASH } from '../../src/workload/annotations.js';
import { FANOUT_STATE } from '../../src/workload/fanout-record.js';
import type { KubectlResult } from '../../tools/cluster/kubectl.js';
import { configMap, namespace, waitUntil, yamlDocuments } from '../support/e2e.js';
import { followLogEntries, judgedEveryChange } from '../support/follow-log.js';
import {
  attachNodeFixture,
  changeGreeting,
  followArgs,
  greetingPodTemplate,
  isReady,
  type NodeFixture,
  type Pod,
  patchedOverlay,
  SYSTEM_NAMESPACE,
  waitForReadyFollowPods,
  waitForReadyWebhookPods,
} from '../support/node.js';

const LEASE_DURATION_MS = 15_000;
/** A renewal younger than one retry period (2 s) and some polling: the leader is renewing now. */
const RENEWAL_FRESH_MS = 3_000;
const NS = 'follow-app';
let fixture: NodeFixture;

/**
 * The canary row touches its canary twice within a minute (the bad value, then the fix) and
 * reads its rollout until it fails: a shorter minimum interval and canary poll than the
 * defaults (60 s, 5 s) keep it from waiting on them. Neither changes the handover row, which
 * touches one workload once. The canary row waits out the debounce after each change: 5 s,
 * not the default 10 s. The handover row proves that the new leader, not the old one, touched
 * (its ConfigChanged Event's reportingInstance): the old leader, whose pod is deleted just
 * before the change, gets SIGTERM and stops following within a second of the deletion, far
 * inside its debounce. Debug lines, for the handover row to read the new leader's verdict on
 * each change it saw.
 */
const DEBOUNCE_MS = 5_000;
/** How long the canary row's canary is watched: its fix is proved in that time. */
const CANARY_WINDOW_S = 20;
const FOLLOW_ARGS = [
  `--follow-debounce=${DEBOUNCE_MS / 1000}s`,
  '--follow-min-interval=1s',
  '--follow-canary-poll=1s',
  `--follow-canary-window=${CANARY_WINDOW_S}s`,
  '--log-level=debug',
];
/** The follower's debounce, less the time between its log line of a change and its timer. */
const VERDICT_NOT_BEFORE_MS = DEBOUNCE_MS - 250;

beforeAll(async () => {
  fixture = await attachNodeFixture();
  await fixture.k([
    'apply',
    '--server-side',
    '-k',
    await patchedOverlay('manifests/overlays/follow', [followArgs(FOLLOW_ARGS)]),
  ]);
  await fixture.rollout();
  await waitForReadyWebhookPods(fixture);
  await waitForReadyFollowPods(fixture);
});

afterAll(async () => {
  await fixture?.stop();
});

interface Lease {
  spec: { holderIdentity?: string; renewTime?: string; acquireTime?: string };
}

const lease = () =>
  fixture.json<Lease>(['get', 'lease', 'confighash-follow', '-n', SYSTEM_NAMESPACE]);

function app(greeting: string): string {
  return yamlDocuments(
    namespace(NS, 'follow'),
    configMap(NS, 'app-config', { GREETING: greeting }),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'app', namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'app' } },
        template: greetingPodTemplate('app', 'app-config'),
      },
    },
  );
}

const revision = async () =>
  Number(
    (
      await fixture.json<{ metadata: { annotations: Record<string, string> } }>([
        'get',
        'deployment',
        'app',
        '-n',
        NS,
      ])
    ).metadata.annotations['deployment.kubernetes.io/revision'],
  );

/** The app applied server-side and rolled out with its hash; its revision then. */
async function deployHashedApp(): Promise<number> {
  await fixture.k(['apply', '--server-side', '-f', '-'], app('hello'));
  await fixture.k(['rollout', 'status', 'deployment/app', '-n', NS, '--timeout=120s']);
  const hashed = await fixture.json<{
    spec: { template: { metadata: { annotations?: Record<string, string> } } };
  }>(['get', 'deployment', 'app', '-n', NS]);
  expect(hashed.spec.template.metadata.annotations?.[HASH]).toMatch(/^[0-9a-f]{64}$/);
  return revision();
}

/**
 * The lease of a leader renewing as it should now, its pod Ready. The test proves the release
 * on SIGTERM, which a leader that already lost the lead (its renewals unanswered — seen on this
 * node right after a leader starts its watches) has nothing left to release. So: one holder
 * renewing twice in a row, its last renewal fresh.
 */
async function waitForRenewingLeader(): Promise<Lease> {
  let current: Lease = { spec: {} };
  let renewals: string[] = [];
  // Every holder seen while waiting: more than one means a leader lost the lead before this
  // test touched it — the stall above, worth reading in a CI log when it happens.
  const holders = new Set<string>();
  const waitStarted = Date.now();
  await waitUntil(
    async () => {
      const previous = current;
      current = await lease();
      const { holderIdentity, renewTime } = current.spec;
      if (!holderIdentity || !renewTime) return false;
      holders.add(holderIdentity);
      if (holderIdentity !== previous.spec.holderIdentity) renewals = [];
      if (!renewals.includes(renewTime)) renewals.push(renewTime);
      return renewals.length >= 3 && Date.now() - Date.parse(renewTime) < RENEWAL_FRESH_MS;
    },
    'a follow leader renewing its lease',
    60_000,
  );
  const leader = current.spec.holderIdentity!;
  console.info(
    `follow: ${leader} renewing after ${Date.now() - waitStarted} ms; holders seen: ${[...holders].join(', ')}`,
  );
  const pods = await waitForReadyFollowPods(fixture);
  expect(pods.map((p) => p.metadata.name)).toContain(leader);
  return current;
}

/** Deletes the leader's pod and, out of band (no write of the workload carries it), changes the config. */
async function deleteLeaderAndChangeConfig(leader: string): Promise<void> {
  await fixture.k(['delete', 'pod', leader, '-n', SYSTEM_NAMESPACE, '--wait=false']);
  await changeGreeting(fixture, NS, 'app-config', 'bonjour');
}

interface Handover {
  /** The lease as another replica first holds it. */
  readonly lease: Lease;
  /** The old leader's last renewal the test saw, in ms since the epoch. */
  readonly lastRenewalByOldLeader: number;
}

/** Waits for another replica to lead, following the old leader's renewals until then. */
async function waitForAnotherLeader(leaderLease: Lease): Promise<Handover> {
  const oldLeader = leaderLease.spec.holderIdentity!;
  let current = leaderLease;
  let lastRenewalByOldLeader = Date.parse(leaderLease.spec.renewTime!);
  await waitUntil(
    async () => {
      current = await lease();
      if (current.spec.holderIdentity === oldLeader) {
        lastRenewalByOldLeader = Date.parse(current.spec.renewTime!);
        return false;
      }
      return Boolean(current.spec.holderIdentity);
    },
    'another replica to lead',
    120_000,
  );
  return { lease: current, lastRenewalByOldLeader };
}

/** The lead went to a Ready replica sooner than an expired lease could pass. */
async function expectReleasedOnSigterm(
  oldLeader: string,
  { lease: current, lastRenewalByOldLeader }: Handover,
  oldLeaderLog: Promise<KubectlResult>,
): Promise<void> {
  const newLeader = current.spec.holderIdentity!;
  expect(newLeader).not.toBe(oldLeader);
  // The other replica, or the one replacing the deleted pod: whichever saw the release first.
  const replicas = await waitForReadyFollowPods(fixture);
  expect(replicas.map((p) => p.metadata.name)).toContain(newLeader);
  const handover = Date.parse(current.spec.acquireTime!) - lastRenewalByOldLeader;
  console.info(
    `follow: lead passed from ${oldLeader} to ${newLeader} ${handover} ms after its last renewal`,
  );
  if (handover > LEASE_DURATION_MS) {
    const lines = (await oldLeaderLog).stdout.split('\n');
    console.info(lines.filter((line) => !line.includes('"level":"debug"')).join('\n'));
  }
  // An expired lease cannot pass sooner than a lease duration after its last renewal,
  // so a shorter handover proves the old leader released it on SIGTERM — even when a
  // request of its own hung then (each lease request is bounded, see lease.ts).
  expect(handover).toBeLessThan(LEASE_DURATION_MS);
}

/** The change rolls into one new Ready pod, which prints the new value. */
async function expectRolledToNewGreeting(startRevision: number): Promise<void> {
  await waitUntil(async () => (await revision()) > startRevision, 'the change to roll', 120_000);
  await fixture.k(['rollout', 'status', 'deployment/app', '-n', NS, '--timeout=120s']);
  let appPods: Pod[] = [];
  await waitUntil(
    async () => {
      appPods = (await fixture.json<{ items: Pod[] }>(['get', 'pods', '-n', NS, '-l', 'app=app']))
        .items;
      return appPods.length === 1 && isReady(appPods[0]!);
    },
    'one new pod Ready',
    120_000,
  );
  expect(await fixture.k(['logs', '-n', NS, appPods[0]!.metadata.name])).toContain(
    'greeting=bonjour',
  );
}

/** The app's ConfigChanged Events (one per touch) were all reported by `leader`'s pod. */
async function expectTouchedOnlyBy(leader: string): Promise<void> {
  const { items } = await fixture.json<{ items: { reportingInstance?: string }[] }>([
    'get',
    'events.events.k8s.io',
    '-n',
    NS,
    '--field-selector',
    'reason=ConfigChanged',
  ]);
  expect(items.map((event) => event.reportingInstance)).toEqual([leader]);
}

/**
 * Whether `leader` has judged every change of the app's sources it saw, each after its
 * debounce: a touch, or nothing to roll. A change it saw and has not judged yet may still roll.
 */
async function judgedEveryChangeSeen(leader: string): Promise<boolean> {
  const log = await fixture.k(['logs', '-n', SYSTEM_NAMESPACE, leader, '--tail=-1']);
  const judged = judgedEveryChange(followLogEntries(log), {
    namespace: NS,
    deployment: 'app',
    verdictNotBeforeMs: VERDICT_NOT_BEFORE_MS,
  });
  return judged !== undefined;
}

/**
 * Exactly once: nothing is left that could roll it again — the old leader's pod is gone, and
 * the new leader (which evaluated everything on taking the lead) has judged every change it
 * saw, past its debounce — and it rolled once.
 */
async function expectNoFurtherRollout(
  startRevision: number,
  oldLeader: string,
  newLeader: string,
): Promise<void> {
  await waitUntil(
    async () =>
      (await fixture.kubectl(['get', 'pod', oldLeader, '-n', SYSTEM_NAMESPACE])).stderr.includes(
        'NotFound',
      ),
    `the old leader's pod ${oldLeader} to be gone`,
    120_000,
  );
  await waitUntil(
    () => judgedEveryChangeSeen(newLeader),
    `the new leader's verdict on every change it saw`,
    60_000,
  );
  expect(await revision()).toBe(startRevision + 1);
}

// --- canary-first fan-out, with pods that crash ---------------------------------------

const CANARY_NS = 'follow-canary';
const SHARED = 'shared';
const READERS = ['app-1', 'app-2', 'app-3', 'app-4', 'app-5'];
/** Annotated, and not first by name: the annotation, not the order, makes it the canary. */
const CANARY_READER = 'app-3';
const OTHERS = READERS.filter((name) => name !== CANARY_READER);
const GOOD = 'hello';
/** The value the app refuses: it exits 1 at start (greetingPodTemplate's exitOn). */
const BAD = 'crash';
const FIXED = 'hello-again';
const ROLL_TIMEOUT_MS = 120_000;
/** The bound: a crash-looping canary halts its change within 2 minutes of its touch. */
const HALT_WITHIN_MS = 120_000;

function reader(name: string): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: CANARY_NS,
      ...(name === CANARY_READER ? { annotations: { [CANARY]: 'true' } } : {}),
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: greetingPodTemplate(name, SHARED, BAD),
    },
  };
}

interface Condition {
  type: string;
  reason?: string;
  lastUpdateTime?: string;
}

interface Listed {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { template?: { metadata: { annotations?: Record<string, string> } } };
  status?: { conditions?: Condition[] };
}

/** What a reader runs: the hash its template carries, its ReplicaSets, and its pods. */
interface ReaderState {
  readonly hash: string | undefined;
  readonly progressing: Condition | undefined;
  readonly replicaSets: readonly string[];
  readonly pods: readonly Pod[];
}

/** Every reader's Deployment, ReplicaSets and pods (those terminating left out), in one read. */
async function readers(): Promise<Map<string, ReaderState>> {
  const { items } = await fixture.json<{ items: Listed[] }>([
    'get',
    'deployments,replicasets,pods',
    '-n',
    CANARY_NS,
  ]);
  const of = (kind: string, name: string) =>
    items.filter((item) => item.kind === kind && item.metadata.labels?.app === name);
  return new Map(
    READERS.map((name) => {
      const deployment = items.find(
        (item) => item.kind === 'Deployment' && item.metadata.name === name,
      );
      return [
        name,
        {
          hash: deployment?.spec.template?.metadata.annotations?.[HASH],
          progressing: deployment?.status?.conditions?.find((c) => c.type === 'Progressing'),
          replicaSets: of('ReplicaSet', name).map((rs) => rs.metadata.name),
          pods: (of('Pod', name) as unknown as Pod[]).filter(
            (pod) => !pod.metadata.deletionTimestamp,
          ),
        },
      ];
    }),
  );
}

const greetingOf = async (pod: Pod) =>
  (await fixture.k(['logs', '-n', CANARY_NS, pod.metadata.name])).trim();

/** Each reader's one pod Ready and printing `greeting`. */
async function expectEachPrinting(
  state: Map<string, ReaderState>,
  greeting: string,
): Promise<void> {
  for (const [name, { pods }] of state) {
    expect(pods.map(isReady), name).toEqual([true]);
  }
  const printed = await Promise.all([...state.values()].map(({ pods }) => greetingOf(pods[0]!)));
  expect(printed).toEqual(READERS.map(() => `greeting=${greeting}`));
}

/** Five Deployments reading ConfigMap `shared`, rolled out; what each runs then. */
async function deployReaders(): Promise<Map<string, ReaderState>> {
  await fixture.k(
    ['apply', '--server-side', '-f', '-'],
    yamlDocuments(
      namespace(CANARY_NS, 'follow'),
      configMap(CANARY_NS, SHARED, { GREETING: GOOD }),
      ...READERS.map(reader),
    ),
  );
  await rolledOut(READERS);
  const state = await readers();
  for (const { hash } of state.values()) expect(hash).toMatch(/^[0-9a-f]{64}$/);
  await expectEachPrinting(state, GOOD);
  return state;
}

async function rolledOut(names: readonly string[]): Promise<void> {
  for (const name of names) {
    await fixture.k(['rollout', 'status', `deployment/${name}`, '-n', CANARY_NS, '--timeout=120s']);
  }
}

/** Waits until `check` holds of the readers; them then. */
async function waitForReaders(
  check: (state: Map<string, ReaderState>) => boolean,
  what: string,
): Promise<Map<string, ReaderState>> {
  let state = new Map<string, ReaderState>();
  await waitUntil(
    async () => {
      state = await readers();
      return check(state);
    },
    what,
    ROLL_TIMEOUT_MS,
  );
  return state;
}

const exitedOne = (pod: Pod) =>
  pod.status.containerStatuses?.some(
    (c) => c.state?.terminated?.exitCode === 1 || c.lastState?.terminated?.exitCode === 1,
  ) ?? false;

/**
 * The others exactly as they were: the same hash, the one ReplicaSet, the same pods, Ready and
 * never restarted — so still the processes that printed the first value.
 */
function expectUntouched(now: Map<string, ReaderState>, before: Map<string, ReaderState>): void {
  const running = (state: ReaderState | undefined) => ({
    hash: state?.hash,
    replicaSets: state?.replicaSets,
    pods: state?.pods.map((pod) => ({
      uid: pod.metadata.uid,
      ready: isReady(pod),
      restarts: pod.status.containerStatuses?.[0]?.restartCount,
    })),
  });
  for (const name of OTHERS) {
    expect(running(now.get(name)), name).toEqual(running(before.get(name)));
  }
}

interface EventsK8sIo {
  regarding: { kind: string; name: string };
  note: string;
  eventTime: string;
}

const eventsOf = async (reason: string) =>
  (
    await fixture.json<{ items: EventsK8sIo[] }>([
      'get',
      'events.events.k8s.io',
      '-n',
      CANARY_NS,
      '--field-selector',
      `reason=${reason}`,
    ])
  ).items;

/** ConfigMap `shared`'s fan-out record in `ns`, once it says halted (within HALT_WITHIN_MS). */
async function haltedRecord(ns: string): Promise<{ why?: string; since?: string }> {
  let record: { phase?: string; why?: string; since?: string } = {};
  await waitUntil(
    async () => {
      const { metadata } = await fixture.json<{
        metadata: { annotations?: Record<string, string> };
      }>(['get', 'configmap', SHARED, '-n', ns]);
      record = JSON.parse(metadata.annotations?.[FANOUT_STATE] ?? '{}');
      return record.phase === 'halted';
    },
    `the change halted on configmap/${SHARED} in ${ns}`,
    HALT_WITHIN_MS,
  );
  return record;
}

/**
 * The halt, as kept on the source and said in the FanoutHalted Warnings on the ConfigMap and
 * on the canary: the canary's pod, not its progress deadline; when the halt came.
 */
async function expectFanoutHalted(): Promise<{ why: string; since: number }> {
  const record = await haltedRecord(CANARY_NS);
  expect(record.why).toMatch(
    new RegExp(
      `^canary deployment/${CANARY_READER} failed: pod ${CANARY_READER}-\\S+: container app (restarted|CrashLoopBackOff)`,
    ),
  );
  await waitUntil(
    async () => (await eventsOf('FanoutHalted')).length === 2,
    'the FanoutHalted Events',
    ROLL_TIMEOUT_MS,
  );
  const events = await eventsOf('FanoutHalted');
  expect(events.map(({ regarding }) => `${regarding.kind}/${regarding.name}`).sort()).toEqual([
    `ConfigMap/${SHARED}`,
    `Deployment/${CANARY_READER}`,
  ]);
  for (const { note } of events) {
    expect(note).toContain(`of configmap/${SHARED} halted: ${record.why}; 5 workloads held`);
  }
  return { why: record.why!, since: Date.parse(record.since!) };
}

/**
 * The fix rolled the canary first: follow mode touched the others only once the canary's
 * rollout had finished (its Progressing condition's time is whole seconds, rounded down), and
 * each of them once — for the fix: no ReplicaSet of theirs ever had the bad value.
 */
async function expectCanaryFirst(state: Map<string, ReaderState>): Promise<void> {
  const touches = await eventsOf('ConfigChanged');
  const touchTimes = (name: string) =>
    touches
      .filter(({ regarding }) => regarding.name === name)
      .map(({ eventTime }) => Date.parse(eventTime));
  expect(touchTimes(CANARY_READER)).toHaveLength(2);
  expect(state.get(CANARY_READER)?.replicaSets).toHaveLength(3);
  for (const name of OTHERS) {
    expect(touchTimes(name), name).toHaveLength(1);
    expect(state.get(name)?.replicaSets, name).toHaveLength(2);
  }
  const finished = state.get(CANARY_READER)?.progressing;
  expect(finished?.reason).toBe('NewReplicaSetAvailable');
  const firstOtherTouch = Math.min(...OTHERS.flatMap(touchTimes));
  expect(firstOtherTouch).toBeGreaterThanOrEqual(Date.parse(finished!.lastUpdateTime!));
  // And not before the canary's window ended: it was watched for all of it.
  const canaryTouch = Math.max(...touchTimes(CANARY_READER));
  expect(firstOtherTouch - canaryTouch).toBeGreaterThanOrEqual(CANARY_WINDOW_S * 1000 - 1000);
}

// --- a canary whose new pods cannot be created ----------------------------------------

const CONFIG_ERROR_NS = 'follow-config-error';

/**
 * Two readers of `shared`; the canary's pods must run as non-root, and the image runs as root:
 * the kubelet refuses each new container with CreateContainerConfigError. (A config change
 * that removes a key its pods need never reaches a canary: follow mode holds it first,
 * RequiredConfigMissing, docs/design.md §6.)
 */
function configErrorReaders(): object[] {
  return ['app-a', 'app-b'].map((name) => {
    const template = greetingPodTemplate(name, SHARED) as { spec: Record<string, unknown> };
    const canary = name === 'app-a';
    return {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace: CONFIG_ERROR_NS,
        ...(canary ? { annotations: { [CANARY]: 'true' } } : {}),
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: canary
          ? { ...template, spec: { ...template.spec, securityContext: { runAsNonRoot: true } } }
          : template,
      },
    };
  });
}

describe('follow mode on a real node', () => {
  it('hands over the lead when the leader is deleted; a change made meanwhile rolls once', async () => {
    const startRevision = await deployHashedApp();
    const leaderLease = await waitForRenewingLeader();
    const oldLeader = leaderLease.spec.holderIdentity!;
    // The old leader's own account of its shutdown, to read when the handover is slow.
    const oldLeaderLog = fixture.kubectl(['logs', '-f', '-n', SYSTEM_NAMESPACE, oldLeader]);
    await deleteLeaderAndChangeConfig(oldLeader);
    const handover = await waitForAnotherLeader(leaderLease);
    await expectReleasedOnSigterm(oldLeader, handover, oldLeaderLog);
    await expectRolledToNewGreeting(startRevision);
    const newLeader = handover.lease.spec.holderIdentity!;
    await expectNoFurtherRollout(startRevision, oldLeader, newLeader);
    await expectTouchedOnlyBy(newLeader);
  });

  it('a canary whose new pod stays in CreateContainerConfigError halts the change within 2 minutes; the other is untouched', async () => {
    await fixture.k(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(
        namespace(CONFIG_ERROR_NS, 'follow'),
        configMap(CONFIG_ERROR_NS, SHARED, { GREETING: GOOD }),
        ...configErrorReaders(),
      ),
    );
    await fixture.k([
      'rollout',
      'status',
      'deployment/app-b',
      '-n',
      CONFIG_ERROR_NS,
      '--timeout=120s',
    ]);
    const hashOf = async (name: string) =>
      (await fixture.json<Listed>(['get', 'deployment', name, '-n', CONFIG_ERROR_NS])).spec.template
        ?.metadata.annotations?.[HASH];
    const before = await hashOf('app-b');
    await changeGreeting(fixture, CONFIG_ERROR_NS, SHARED, FIXED);
    const changed = Date.now();
    const record = await haltedRecord(CONFIG_ERROR_NS);
    expect(record.why).toMatch(
      /^canary deployment\/app-a failed: pod app-a-\S+: container app CreateContainerConfigError/,
    );
    expect(Date.parse(record.since!) - changed).toBeLessThan(HALT_WITHIN_MS);
    expect(await hashOf('app-b')).toBe(before);
  });

  it('a value that crashes the canary halts the change within 2 minutes of its touch, by its pod: four keep their old pods; the fix, proved on the canary, rolls all five', async () => {
    const started = Date.now();
    const before = await deployReaders();
    await changeGreeting(fixture, CANARY_NS, SHARED, BAD);
    const changed = Date.now();
    const { since } = await expectFanoutHalted();
    const failed = await readers();
    expect(failed.get(CANARY_READER)!.pods.some(exitedOne)).toBe(true);
    // Its pods, not the Deployment's progress deadline (600 s by default), halted it.
    expect(failed.get(CANARY_READER)!.progressing?.reason).not.toBe('ProgressDeadlineExceeded');
    expect(since - changed).toBeLessThan(HALT_WITHIN_MS);
    expectUntouched(failed, before);
    const halted = Date.now();

    await changeGreeting(fixture, CANARY_NS, SHARED, FIXED);
    await waitForReaders(
      (state) => READERS.every((name) => state.get(name)!.hash !== failed.get(name)!.hash),
      'every reader to take the fixed value',
    );
    await rolledOut(READERS);
    const fixed = await waitForReaders(
      (state) => [...state.values()].every(({ pods }) => pods.length === 1),
      'one pod per reader',
    );
    await expectEachPrinting(fixed, FIXED);
    await expectCanaryFirst(fixed);
    console.info(
      `canary: five readers up in ${(changed - started) / 1000} s; halted ` +
        `${(halted - changed) / 1000} s after the bad value; all five rolled ` +
        `${(Date.now() - halted) / 1000} s after the fix`,
    );
  });
});
