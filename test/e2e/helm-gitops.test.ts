// The Helm rows of docs/design.md §5, measured on a real control plane with the webhook
// (follow mode on): an application chart with no checksum annotation
// (test/fixtures/helm/app) deployed by Helm 3 and Helm 4 into a `true` and a `follow`
// namespace. Each step counts rollouts as the Deployment's revision moves (a rollback
// to an earlier template reuses its ReplicaSet, so counting ReplicaSets would miss it).

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_FOLLOW_ARGS } from '../../tools/cluster/main.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { e2eFile, namespace, secret, waitUntil, yamlDocuments } from '../support/e2e.js';
import { followLogEntries, judgedEveryChange } from '../support/follow-log.js';
import { type HelmMajor, helmAgainst, helmOrSkip } from '../support/helm.js';

const APP_CHART = join(REPO_ROOT, 'test/fixtures/helm/app');
const RELEASE = 'shop';
/**
 * Follow mode's debounce (LOCAL_FOLLOW_ARGS: 2 s), less the time between its log line of a
 * change and the start of its timer: no verdict on a change comes sooner than this after it.
 */
const VERDICT_NOT_BEFORE_MS = 2_000 - 250;
/** How long a watch event of a step's write may take to reach follow mode, on a loaded machine. */
const WATCH_DELIVERY_MS = 2_000;
const helm = helmOrSkip('Helm GitOps e2e');

const file = e2eFile([], {
  follow: [...LOCAL_FOLLOW_ARGS, '--follow-min-interval=1s'],
  skip: !helm,
});

type Mode = 'true' | 'follow';

/**
 * Waits until follow mode has judged every change of the release's sources it saw since
 * `since`: each `change seen` has a verdict (a touch, or nothing to roll) made after its
 * debounce, so a roll it owes is counted. What a step changed reaches it within the delivery
 * time; a step that changed no source waits that long and no more.
 */
async function followJudgedChangesSince(ns: string, since: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, WATCH_DELIVERY_MS));
  await waitUntil(
    async () => {
      const log = await readFile(join(file.e2e.dir, 'confighash-follow.log'), 'utf8');
      const judged = judgedEveryChange(followLogEntries(log), {
        namespace: ns,
        deployment: RELEASE,
        since,
        verdictNotBeforeMs: VERDICT_NOT_BEFORE_MS,
      });
      return judged !== undefined;
    },
    `follow mode's verdict on what changed in ${ns}`,
    20_000,
  );
}

/** A release of the app chart in its own namespace, and how many rollouts each step made. */
function releaseIn(ns: string, mode: Mode) {
  const helmIn = helmAgainst(helm!, file.e2e.controlPlane.kubeconfig, file.e2e.dir);
  const run = (major: HelmMajor, args: readonly string[]) => helmIn(major, ns, args);
  const revision = () => file.api.revision(ns, RELEASE);
  const rotateSecret = (password: string) =>
    file.e2e.k(
      ['apply', '--server-side', '-f', '-'],
      yamlDocuments(secret(ns, 'app-credentials', { PASSWORD: password })),
    );
  return {
    async create(): Promise<void> {
      await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, mode)));
      await rotateSecret('first');
    },
    rotateSecret,
    helm: run,
    /** Runs a step and returns the rollouts it caused, follow mode's included. */
    async rollouts(step: () => Promise<unknown>, atLeast = 0): Promise<number> {
      const before = await revision();
      const startedAt = Date.now();
      await step();
      if (mode === 'follow') {
        // Waits for a rollout follow mode may still owe; a missing one shows in the count.
        await waitUntil(
          async () => (await revision()) >= before + atLeast,
          'a rollout',
          20_000,
        ).catch(() => undefined);
        await followJudgedChangesSince(ns, startedAt);
      }
      return (await revision()) - before;
    },
    async applyMethod(): Promise<string> {
      return JSON.parse(await run(4, ['get', 'metadata', RELEASE, '-o', 'json'])).applyMethod;
    },
  };
}

/** docs/design.md §5's Helm rows: rollouts per step, as measured. */
const EXPECTED: Record<`${HelmMajor}/${Mode}`, Record<string, number>> = {
  // Helm 3 patches client-side and sends nothing for an unchanged Deployment.
  '3/true': { configOnly: 0, unchanged: 0, rollback: 0, configAndImage: 1, rotatedSecret: 0 },
  '3/follow': { configOnly: 1, unchanged: 0, rollback: 1, configAndImage: 1, rotatedSecret: 1 },
  // Helm 4 applies every object server-side: the Deployment's write always reaches the webhook.
  '4/true': { configOnly: 1, unchanged: 0, rollback: 1, configAndImage: 1, rotatedSecret: 1 },
  '4/follow': { configOnly: 1, unchanged: 0, rollback: 1, configAndImage: 1, rotatedSecret: 1 },
};

// The four releases live in namespaces of their own, so they run side by side.
describe.skipIf(!helm).concurrent.each([
  [3, 'true'],
  [3, 'follow'],
  [4, 'true'],
  [4, 'follow'],
] as const)('Helm %i, namespace mode %s', (major, mode) => {
  it('rolls as docs/design.md §5 says: config-only, unchanged, rollback, config + image, rotated existingSecret', async ({
    expect,
  }) => {
    const expected = EXPECTED[`${major}/${mode}`];
    const release = releaseIn(`helm${major}-${mode}`, mode);
    await release.create();
    const step = (args: readonly string[]) => () =>
      release.helm(major, ['upgrade', '--install', RELEASE, APP_CHART, ...args]);
    await step([])();
    expect(await file.api.revision(`helm${major}-${mode}`, RELEASE)).toBe(1);
    const measured = {
      configOnly: await release.rollouts(step(['--set', 'level=debug']), expected.configOnly),
      unchanged: await release.rollouts(step(['--set', 'level=debug'])),
      // Back to the install's values: a config-only change again, the other way.
      rollback: await release.rollouts(
        () => release.helm(major, ['rollback', RELEASE, '1']),
        expected.rollback,
      ),
      configAndImage: await release.rollouts(
        step(['--set', 'level=warn', '--set', 'image=registry.example/app:2']),
        expected.configAndImage,
      ),
      rotatedSecret: await release.rollouts(async () => {
        await release.rotateSecret('rotated');
        await step(['--set', 'level=warn', '--set', 'image=registry.example/app:2'])();
      }, expected.rotatedSecret),
    };
    expect(measured).toEqual(expected);
  });
});

describe.skipIf(!helm)('a release installed by Helm 3, upgraded by Helm 4', () => {
  it('stays client-side (no roll on a config-only change) until one --server-side=true upgrade', async () => {
    const release = releaseIn('helm3to4', 'true');
    await release.create();
    await release.helm(3, ['install', RELEASE, APP_CHART]);
    const upgrade = (args: readonly string[]) => () =>
      release.helm(4, ['upgrade', RELEASE, APP_CHART, ...args]);
    expect(await release.rollouts(upgrade(['--set', 'level=debug']))).toBe(0);
    expect(await release.applyMethod()).toBe('csa');
    expect(await release.rollouts(upgrade(['--set', 'level=debug', '--server-side=true']))).toBe(1);
    expect(await release.applyMethod()).toBe('ssa');
    // From then on the default (`auto`) keeps it server-side.
    expect(await release.rollouts(upgrade(['--set', 'level=warn']))).toBe(1);
    expect(await release.rollouts(upgrade(['--set', 'level=warn']))).toBe(0);
  });
});
