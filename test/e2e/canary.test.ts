// Canary-first fan-out on a real control plane (docs/design.md §6): one ConfigMap read by ten
// Deployments. With no kubelet, a Deployment of one replica never becomes available, so as
// the canary it never finishes: the fan-out halts at --follow-canary-timeout with the nine
// others untouched, and says so (Events, the metric, explain). Deployments of zero replicas
// finish at once: the next change then rolls all ten, the canary first, the rest in name order.
// With --follow-max-fanout 10, a ConfigMap read by eleven waits for its approval instead
// (docs/design.md §6, approval above a size): plan says so before, the Event names the
// digest, explain says so meanwhile, and the annotation that names the digest rolls all eleven.

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { httpRequest } from '../../tools/cluster/http.js';
import { type LocalFollower, startLocalFollower } from '../../tools/cluster/webhook.js';
import {
  configMap,
  e2eFile,
  namespace,
  waitUntil,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { runConfighash } from '../support/process.js';

const CANARY_TIMEOUT_S = 10;
/** The canary rows' ten readers are within it; the approval row's eleven are not. */
const MAX_FANOUT = 10;
let follower: LocalFollower;

const file = e2eFile([], {
  async setup({ e2e }) {
    follower = await startLocalFollower({
      dir: e2e.dir,
      kubeconfig: e2e.controlPlane.kubeconfig,
      webhook: e2e.webhook,
      extraArgs: [
        '--lease-namespace=default',
        '--follow-debounce=1s',
        '--follow-min-interval=1s',
        '--follow-rate=50',
        `--follow-canary-timeout=${CANARY_TIMEOUT_S}s`,
        '--follow-canary-poll=500ms',
        `--follow-max-fanout=${MAX_FANOUT}`,
      ],
    });
  },
  async teardown() {
    await follower.stop();
  },
});

const appNames = (count: number) => Array.from({ length: count }, (_, i) => `app-${i}`);
const NAMES = appNames(10);

/** Deployments reading ConfigMap `shared` (ten unless `names` says); `replicas` of each, by name. */
async function tenReaders(
  ns: string,
  replicas: (name: string) => number,
  canary?: string,
  names = NAMES,
) {
  const readers = names.map((name) => {
    const object = workload(ns, name, {
      podSpec: {
        containers: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            envFrom: [{ configMapRef: { name: 'shared' } }],
          },
        ],
      },
      ...(name === canary ? { annotations: { 'confighash.dev/canary': 'true' } } : {}),
    }) as { spec: Record<string, unknown> };
    return { ...object, spec: { ...object.spec, replicas: replicas(name) } };
  });
  await file.e2e.k(
    ['apply', '-f', '-'],
    yamlDocuments(namespace(ns, 'follow'), configMap(ns, 'shared', { LEVEL: 'info' }), ...readers),
  );
  // Each at revision 1 (its ReplicaSet made): by then the follower's workload watch has them.
  expect(Object.values(await revisions(ns, names))).toEqual(Array(names.length).fill(1));
}

async function logLines(): Promise<
  { msg: string; namespace?: string; name?: string; workload?: string }[]
> {
  const text = await readFile(`${file.e2e.dir}/confighash-follow.log`, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/** The workloads the follower saw reading the changed source. */
async function readersSeen(ns: string): Promise<number> {
  const lines = await logLines();
  return new Set(
    lines
      .filter((line) => line.namespace === ns && line.msg === 'follow: change seen')
      .map((line) => line.workload),
  ).size;
}

async function touchedInOrder(ns: string): Promise<string[]> {
  return (await logLines())
    .filter((line) => line.namespace === ns && line.msg === 'follow: touched')
    .map((line) => line.name!);
}

async function revisions(ns: string, names = NAMES): Promise<Record<string, number>> {
  const entries = await Promise.all(
    names.map(async (name) => [name, await file.api.revision(ns, name)] as const),
  );
  return Object.fromEntries(entries);
}

async function changeShared(ns: string, level: string, readers = NAMES.length): Promise<void> {
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(configMap(ns, 'shared', { LEVEL: level })));
  await waitUntil(
    async () => (await readersSeen(ns)) === readers,
    `the change, seen with its ${readers} readers`,
  );
}

async function eventsOf(ns: string, reason: string) {
  const listed = await file.e2e.k([
    'get',
    'events.events.k8s.io',
    '-n',
    ns,
    '-o',
    'json',
    '--field-selector',
    `reason=${reason}`,
  ]);
  return JSON.parse(listed).items as { regarding: { kind: string; name: string }; note: string }[];
}

async function followMetrics(): Promise<string> {
  return (await httpRequest(`http://127.0.0.1:${follower.port}/metrics`)).body.toString();
}

function confighash(args: readonly string[], input?: string) {
  return runConfighash(args, { KUBECONFIG: file.e2e.controlPlane.kubeconfig }, input);
}

describe('canary-first fan-out', () => {
  it('a canary that never becomes available halts the change after the bound: nine untouched, the Events, the metric, explain', async () => {
    const ns = 'canary-halt';
    await tenReaders(ns, (name) => (name === 'app-7' ? 1 : 0), 'app-7');
    await changeShared(ns, 'debug');
    await waitUntil(async () => (await touchedInOrder(ns)).length === 1, 'the canary’s touch');
    expect(await touchedInOrder(ns)).toEqual(['app-7']);
    const halted = () => eventsOf(ns, 'FanoutHalted');
    await waitUntil(
      async () => (await halted()).length === 2,
      'the FanoutHalted Events',
      (CANARY_TIMEOUT_S + 20) * 1000,
    );
    const events = await halted();
    expect(events.map(({ regarding }) => `${regarding.kind}/${regarding.name}`).sort()).toEqual([
      'ConfigMap/shared',
      'Deployment/app-7',
    ]);
    expect(events[0]!.note).toMatch(
      /canary deployment\/app-7 failed \(not finished within 10 s: .*\) for configmap\/shared at resourceVersion \d+; 9 workloads held/,
    );
    const after = await revisions(ns);
    expect(after['app-7']).toBe(2);
    expect(
      Object.entries(after)
        .filter(([name]) => name !== 'app-7')
        .map(([, r]) => r),
    ).toEqual(Array(9).fill(1));
    const metrics = await followMetrics();
    expect(metrics).toMatch(/^confighash_follow_fanouts_halted_total 1$/m);
    expect(metrics).toMatch(/^confighash_follow_workloads_held 9$/m);
    const explain = confighash(['explain', 'deploy/app-3', '-n', ns]);
    expect(await explain.exited).toBe(0);
    expect(explain.output.stdout).toMatch(
      /held: canary deployment\/app-7 failed for configmap\/shared at resourceVersion \d+/,
    );

    // A canary that finishes (no replicas: done at once) lets the next change through: all ten
    // roll, the canary first and the rest in name order.
    await file.e2e.k(['scale', 'deployment/app-7', '-n', ns, '--replicas=0']);
    await changeShared(ns, 'warn');
    await waitUntil(
      async () => (await touchedInOrder(ns)).length === 1 + NAMES.length,
      'every touch of the second change',
      60_000,
    );
    const [, ...second] = await touchedInOrder(ns);
    expect(second).toEqual(['app-7', ...NAMES.filter((name) => name !== 'app-7')]);
    expect(Object.values(await revisions(ns))).toEqual([2, 2, 2, 2, 2, 2, 2, 3, 2, 2]);
  });

  it('a change read by more than --follow-max-fanout waits for its approval: plan, the Event, explain; the approval rolls all', async () => {
    const ns = 'approval';
    const names = appNames(MAX_FANOUT + 1);
    await tenReaders(ns, () => 0, undefined, names);
    const changed = yamlDocuments(configMap(ns, 'shared', { LEVEL: 'debug' }));
    const planned = confighash(
      ['plan', '-f', '-', '-o', 'json', `--follow-max-fanout=${MAX_FANOUT}`],
      changed,
    );
    expect(await planned.exited).toBe(1);
    const plans = JSON.parse(planned.output.stdout) as { waitsForApproval: string[] }[];
    expect(plans.map((plan) => plan.waitsForApproval)).toEqual(
      Array(names.length).fill(['configmap/shared']),
    );

    await changeShared(ns, 'debug', names.length);
    await waitUntil(
      async () => (await eventsOf(ns, 'FanoutAwaitsApproval')).length === 1,
      'the FanoutAwaitsApproval Event',
    );
    const [asked] = await eventsOf(ns, 'FanoutAwaitsApproval');
    expect(asked!.regarding).toMatchObject({ kind: 'ConfigMap', name: 'shared' });
    const approve = /approve it with: kubectl annotate (.*)$/.exec(asked!.note)![1]!;
    const digest = /confighash.dev\/approved-change=([0-9a-f]{16})$/.exec(approve)![1]!;
    expect(asked!.note).toContain(`change ${digest} of configmap/shared`);
    expect(asked!.note).toContain(`11 workloads read it, more than --follow-max-fanout 10`);
    expect(await followMetrics()).toMatch(/^confighash_follow_fanouts_awaiting_approval 1$/m);
    const explain = confighash(['explain', 'deploy/app-3', '-n', ns]);
    expect(await explain.exited).toBe(0);
    expect(explain.output.stdout).toContain(
      `waits for approval: change ${digest} of configmap/shared`,
    );
    expect(Object.values(await revisions(ns, names))).toEqual(Array(names.length).fill(1));

    // The Event's own command approves it; the annotation is no change of content.
    await file.e2e.k(['annotate', ...approve.split(' ')]);
    await waitUntil(
      async () => (await touchedInOrder(ns)).length === names.length,
      'every touch once approved',
      60_000,
    );
    expect(Object.values(await revisions(ns, names))).toEqual(Array(names.length).fill(2));
    expect(await followMetrics()).toMatch(/^confighash_follow_fanouts_awaiting_approval 0$/m);
  });
});
