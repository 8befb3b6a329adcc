// The human output of plan and explain, pinned by golden files in
// test/fixtures/cli (regenerate with UPDATE_GOLDEN=1 and read the diff), and the
// JSON fields docs/design.md §9 names.

import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  type Explanation,
  explainWorkload,
  type Plan,
  renderExplanation,
  renderExplanationData,
  renderExplanationNames,
  renderPlan,
  renderPlanData,
  renderPlanNames,
} from '../../src/plan/index.js';
import { HANDLED_KINDS, type JsonObject } from '../../src/workload/index.js';
import { MemoryPlanCluster } from '../support/memory-plan-cluster.js';

const GOLDEN = new URL('../fixtures/cli/', import.meta.url);

async function expectGolden(name: string, actual: string): Promise<void> {
  const file = new URL(name, GOLDEN);
  if (process.env.UPDATE_GOLDEN) await writeFile(file, actual);
  expect(actual).toBe(await readFile(file, 'utf8'));
}

const PLAN: Plan = {
  workloads: [
    {
      kind: 'Deployment',
      group: 'apps',
      namespace: 'shop',
      name: 'web',
      verdict: 'roll',
      reasons: [
        'configmap/web-config changes: app.yaml, features.yaml',
        'secret/web-tls is created',
      ],
      changedSources: [
        { ref: 'configmap/web-config', changedKeys: ['app.yaml', 'features.yaml'] },
        { ref: 'secret/web-tls', changedKeys: ['tls.crt', 'tls.key'] },
      ],
      waitsForApproval: [],
    },
    {
      kind: 'StatefulSet',
      group: 'apps',
      namespace: 'shop',
      name: 'db',
      verdict: 'no-roll',
      reasons: ['only unselected keys of configmap/db-config change (debug)'],
      changedSources: [],
      waitsForApproval: [],
    },
    {
      kind: 'DaemonSet',
      group: 'apps',
      namespace: 'monitoring',
      name: 'agent',
      verdict: 'unknown',
      reasons: ['cannot read secret/agent-token: forbidden'],
      changedSources: [],
      waitsForApproval: [],
    },
  ],
  problems: ['cannot list daemonsets in shop (forbidden)'],
};

describe('plan output', () => {
  it('a table for people, aligned, with one line per further reason', async () => {
    await expectGolden('plan.txt', renderPlan(PLAN, { color: false }));
  });

  it('colours the verdicts only when asked (a TTY), keeping the alignment', async () => {
    const coloured = renderPlan(PLAN, { color: true });
    await expectGolden('plan-color.txt', coloured);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI colour codes
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(renderPlan(PLAN, { color: false }));
  });

  it('says so when nothing is planned', async () => {
    expect(renderPlan({ workloads: [], problems: [] }, { color: false })).toBe(
      'No workload in the manifests, and none reading their config.\n',
    );
  });

  it('JSON: a List of one object per workload with exactly the §9 fields', () => {
    const list = JSON.parse(renderPlanData(PLAN, 'json')) as {
      apiVersion: string;
      kind: string;
      items: Record<string, unknown>[];
    };
    expect(Object.keys(list)).toEqual(['apiVersion', 'kind', 'items']);
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    const parsed = list.items;
    expect(parsed).toHaveLength(3);
    for (const workload of parsed) {
      expect(Object.keys(workload)).toEqual([
        'kind',
        'group',
        'namespace',
        'name',
        'verdict',
        'reasons',
        'changedSources',
        'waitsForApproval',
      ]);
    }
    expect(parsed[0]!.changedSources).toEqual(PLAN.workloads[0]!.changedSources);
  });

  it('-o name: the workloads that will roll, as kubectl names them', () => {
    expect(renderPlanNames(PLAN)).toBe('deployment.apps/web\n');
  });
});

const DEPLOYMENT = HANDLED_KINDS[0]!;
const OLD = '1'.repeat(64);
const NEW = '2'.repeat(64);

function web(templateHash: string | undefined): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      managedFields: [
        { manager: 'kubectl', operation: 'Apply', time: '2026-11-30T09:00:00Z' },
        { manager: 'kube-controller-manager', subresource: 'status', time: '2026-11-30T09:30:00Z' },
      ],
      annotations: {
        'confighash.dev/exclude': 'secret/rotating-token',
        'confighash.dev/rollout-window': 'Mon-Fri 09:00-17:00 Europe/Berlin',
      },
    },
    spec: {
      template: {
        metadata: templateHash ? { annotations: { 'confighash.dev/hash': templateHash } } : {},
        spec: {
          volumes: [
            {
              name: 'c',
              configMap: { name: 'web-config', items: [{ key: 'app.yaml', path: 'a' }] },
            },
          ],
          containers: [
            {
              name: 'app',
              image: 'app:1',
              envFrom: [
                { secretRef: { name: 'web-secret' } },
                { secretRef: { name: 'rotating-token' } },
              ],
              env: [
                {
                  name: 'X',
                  valueFrom: { configMapKeyRef: { name: 'flags', key: 'x', optional: true } },
                },
              ],
            },
          ],
        },
      },
    },
  };
}

async function explained(configure: (cluster: MemoryPlanCluster) => void): Promise<Explanation> {
  const cluster = new MemoryPlanCluster().withNamespace('shop', {
    'confighash.dev/enabled': 'true',
  });
  cluster.configSource.configMap('web-config', { 'app.yaml': 'v: 1' });
  cluster.configSource.secret('web-secret', { password: 'hunter2' });
  cluster.workload('shop', web(OLD));
  configure(cluster);
  const result = await explainWorkload(
    cluster,
    DEPLOYMENT,
    'shop',
    'web',
    new AbortController().signal,
  );
  if (!result.ok) throw new Error(result.error);
  return result.explanation;
}

/** The webhook's answer to the dry-run: the template with `hash`. */
function answersWith(hash: string) {
  return (object: JsonObject) => {
    const copy = structuredClone(object) as {
      spec: { template: { metadata: Record<string, unknown> } };
    };
    copy.spec.template.metadata = { annotations: { 'confighash.dev/hash': hash } };
    return {
      status: 'found' as const,
      value: { object: copy as unknown as JsonObject, warnings: [] },
    };
  };
}

describe('explain output', () => {
  it('a stale hash in a `true` namespace: the next write rolls, and what to do about it', async () => {
    const explanation = await explained((cluster) => {
      cluster.dryRun = answersWith(NEW);
      cluster.writtenAt.set('ConfigMap/web-config', '2026-11-30T09:10:00Z');
      cluster.writtenAt.set('Secret/web-secret', '2026-11-30T08:00:00Z');
      cluster.events = {
        status: 'found',
        value: [
          {
            time: '2026-11-30T09:12:03Z',
            reason: 'ConfigChanged',
            note: 'configmap/web-config changed',
          },
        ],
      };
    });
    expect(explanation).toMatchObject({ templateHash: OLD, wouldWrite: NEW, nextWriteRolls: true });
    expect(explanation.explanation).toContain(
      'the next write rolls: configmap/web-config changed since the last write of the workload (2026-11-30T09:00:00Z)',
    );
    await expectGolden('explain-rolls.txt', renderExplanation(explanation, { color: false }));
  });

  it('a Recreate Deployment whose next write rolls: explain says it will be an outage', async () => {
    const explanation = await explained((cluster) => {
      cluster.dryRun = answersWith(NEW);
      const recreate = web(OLD);
      (recreate.spec as Record<string, unknown>).strategy = { type: 'Recreate' };
      cluster.workload('shop', recreate);
    });
    expect(explanation.nextWriteRolls).toBe(true);
    expect(explanation.explanation).toContain(
      'strategy Recreate: every pod stops before new ones start; this config change is an outage',
    );
  });

  it('up to date, with a Secret the user may not read', async () => {
    const explanation = await explained((cluster) => {
      cluster.dryRun = answersWith(OLD);
      cluster.configSource.fail('Secret', 'web-secret', 'forbidden');
      cluster.events = { status: 'failed', detail: 'forbidden' };
    });
    expect(explanation.nextWriteRolls).toBe(false);
    await expectGolden('explain-settled.txt', renderExplanation(explanation, { color: false }));
  });

  // docs/design.md §2 "opt workloads in one at a time".
  it.each([
    ['not annotated', {}, true],
    ['annotated "true"', { 'confighash.dev/enabled': 'true' }, false],
  ])(
    'in a namespace that handles annotated workloads only, %s',
    async (_n, annotations, notHandled) => {
      const explanation = await explained((cluster) => {
        cluster.withNamespace('shop', {
          'confighash.dev/enabled': 'follow',
          'confighash.dev/workloads': 'annotated',
        });
        cluster.dryRun = answersWith(OLD);
        const object = web(OLD);
        (object.metadata as Record<string, unknown>).annotations = annotations;
        cluster.workload('shop', object);
      });
      const line =
        'not handled: namespace shop handles annotated workloads only; this one is not annotated confighash.dev/enabled: "true"';
      expect(explanation.notHandled).toBe(notHandled);
      expect(explanation.explanation.includes(line)).toBe(notHandled);
      expect(explanation.explanation.some((l) => l.startsWith('the next write'))).toBe(!notHandled);
      const rendered = renderExplanation(explanation, { color: false });
      expect(rendered.includes('not handled  ')).toBe(notHandled);
      expect(JSON.parse(renderExplanationData([explanation], 'json', true))).toMatchObject({
        notHandled,
      });
    },
  );

  it('a webhook that does not answer is named, not taken for "rolls nothing"', async () => {
    const explanation = await explained((cluster) => cluster.workload('shop', web(undefined)));
    expect(explanation.webhook.reached).toBe(false);
    expect(explanation.explanation.join('\n')).toMatch(/the webhook was not reached/);
  });

  it('JSON carries the §9 fields', async () => {
    const explanation = await explained((cluster) => {
      cluster.dryRun = answersWith(NEW);
    });
    const parsed = JSON.parse(renderExplanationData([explanation], 'json', true)) as Record<
      string,
      unknown
    >;
    expect(parsed).toMatchObject({
      namespaceMode: 'true',
      optedOut: false,
      templateHash: OLD,
      adoptedHash: null,
      wouldWrite: NEW,
      nextWriteRolls: true,
    });
    expect(parsed.sources).toEqual([
      {
        ref: 'configmap/web-config',
        keys: ['app.yaml'],
        optional: false,
        state: 'found',
        resourceVersion: '1',
        missingRequiredKeys: [],
        fanout: null,
        awaitingApproval: null,
        lastWrite: null,
      },
      {
        ref: 'secret/web-secret',
        keys: 'all',
        optional: false,
        state: 'found',
        resourceVersion: '2',
        missingRequiredKeys: [],
        fanout: null,
        awaitingApproval: null,
        lastWrite: null,
      },
      {
        ref: 'configmap/flags',
        keys: ['x'],
        optional: true,
        state: 'absent',
        resourceVersion: null,
        missingRequiredKeys: [],
        fanout: null,
        awaitingApproval: null,
        lastWrite: null,
      },
    ]);
    expect(JSON.stringify(parsed)).not.toContain('hunter2');
  });
});

describe("explain in a follow namespace reads the follower's Lease", () => {
  const follow = (cluster: MemoryPlanCluster) => {
    cluster.withNamespace('shop', { 'confighash.dev/enabled': 'follow' });
    cluster.dryRun = answersWith(NEW);
  };
  const VACANT = {
    status: 'found' as const,
    value: {
      lease: 'confighash-system/confighash-follow',
      holder: null,
      vacant: 'there is no Lease',
    },
  };

  it.each([
    [
      'a follower leads: follow mode touches it',
      undefined,
      'follow mode touches it once due (debounce, minimum interval, rollout window)',
    ],
    [
      'no Lease: no follower is leading, and how to touch it',
      VACANT,
      "no follower is leading (Lease confighash-system/confighash-follow: there is no Lease): nothing touches it until one does; touch it yourself: kubectl patch deployment/web -n shop --type=merge -p '{}'",
    ],
    [
      'an expired holder: no follower is leading',
      {
        status: 'found' as const,
        value: {
          lease: 'confighash-system/confighash-follow',
          holder: null,
          vacant: 'follower-0 held it, not renewed since 2026-11-30T09:00:00.000000Z',
        },
      },
      'no follower is leading (Lease confighash-system/confighash-follow: follower-0 held it, not renewed since 2026-11-30T09:00:00.000000Z): nothing touches it until one does',
    ],
    [
      'a Lease you may not read: not known',
      { status: 'failed' as const, detail: 'forbidden' },
      "you cannot read the follower's Lease (forbidden): whether a follower leads is not known",
    ],
  ])('%s', async (_name, leader, line) => {
    const explanation = await explained((cluster) => {
      follow(cluster);
      if (leader) cluster.leader = leader;
    });
    expect(explanation.nextWriteRolls).toBe(true);
    expect(explanation.explanation.some((one) => one.startsWith(line))).toBe(true);
  });

  it('outside a follow namespace the Lease is not read', async () => {
    const explanation = await explained((cluster) => {
      cluster.dryRun = answersWith(NEW);
      cluster.leader = VACANT;
    });
    expect(explanation.follower).toBeNull();
    expect(explanation.explanation.join('\n')).not.toMatch(/follower/);
  });
});

describe('explain without the right to patch', () => {
  it('says the dry-run patch is forbidden and which right it needs, instead of "webhook not reached"', async () => {
    const cluster = new MemoryPlanCluster().withNamespace('shop', {
      'confighash.dev/enabled': 'true',
    });
    cluster.workload('shop', web(OLD));
    cluster.dryRun = () => ({ status: 'failed', detail: 'forbidden' });
    const result = await explainWorkload(
      cluster,
      DEPLOYMENT,
      'shop',
      'web',
      new AbortController().signal,
    );
    expect(result).toEqual({
      ok: false,
      error:
        'you may not patch deployments.apps in namespace shop (forbidden): explain asks the webhook about deployment/web through a server-side dry-run patch, which needs the patch verb on deployments.apps (nothing is written)',
    });
  });

  it('in a namespace not opted in the dry-run is not needed: no mistake', async () => {
    const cluster = new MemoryPlanCluster().withNamespace('shop', {});
    cluster.workload('shop', web(OLD));
    cluster.dryRun = () => ({ status: 'failed', detail: 'forbidden' });
    const result = await explainWorkload(
      cluster,
      DEPLOYMENT,
      'shop',
      'web',
      new AbortController().signal,
    );
    expect(result.ok).toBe(true);
  });

  it('-o json of one named workload is the object; of several, or a selection, a List', () => {
    const one = { kind: 'Deployment', group: 'apps', name: 'web' } as unknown as Explanation;
    expect(JSON.parse(renderExplanationData([one], 'json', true))).toEqual(one);
    expect(JSON.parse(renderExplanationData([one], 'json', false))).toEqual({
      apiVersion: 'v1',
      kind: 'List',
      items: [one],
    });
    expect(renderExplanationNames([one, { ...one, name: 'api' }])).toBe(
      'deployment.apps/web\ndeployment.apps/api\n',
    );
  });
});
