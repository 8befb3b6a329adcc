// `confighash doctor` (src/plan/doctor.ts): each check ok or FAIL with what to do; a check
// that needs a failed one is skipped; the follower is checked in a follow namespace only.

import { describe, expect, it } from 'vitest';
import {
  type DoctorCheck,
  type DryRunTouch,
  diagnose,
  type Read,
  type WebhookRegistration,
} from '../../src/plan/index.js';
import type { JsonObject, WorkloadKind } from '../../src/workload/index.js';
import { MemoryPlanCluster } from '../support/memory-plan-cluster.js';

class MemoryDoctorCluster extends MemoryPlanCluster {
  registration: Read<WebhookRegistration> = {
    status: 'found',
    value: {
      webhooks: 1,
      failurePolicies: ['Ignore'],
      target: 'service confighash-system/confighash',
    },
  };
  /** The webhook hashes what it is sent, by default. */
  created: (probe: JsonObject) => Read<DryRunTouch> = (probe) => {
    const copy = structuredClone(probe) as {
      spec: { template: { metadata: Record<string, unknown> } };
    };
    copy.spec.template.metadata.annotations = { 'confighash.dev/hash': 'a'.repeat(64) };
    return { status: 'found', value: { object: copy as unknown as JsonObject, warnings: [] } };
  };
  readonly probes: JsonObject[] = [];

  async webhookRegistration(): Promise<Read<WebhookRegistration>> {
    return this.registration;
  }

  async dryRunCreate(
    _kind: WorkloadKind,
    _ns: string,
    probe: JsonObject,
  ): Promise<Read<DryRunTouch>> {
    this.probes.push(probe);
    return this.created(probe);
  }
}

async function checks(configure: (cluster: MemoryDoctorCluster) => void): Promise<DoctorCheck[]> {
  const cluster = new MemoryDoctorCluster().withNamespace('demo', {
    'confighash.dev/enabled': 'true',
  });
  configure(cluster);
  return diagnose(
    cluster,
    { namespace: 'demo', webhookConfiguration: 'confighash', probeName: 'confighash-doctor-1' },
    new AbortController().signal,
  );
}

const states = (list: DoctorCheck[]) => list.map(({ state }) => state);

describe('doctor', () => {
  it('a `true` namespace with the webhook answering: three checks, all ok, and what `true` means', async () => {
    const list = await checks(() => {});
    expect(states(list)).toEqual(['ok', 'ok', 'ok']);
    expect(list[0]!.what).toBe(
      'MutatingWebhookConfiguration confighash is registered (1 webhook, failurePolicy Ignore, calls service confighash-system/confighash)',
    );
    expect(list[1]!.what).toMatch(
      /^namespace demo is opted in, confighash.dev\/enabled=true: admission only/,
    );
    expect(list[2]!.what).toMatch(/^the webhook answers/);
  });

  it('the probe is a Deployment opted in by annotation that reads an optional ConfigMap', async () => {
    let probe: JsonObject | undefined;
    await checks((cluster) => {
      cluster.created = (object) => {
        probe = object;
        return { status: 'found', value: { object, warnings: [] } };
      };
    });
    expect(probe).toMatchObject({
      kind: 'Deployment',
      metadata: { name: 'confighash-doctor-1', annotations: { 'confighash.dev/enabled': 'true' } },
    });
    expect(JSON.stringify(probe)).toContain('"optional":true');
  });

  it.each([
    [
      'not registered',
      (c: MemoryDoctorCluster) => {
        c.registration = { status: 'absent' };
      },
      ['FAIL', 'ok', 'skip'],
      /^install confighash/,
    ],
    [
      'the registration unreadable',
      (c: MemoryDoctorCluster) => {
        c.registration = { status: 'failed', detail: 'forbidden' };
      },
      ['FAIL', 'ok', 'skip'],
      /you need get on mutatingwebhookconfigurations/,
    ],
    [
      'a namespace not opted in',
      (c: MemoryDoctorCluster) => {
        c.withNamespace('demo', {});
      },
      ['ok', 'FAIL', 'skip'],
      /^kubectl label namespace demo confighash.dev\/enabled=true \(admission only\) or confighash.dev\/enabled=follow/,
    ],
    [
      'the webhook not answering',
      (c: MemoryDoctorCluster) => {
        c.created = (object) => ({ status: 'found', value: { object, warnings: [] } });
      },
      ['ok', 'ok', 'FAIL'],
      /is confighash running/,
    ],
    [
      'a dry-run create forbidden',
      (c: MemoryDoctorCluster) => {
        c.created = () => ({ status: 'failed', detail: 'forbidden' });
      },
      ['ok', 'ok', 'FAIL'],
      /you need create on deployments.apps in demo/,
    ],
  ])('%s: FAIL with what to do', async (_name, configure, expected, todo) => {
    const list = await checks(configure);
    expect(states(list)).toEqual(expected);
    expect(list.find(({ state }) => state === 'FAIL')!.todo).toMatch(todo);
  });

  it.each([
    [
      'a follower leads',
      undefined,
      'ok',
      /^a follower leads: follower-0 \(Lease confighash-system\/confighash-follow\)$/,
    ],
    [
      'no Lease',
      {
        status: 'found' as const,
        value: {
          lease: 'confighash-system/confighash-follow',
          holder: null,
          vacant: 'there is no Lease',
        },
      },
      'FAIL',
      /^no follower is leading \(Lease confighash-system\/confighash-follow: there is no Lease\)/,
    ],
    [
      'the Lease unreadable',
      { status: 'failed' as const, detail: 'forbidden' },
      'FAIL',
      /^cannot read the follower's Lease \(forbidden\)$/,
    ],
  ])('a follow namespace, %s: a fourth check', async (_name, leader, state, what) => {
    const list = await checks((cluster) => {
      cluster.withNamespace('demo', { 'confighash.dev/enabled': 'follow' });
      if (leader) cluster.leader = leader;
    });
    expect(list[1]!.what).toMatch(/=follow: admission, and follow mode/);
    expect(list).toHaveLength(4);
    expect(list[3]).toMatchObject({ state });
    expect(list[3]!.what).toMatch(what);
  });
});
