// Argo Rollouts on a real node with its real controller (built from Go modules,
// tools/build-argo-rollouts.sh): confighash installed with follow mode and the
// argo-rollouts component hashes a canary Rollout's pod template; Argo Rollouts
// turns that template into ReplicaSets. Re-applying the same Rollout rolls
// nothing (forced: Argo's controller owns the containers after its first write);
// a change of the ConfigMap its pods read through env (no write of the Rollout:
// follow mode touches it) makes exactly one new ReplicaSet, whose pods print the
// new value, while the old one scales to 0 — and follow's next resync of the
// namespace rolls nothing more.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import { type ArgoRollouts, startArgoRollouts } from '../../tools/cluster/argo-rollouts.js';
import { configMap, namespace, waitUntil, yamlDocuments } from '../support/e2e.js';
import {
  attachNodeFixture,
  changeGreeting,
  FOLLOW_PODS,
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

const NS = 'argo-app';
const NAME = 'app';
const CONFIG_MAP = 'app-config';
const REPLICAS = 2;
/** Argo Rollouts' label on the ReplicaSets and pods of one template. */
const POD_TEMPLATE_HASH = 'rollouts-pod-template-hash';
/** Follow mode's resync, short so that the test sees one after the roll. */
const FOLLOW_ARGS = [
  '--follow-resync=2s',
  '--follow-debounce=1s',
  '--follow-min-interval=1s',
  // The resync's line is a debug line.
  '--log-level=debug',
];
const ROLL_TIMEOUT_MS = 180_000;

let fixture: NodeFixture;
let argo: ArgoRollouts;

/** manifests/overlays/follow with the argo-rollouts component, as a user would compose them. */
function followWithArgoRollouts(): Promise<string> {
  return patchedOverlay(
    'manifests/overlays/follow',
    [followArgs(FOLLOW_ARGS)],
    ['manifests/components/argo-rollouts'],
  );
}

beforeAll(async () => {
  fixture = await attachNodeFixture();
  argo = await startArgoRollouts({
    kubeconfig: fixture.cluster.kubeconfig,
    kubectl: fixture.kubectl,
    dir: fixture.cluster.dir,
  });
  await fixture.k(['apply', '--server-side', '-k', await followWithArgoRollouts()]);
  await fixture.rollout();
  await waitForReadyWebhookPods(fixture);
  await waitForReadyFollowPods(fixture);
});

afterAll(async () => {
  await argo?.stop();
  await fixture?.stop();
});

function app(greeting: string): string {
  return yamlDocuments(namespace(NS, 'follow'), configMap(NS, CONFIG_MAP, { GREETING: greeting }), {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name: NAME, namespace: NS },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: NAME } },
      // No traffic router: the weight is a share of the pods.
      strategy: { canary: { steps: [{ setWeight: 50 }, { pause: { duration: '2s' } }] } },
      template: greetingPodTemplate(NAME, CONFIG_MAP),
    },
  });
}

interface Rollout {
  metadata: { generation: number };
  spec: { template: { metadata: { annotations?: Record<string, string> } } };
  status?: {
    phase?: string;
    stableRS?: string;
    currentPodHash?: string;
    /** A string in Argo Rollouts' status. */
    observedGeneration?: string;
  };
}

interface ReplicaSet {
  metadata: {
    name: string;
    labels: Record<string, string>;
    ownerReferences?: { kind: string; name: string }[];
  };
  spec: { replicas?: number };
  status: { replicas?: number; readyReplicas?: number };
}

const rollout = () => fixture.json<Rollout>(['get', 'rollout', NAME, '-n', NS]);
const templateHash = (r: Rollout) => r.spec.template.metadata.annotations?.[HASH];

/** The Rollout's ReplicaSets, by Argo Rollouts' pod-template-hash label. */
async function replicaSets(): Promise<Map<string, ReplicaSet>> {
  const list = await fixture.json<{ items: ReplicaSet[] }>(['get', 'rs', '-n', NS]);
  const owned = list.items.filter((rs) =>
    rs.metadata.ownerReferences?.some((o) => o.kind === 'Rollout' && o.name === NAME),
  );
  return new Map(owned.map((rs) => [rs.metadata.labels[POD_TEMPLATE_HASH]!, rs]));
}

/** Waits until the Rollout is Healthy on a stable ReplicaSet other than `previous`; returns its hash. */
async function waitForHealthy(previous?: string): Promise<string> {
  let stable = '';
  await waitUntil(
    async () => {
      const status = (await rollout()).status;
      stable = status?.stableRS ?? '';
      return (
        status?.phase === 'Healthy' &&
        stable !== '' &&
        stable !== previous &&
        status.currentPodHash === stable
      );
    },
    `the Rollout Healthy on a new stable ReplicaSet (previous: ${previous ?? 'none'})`,
    ROLL_TIMEOUT_MS,
  );
  return stable;
}

/** Waits until Argo Rollouts has acted on the Rollout's current generation; returns the Rollout. */
async function waitForObserved(): Promise<Rollout> {
  let current: Rollout | undefined;
  await waitUntil(
    async () => {
      current = await rollout();
      return current.status?.observedGeneration === String(current.metadata.generation);
    },
    "Argo Rollouts to observe the Rollout's generation",
    ROLL_TIMEOUT_MS,
  );
  return current!;
}

/** Waits until the template's ReplicaSet has all its pods Ready; returns the pods. */
async function waitForReadyPods(podHash: string): Promise<Pod[]> {
  let pods: Pod[] = [];
  await waitUntil(
    async () => {
      const selector = `app=${NAME},${POD_TEMPLATE_HASH}=${podHash}`;
      pods = (await fixture.json<{ items: Pod[] }>(['get', 'pods', '-n', NS, '-l', selector]))
        .items;
      return pods.length === REPLICAS && pods.every(isReady);
    },
    `${REPLICAS} Ready pods of ReplicaSet ${podHash}`,
    ROLL_TIMEOUT_MS,
  );
  return pods;
}

/** Waits until each pod has printed the greeting it read from the ConfigMap. */
async function expectGreeting(pods: Pod[], greeting: string): Promise<void> {
  for (const pod of pods) {
    await waitUntil(
      async () =>
        (await fixture.k(['logs', '-n', NS, pod.metadata.name])).includes(`greeting=${greeting}`),
      `pod ${pod.metadata.name} to print greeting=${greeting}`,
      60_000,
    );
  }
}

interface FollowLine {
  msg?: string;
  kind?: string;
  namespace?: string;
  name?: string;
}

/** Every JSON log line of every confighash-follow pod. */
async function followLog(): Promise<FollowLine[]> {
  const text = await fixture.k(['logs', '-n', SYSTEM_NAMESPACE, '-l', FOLLOW_PODS, '--tail=-1']);
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as FollowLine);
}

/** Follow mode's log lines about the Rollout with message `msg`. */
async function followLines(msg: string): Promise<number> {
  return (await followLog()).filter(
    (l) => l.msg === msg && l.kind === 'Rollout' && l.namespace === NS && l.name === NAME,
  ).length;
}

/** Follow mode's resyncs so far: a resync names no workload, so it is counted on its own. */
async function resyncs(): Promise<number> {
  return (await followLog()).filter((l) => l.msg === 'follow: resync').length;
}

describe('Argo Rollouts with its own controller on a real node', () => {
  it('rolls one new ReplicaSet of a canary Rollout when its config changes, and only then', async () => {
    // (a) The first create: hashed, one ReplicaSet, its pods Ready with the first value.
    await fixture.k(['apply', '--server-side', '-f', '-'], app('hello'));
    const first = await waitForHealthy();
    const created = await rollout();
    const firstHash = templateHash(created);
    expect(firstHash).toMatch(/^[0-9a-f]{64}$/);
    expect([...(await replicaSets()).keys()]).toEqual([first]);
    await expectGreeting(await waitForReadyPods(first), 'hello');

    // (b) The same Rollout again. Argo Rollouts' controller writes the whole Rollout back with
    // an update when it sets its revision annotation (rollout/sync.go setRolloutRevision), which
    // re-serialises the containers (`resources: {}`) and so takes the atomic containers list
    // over from kubectl: a plain server-side re-apply conflicts, as it would for any user.
    // Forced, the apply changes the stored spec back (a new generation), and the webhook's hash
    // — computed afresh, kubectl's manifest carries none — must be the same, or a ReplicaSet rolls.
    await fixture.k(['apply', '--server-side', '--force-conflicts', '-f', '-'], app('hello'));
    const reapplied = await waitForObserved();
    expect(templateHash(reapplied)).toBe(firstHash);
    expect(reapplied.status?.stableRS).toBe(first);
    expect([...(await replicaSets()).keys()]).toEqual([first]);

    // (c) Out of band: no write of the Rollout carries this change; follow mode touches it.
    const touchedBefore = await followLines('follow: touched');
    await changeGreeting(fixture, NS, CONFIG_MAP, 'bonjour');
    const second = await waitForHealthy(first);
    expect(templateHash(await rollout())).not.toBe(firstHash);
    await expectGreeting(await waitForReadyPods(second), 'bonjour');
    await waitUntil(
      async () => {
        const old = (await replicaSets()).get(first);
        return old?.spec.replicas === 0 && (old.status.replicas ?? 0) === 0;
      },
      `the old ReplicaSet ${first} scaled to 0`,
      ROLL_TIMEOUT_MS,
    );
    expect([...(await replicaSets()).keys()].sort()).toEqual([first, second].sort());
    expect((await followLines('follow: touched')) - touchedBefore).toBe(1);

    // Follow's next two resyncs after the rollout (every 2 s here) roll nothing: against the
    // index, the Rollout's sources have not moved since the touch evaluated it.
    const resyncsBefore = await resyncs();
    await waitUntil(
      async () => (await resyncs()) >= resyncsBefore + 2,
      'two resyncs of follow mode after the rollout',
      60_000,
    );
    expect([...(await replicaSets()).keys()].sort()).toEqual([first, second].sort());
    expect((await followLines('follow: touched')) - touchedBefore).toBe(1);
    expect((await rollout()).status?.stableRS).toBe(second);
  });
});
