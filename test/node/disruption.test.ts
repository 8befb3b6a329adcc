// Zero dropped writes while confighash itself is disrupted, on a real node:
// continuous server-side applies of workloads (at least 10/s, from just before
// the disruption until it is over: the Service routes only to Ready replicas that
// stay, and every replica that goes has had its SIGTERM)
// while it is rolling-restarted, while one replica's pod is deleted, and while one
// replica's container is killed with SIGKILL. Every applied workload must carry
// the right hash, and the apiserver's own counters for the webhook (fail-open,
// non-200 answers) must not move in the graceful cases. The SIGKILL case is
// measured and reported, not held to zero: a killed process cannot answer the
// reviews it was holding.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_MAC } from '../../tools/cluster/node.js';
import { waitUntil } from '../support/e2e.js';
import {
  attachNodeFixture,
  containerPid,
  expectNothingDropped,
  type NodeFixture,
  type Pod,
  SYSTEM_NAMESPACE,
  underLoad,
  waitForReadyWebhookPods,
  waitUntilOnlyStayingReplicasServe,
  webhookPods,
} from '../support/node.js';

/** Restarts of a webhook pod's container, as the kubelet reports them now. */
async function restartsOf(pod: Pod): Promise<number> {
  const now = (await webhookPods(fixture)).find((p) => p.metadata.uid === pod.metadata.uid);
  return now?.status.containerStatuses?.[0]?.restartCount ?? 0;
}

const CASE_TIMEOUT_MS = 420_000;
let fixture: NodeFixture;

beforeAll(async () => {
  fixture = await attachNodeFixture();
  await fixture.install('default');
  await waitForReadyWebhookPods(fixture);
});

afterAll(async () => {
  await fixture?.stop();
});

describe('continuous applies while confighash is disrupted', () => {
  it(
    'a rolling restart drops nothing',
    async () => {
      const result = await underLoad(fixture, 'load-restart', async () => {
        await fixture.k(['rollout', 'restart', 'deployment/confighash', '-n', SYSTEM_NAMESPACE]);
        await fixture.rollout();
        await waitUntilOnlyStayingReplicasServe(fixture);
      });
      expectNothingDropped(result);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'deleting one replica drops nothing',
    async () => {
      const [victim] = await waitForReadyWebhookPods(fixture);
      const result = await underLoad(fixture, 'load-delete', async () => {
        await fixture.k([
          'delete',
          'pod',
          victim!.metadata.name,
          '-n',
          SYSTEM_NAMESPACE,
          '--wait=false',
        ]);
        await waitUntilOnlyStayingReplicasServe(fixture);
      });
      expectNothingDropped(result);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'SIGKILL of one replica: every write is admitted, and the cost is measured',
    async () => {
      const [victim] = await waitForReadyWebhookPods(fixture);
      const containerId = victim!.status.containerStatuses![0]!.containerID!;
      let pods: Pod[] = [];
      const result = await underLoad(fixture, 'load-sigkill', async () => {
        const pid = await containerPid(fixture, containerId);
        await fixture.cluster.node.namespaces.exec('kill', ['-KILL', String(pid)]);
        // The kubelet restarts the killed container.
        await waitUntil(
          async () => (await restartsOf(victim!)) > 0,
          'the killed container to be restarted',
          120_000,
        );
        pods = await waitForReadyWebhookPods(fixture);
      });
      // failurePolicy Ignore: no write is refused, whatever happens to a replica.
      expect(result.report.failed).toEqual([]);
      const restarted = pods.find((pod) => pod.metadata.uid === victim!.metadata.uid);
      expect(restarted?.status.containerStatuses?.[0]?.restartCount).toBeGreaterThanOrEqual(1);
      // What it cost: writes admitted without the hash while the apiserver still dialled it.
      expect(result.report.wrongHash.length).toBe(result.failOpen);
    },
    CASE_TIMEOUT_MS,
  );

  it("the node's bridge keeps its own address while replicas come and go", async () => {
    // Taking a leaving pod's would cut the others off from the apiserver (tools/cluster/node.ts).
    const link = await fixture.cluster.node.namespaces.exec('ip', ['-o', 'link', 'show', 'cni0']);
    expect(/link\/ether (\S+)/.exec(link)?.[1]).toBe(BRIDGE_MAC);
  });
});
