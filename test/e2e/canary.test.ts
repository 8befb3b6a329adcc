// Canary-first fan-out on a real control plane (docs/design.md §6 "The state of a change"):
// ConfigMaps read by several Deployments. With no kubelet, a Deployment of one replica never
// becomes available, so as the canary it never proves a change: the change halts at the end
// of its --follow-canary-window with the others untouched, and the halt is kept on the
// source — it holds against a change of another source they read, and across a change of
// leader, and a canary being watched is watched again by the new leader; a revert releases it
// and rolls only the canary back; `confighash halt` and `resume`
// stop and release a fan-out by hand, and a newer change mid-drain goes canary-first again.
// A canary of zero replicas, or opted out, cannot test a change and is passed over. With
// --follow-max-fanout 10, a ConfigMap read by eleven waits for its approval instead
// (docs/design.md §6, approval above a size): plan says so before, the Event names the digest,
// explain says so meanwhile, and the annotation that names the digest rolls all eleven.

import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  FANOUT_STATE,
  type FanoutRecord,
  readFanoutRecord,
} from '../../src/workload/fanout-record.js';
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

const WINDOW_S = 10;
/** The canary rows' readers are within it; the approval row's eleven are not. */
const MAX_FANOUT = 10;
/** One touch a second: a drain of a few readers lasts long enough to act in the middle of it. */
const FOLLOW_ARGS = [
  '--lease-namespace=default',
  '--follow-debounce=1s',
  '--follow-min-interval=1s',
  '--follow-rate=1',
  '--follow-burst=1',
  `--follow-canary-window=${WINDOW_S}s`,
  '--follow-canary-poll=500ms',
  `--follow-max-fanout=${MAX_FANOUT}`,
];
let follower: LocalFollower;

const file = e2eFile([], {
  async setup() {
    follower = await startFollower('confighash-follow');
  },
  async teardown() {
    await follower.stop();
  },
});

function startFollower(name: string): Promise<LocalFollower> {
  const { e2e } = file;
  return startLocalFollower({
    dir: e2e.dir,
    name,
    kubeconfig: e2e.controlPlane.kubeconfig,
    webhook: e2e.webhook,
    extraArgs: FOLLOW_ARGS,
  });
}

const appNames = (count: number) => Array.from({ length: count }, (_, i) => `app-${i}`);

interface Readers {
  readonly names: readonly string[];
  /** Replicas of each (default 1: never available without a kubelet). */
  readonly replicas?: (name: string) => number;
  /** Annotated confighash.dev/canary: "true". */
  readonly canaries?: readonly string[];
  /** Annotated confighash.dev/enabled: "false" (and canary: "true", to show it is not one). */
  readonly optedOut?: readonly string[];
  /** ConfigMaps each reads besides `shared`. */
  readonly others?: readonly string[];
  readonly namespaceAnnotations?: Readonly<Record<string, string>>;
}

/** Deployments reading ConfigMap `shared` (and `others`), each at revision 1 when this returns. */
async function readers(ns: string, spec: Readers): Promise<void> {
  const sources = ['shared', ...(spec.others ?? [])];
  const objects = spec.names.map((name) => {
    const object = workload(ns, name, {
      podSpec: {
        containers: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            envFrom: sources.map((source) => ({ configMapRef: { name: source } })),
          },
        ],
      },
      ...(spec.canaries?.includes(name) || spec.optedOut?.includes(name)
        ? {
            annotations: {
              'confighash.dev/canary': 'true',
              ...(spec.optedOut?.includes(name) ? { 'confighash.dev/enabled': 'false' } : {}),
            },
          }
        : {}),
    }) as { spec: Record<string, unknown> };
    return { ...object, spec: { ...object.spec, replicas: spec.replicas?.(name) ?? 1 } };
  });
  const space = namespace(ns, 'follow') as { metadata: Record<string, unknown> };
  if (spec.namespaceAnnotations) space.metadata.annotations = spec.namespaceAnnotations;
  await file.e2e.k(
    ['apply', '-f', '-'],
    yamlDocuments(
      space,
      ...sources.map((source) => configMap(ns, source, { LEVEL: 'info' })),
      ...objects,
    ),
  );
  // Each at revision 1 (its ReplicaSet made): by then the follower's workload watch has them.
  expect(Object.values(await revisions(ns, spec.names))).toEqual(Array(spec.names.length).fill(1));
}

/** Every follower's log lines, in the order each wrote them (a change of leader: both). */
async function logLines(): Promise<
  { msg: string; namespace?: string; name?: string; workload?: string; source?: string }[]
> {
  const dir = file.e2e.dir;
  const logs = (await readdir(dir)).filter((name) => /^confighash-follow.*\.log$/.test(name));
  const texts = await Promise.all(logs.sort().map((name) => readFile(`${dir}/${name}`, 'utf8')));
  return texts
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/** The workloads the followers saw reading a changed source, in `ns`. */
async function readersSeen(ns: string, source: string): Promise<number> {
  const lines = await logLines();
  return new Set(
    lines
      .filter(
        (line) =>
          line.namespace === ns && line.msg === 'follow: change seen' && line.source === source,
      )
      .map((line) => line.workload),
  ).size;
}

async function touchedInOrder(ns: string): Promise<string[]> {
  return (await logLines())
    .filter((line) => line.namespace === ns && line.msg === 'follow: touched')
    .map((line) => line.name!);
}

async function revisions(ns: string, names: readonly string[]): Promise<Record<string, number>> {
  const entries = await Promise.all(
    names.map(async (name) => [name, await file.api.revision(ns, name)] as const),
  );
  return Object.fromEntries(entries);
}

/** Writes ConfigMap `name` (default `shared`) and waits until a follower saw its readers. */
async function change(
  ns: string,
  level: string,
  readerCount: number,
  name = 'shared',
): Promise<void> {
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(configMap(ns, name, { LEVEL: level })));
  await waitUntil(
    async () => (await readersSeen(ns, `configmap/${name}`)) >= readerCount,
    `the change of ${name}, seen with its ${readerCount} readers`,
  );
}

async function recordOf(ns: string, name = 'shared'): Promise<FanoutRecord | undefined> {
  const annotations = JSON.parse(
    await file.e2e.k([
      'get',
      'configmap',
      name,
      '-n',
      ns,
      '-o',
      'jsonpath={.metadata.annotations}',
    ]),
  ) as Record<string, string>;
  return readFanoutRecord(annotations[FANOUT_STATE]);
}

async function waitForPhase(ns: string, phase: FanoutRecord['phase'], name = 'shared') {
  await waitUntil(
    async () => (await recordOf(ns, name))?.phase === phase,
    `configmap/${name} ${phase}`,
    (WINDOW_S + 30) * 1000,
  );
  return (await recordOf(ns, name))!;
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

/** The CLI, told where this file's follower keeps its Lease (--lease-namespace=default). */
function confighash(args: readonly string[], input?: string) {
  const lease = ['plan', 'explain'].includes(args[0]!) ? ['--lease-namespace=default'] : [];
  return runConfighash(
    [...args, ...lease],
    { KUBECONFIG: file.e2e.controlPlane.kubeconfig },
    input,
  );
}

async function confighashSays(args: readonly string[], code: number): Promise<string> {
  const run = confighash(args);
  expect(await run.exited, run.output.stderr).toBe(code);
  return run.output.stdout;
}

/** A second follower takes the lead when the first stops; it is the file's follower from then. */
async function switchLeader(name: string): Promise<void> {
  const second = await startFollower(name);
  await follower.stop();
  follower = second;
  await waitUntil(
    async () => (await followMetrics()).includes('confighash_follow_leader 1'),
    `${name} to lead`,
  );
}

/** Waits `ms`, for what must not happen meanwhile. */
const quietFor = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('canary-first fan-out, kept on the source', () => {
  it('a canary that never becomes available halts the change; the halt holds across a change of leader; a revert releases it and rolls only the canary back', async () => {
    const ns = 'canary-halt';
    const names = appNames(10);
    // app-0 is annotated too, but runs no pods; app-1 is opted out: neither can test it.
    await readers(ns, {
      names,
      canaries: ['app-0', 'app-7'],
      optedOut: ['app-1'],
      replicas: (name) => (name === 'app-0' ? 0 : 1),
    });
    // app-1, opted out, is no reader of the source (docs/design.md §6): 9 readers, 9 held.
    const handled = names.length - 1;
    await change(ns, 'debug', handled);
    const halted = await waitForPhase(ns, 'halted');
    expect(halted.canaries?.map((canary) => canary.name)).toEqual(['app-7']);
    expect(halted.why).toMatch(
      /^canary deployment\/app-7 failed: not Ready and available within 10 s of its touch/,
    );
    expect(await touchedInOrder(ns)).toEqual(['app-7']);
    const events = await eventsOf(ns, 'FanoutHalted');
    expect(events.map(({ regarding }) => `${regarding.kind}/${regarding.name}`).sort()).toEqual([
      'ConfigMap/shared',
      'Deployment/app-7',
    ]);
    expect(events[0]!.note).toContain(
      `fan-out of change ${halted.change} of configmap/shared halted: canary deployment/app-7 failed`,
    );
    expect(events[0]!.note).toContain(
      `release it with: confighash resume configmap/shared -n ${ns}`,
    );
    const metrics = await followMetrics();
    expect(metrics).toMatch(/^confighash_follow_fanouts_halted 1$/m);
    expect(metrics).toMatch(new RegExp(`^confighash_follow_workloads_held ${handled}$`, 'm'));
    const explained = await confighashSays(['explain', 'deploy/app-3', '-n', ns], 0);
    expect(explained).toContain(
      `held: the fan-out of change ${halted.change} of configmap/shared halted`,
    );
    expect(await confighashSays(['halt', 'configmap/shared', '-n', ns], 1)).toContain(
      'is halted already',
    );

    // A second follower takes the lead when the first stops: it reads the halt from the
    // source and touches nothing it holds, its first resync included.
    await switchLeader('confighash-follow-b');
    await quietFor((WINDOW_S + 5) * 1000);
    expect(await touchedInOrder(ns)).toEqual(['app-7']);
    expect(await recordOf(ns)).toEqual(halted);
    expect(await followMetrics()).toMatch(
      new RegExp(`^confighash_follow_workloads_held ${handled}$`, 'm'),
    );
    const after = await revisions(ns, names);
    expect(Object.entries(after).filter(([, r]) => r !== 1)).toEqual([['app-7', 2]]);

    // Back to what every reader has: the halt is over, and only the canary rolls (back).
    await change(ns, 'info', handled);
    await waitForPhase(ns, 'done');
    await waitUntil(async () => (await touchedInOrder(ns)).length === 2, 'the canary rolled back');
    await quietFor(3000);
    expect(await touchedInOrder(ns)).toEqual(['app-7', 'app-7']);
    expect(Object.entries(await revisions(ns, names)).filter(([, r]) => r !== 1)).toEqual([
      ['app-7', 3],
    ]);
    expect(await followMetrics()).toMatch(/^confighash_follow_fanouts_halted 0$/m);
  });

  it('a canary being watched when the leader changes is watched again by the new leader, for what is left of its window', async () => {
    const ns = 'canary-watched';
    const names = appNames(3);
    await readers(ns, { names });
    await change(ns, 'debug', names.length);
    await waitUntil(
      async () => (await recordOf(ns))?.canaries?.[0]?.sent !== undefined,
      'the canary’s touch sent',
    );
    await switchLeader('confighash-follow-c');
    const halted = await waitForPhase(ns, 'halted');
    expect(halted.why).toMatch(/not Ready and available within 10 s of its touch/);
    const watchedFor = Date.parse(halted.since) - Date.parse(halted.canaries![0]!.sent!);
    expect(watchedFor).toBeGreaterThanOrEqual(WINDOW_S * 1000);
    expect(watchedFor).toBeLessThan((WINDOW_S + 10) * 1000);
    expect(await touchedInOrder(ns)).toEqual(['app-0']);
  });

  it('a halted change holds against a change of another source its readers read; resume releases both', async () => {
    const ns = 'canary-second';
    const names = appNames(4);
    await readers(ns, { names, canaries: ['app-2'], others: ['other'] });
    await change(ns, 'debug', names.length);
    await waitForPhase(ns, 'halted');
    await change(ns, 'debug', names.length, 'other');
    // Its canary is held by the first halt: its touch cannot be sent within the window.
    const other = await waitForPhase(ns, 'halted', 'other');
    expect(other.why).toMatch(/could not be sent within 10 s/);
    expect(await touchedInOrder(ns)).toEqual(['app-2']);

    expect(await confighashSays(['resume', 'configmap/shared', '-n', ns], 0)).toMatch(
      /^releasing change [0-9a-f]{16} of configmap\/shared/,
    );
    await waitForPhase(ns, 'draining');
    await quietFor(3000);
    expect(await touchedInOrder(ns)).toEqual(['app-2']); // configmap/other still holds them
    await confighashSays(['resume', 'configmap/other', '-n', ns], 0);
    await waitUntil(
      async () => new Set(await touchedInOrder(ns)).size === names.length,
      'every reader touched once both are released',
      30_000,
    );
    expect(Object.values(await revisions(ns, names)).every((r) => r >= 2)).toBe(true);
  });

  it('halt stops a drain mid-way; resume goes on; a newer change mid-drain goes canary-first again', async () => {
    const ns = 'canary-drain';
    const names = appNames(8);
    await readers(ns, { names });
    await change(ns, 'debug', names.length);
    await waitForPhase(ns, 'halted');
    await confighashSays(['resume', 'configmap/shared', '-n', ns], 0);
    await waitUntil(async () => (await touchedInOrder(ns)).length >= 3, 'the drain under way');
    expect(await confighashSays(['halt', 'configmap/shared', '-n', ns], 0)).toMatch(
      /^halting change [0-9a-f]{16} of configmap\/shared, rolling out to the rest/,
    );
    const stopped = await waitForPhase(ns, 'halted');
    expect(stopped.why).toBe('halted by hand');
    const touched = (await touchedInOrder(ns)).length;
    await quietFor(4000);
    expect((await touchedInOrder(ns)).length).toBe(touched);
    expect(touched).toBeLessThan(names.length);

    await confighashSays(['resume', 'configmap/shared', '-n', ns], 0);
    await waitUntil(
      async () => (await touchedInOrder(ns)).length >= touched + 1,
      'the drain going on',
    );
    await change(ns, 'warn', names.length);
    const newer = await waitForPhase(ns, 'canary');
    expect(newer.change).not.toBe(stopped.change);
    const atChange = (await touchedInOrder(ns)).length;
    await waitForPhase(ns, 'halted');
    // After the newer change, its canary alone: what was left of the older drain was dropped.
    const sinceChange = (await touchedInOrder(ns)).slice(atChange);
    expect(sinceChange.length).toBeLessThanOrEqual(1);
    const canary = newer.canaries![0]!.name;
    expect(sinceChange.every((name) => name === canary)).toBe(true);
  });

  it('a change read by more than --follow-max-fanout waits for its approval: plan, the Event, explain; the approval rolls all', async () => {
    const ns = 'approval';
    const names = appNames(MAX_FANOUT + 1);
    // No canaries here: without a kubelet none could prove the change.
    await readers(ns, {
      names,
      replicas: () => 0,
      namespaceAnnotations: { 'confighash.dev/canaries': '0' },
    });
    const changed = yamlDocuments(configMap(ns, 'shared', { LEVEL: 'debug' }));
    const planned = confighash(
      ['plan', '-f', '-', '-o', 'json', `--follow-max-fanout=${MAX_FANOUT}`],
      changed,
    );
    expect(await planned.exited).toBe(1);
    const plans = (JSON.parse(planned.output.stdout) as { items: { waitsForApproval: string[] }[] })
      .items;
    expect(plans.map((plan) => plan.waitsForApproval)).toEqual(
      Array(names.length).fill(['configmap/shared']),
    );

    await change(ns, 'debug', names.length);
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
    const explain = await confighashSays(['explain', 'deploy/app-3', '-n', ns], 0);
    expect(explain).toContain(`waits for approval: change ${digest} of configmap/shared`);
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
