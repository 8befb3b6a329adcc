// The follow overlay on a real node: the webhook's two replicas, and follow
// mode's own Deployment, confighash-follow, whose two replicas elect one leader.
// Deleting the leader's pod hands the Lease to the other confighash-follow pod
// within the lease duration (15 s, counted from the old leader's last renewal by
// the apiserver's own timestamps), and a ConfigMap changed meanwhile — with no
// write of the workload — rolls it exactly once, into pods that print the new value.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import type { KubectlResult } from '../../tools/cluster/kubectl.js';
import { configMap, namespace, waitUntil, yamlDocuments } from '../support/e2e.js';
import {
  attachNodeFixture,
  changeGreeting,
  greetingPodTemplate,
  isReady,
  type NodeFixture,
  type Pod,
  SYSTEM_NAMESPACE,
  waitForReadyFollowPods,
  waitForReadyWebhookPods,
} from '../support/node.js';

const LEASE_DURATION_MS = 15_000;
/** A renewal younger than one retry period (2 s) and some polling: the leader is renewing now. */
const RENEWAL_FRESH_MS = 3_000;
const NS = 'follow-app';
let fixture: NodeFixture;

beforeAll(async () => {
  fixture = await attachNodeFixture();
  await fixture.install('follow');
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
    console.info(lines.filter((line) => !line.includes('"level":20')).join('\n'));
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

/** Exactly once: past another debounce window and resync of the new leader, nothing more. */
async function expectNoFurtherRollout(startRevision: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 25_000));
  expect(await revision()).toBe(startRevision + 1);
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
    await expectNoFurtherRollout(startRevision);
  });
});
