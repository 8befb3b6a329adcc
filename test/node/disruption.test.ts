// Zero dropped writes while confighash itself is disrupted, on a real node:
// continuous server-side applies of workloads (at least 10/s for 60 s) while it
// is rolling-restarted, while one replica's pod is deleted, and while one
// replica's container is killed with SIGKILL. Every applied workload must carry
// the right hash, and the apiserver's own counters for the webhook (fail-open,
// non-200 answers) must not move in the graceful cases. The SIGKILL case is
// measured and reported, not held to zero: a killed process cannot answer the
// reviews it was holding.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  containerPid,
  expectNothingDropped,
  type NodeFixture,
  SYSTEM_NAMESPACE,
  startNodeFixture,
  underLoad,
  waitForNoTerminatingPods,
  waitForReadyWebhookPods,
  webhookCounters,
} from '../support/node.js';

const CASE_TIMEOUT_MS = 420_000;
let fixture: NodeFixture;

beforeAll(async () => {
  fixture = await startNodeFixture();
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
      });
      expectNothingDropped(result);
      // The old replicas drain until the apiserver has closed their connections.
      await waitForNoTerminatingPods(fixture);
      expect((await webhookCounters(fixture)).failOpen).toBe(0);
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
      });
      expectNothingDropped(result);
      await waitForNoTerminatingPods(fixture);
      await waitForReadyWebhookPods(fixture);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'SIGKILL of one replica: every write is admitted, and the cost is measured',
    async () => {
      const [victim] = await waitForReadyWebhookPods(fixture);
      const containerId = victim!.status.containerStatuses![0]!.containerID!;
      const result = await underLoad(fixture, 'load-sigkill', async () => {
        const pid = await containerPid(fixture, containerId);
        await fixture.cluster.node.namespaces.exec('kill', ['-KILL', String(pid)]);
      });
      // failurePolicy Ignore: no write is refused, whatever happens to a replica.
      expect(result.report.failed).toEqual([]);
      // The kubelet restarts the killed container.
      const pods = await waitForReadyWebhookPods(fixture);
      const restarted = pods.find((pod) => pod.metadata.uid === victim!.metadata.uid);
      expect(restarted?.status.containerStatuses?.[0]?.restartCount).toBeGreaterThanOrEqual(1);
      // What it cost: writes admitted without the hash while the apiserver still dialled it.
      expect(result.report.wrongHash.length).toBe(result.failOpen);
    },
    CASE_TIMEOUT_MS,
  );
});
