// docs/design.md §9 on a real kube-apiserver with the webhook registered: `confighash
// plan` before a change says what the apply will do (and the apply then does it),
// and `confighash explain` answers with the webhook's own dry-run. Outputs carry
// names and keys, never a value.

import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { confighashNodeArgs } from '../../tools/cluster/confighash-command.js';
import {
  configMap,
  e2eFile,
  namespace,
  secret,
  serviceAccountKubeconfig,
  workload,
  yamlDocuments,
} from '../support/e2e.js';
import { runConfighash, stopStartedProcesses } from '../support/process.js';

const VALUES = ['hunter2-e2e', 'v: 1', 'v: 2', 'debug-1', 'debug-2'];

let dir: string;
let counter = 0;
const file = e2eFile([], {
  async setup() {
    dir = await mkdtemp(join(tmpdir(), 'confighash-plan-'));
  },
});

afterEach(stopStartedProcesses);

async function appNamespace(label?: string): Promise<string> {
  const ns = `plan-${++counter}`;
  await file.e2e.k(['apply', '-f', '-'], yamlDocuments(namespace(ns, label)));
  return ns;
}

function appObjects(ns: string, config: string, extra: Record<string, string> = {}) {
  return [
    configMap(ns, 'web-config', { 'app.yaml': config, ...extra }),
    secret(ns, 'web-secret', { password: 'hunter2-e2e' }),
    workload(ns, 'web'),
  ];
}

/** web-config's app.yaml to `v: 2` by a patch of the ConfigMap alone: no workload write carries it. */
async function changeConfigOutOfBand(ns: string): Promise<void> {
  await file.e2e.k([
    'patch',
    'configmap',
    'web-config',
    '-n',
    ns,
    '--type=merge',
    '-p',
    '{"data":{"app.yaml":"v: 2"}}',
  ]);
}

async function apply(args: readonly string[], objects: object[]): Promise<void> {
  await file.e2e.k(['apply', ...args, '-f', '-'], yamlDocuments(...objects));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function confighash(
  args: readonly string[],
  input?: string,
  kubeconfig?: string,
): Promise<Run> {
  const running = runConfighash(
    args,
    { KUBECONFIG: kubeconfig ?? file.e2e.controlPlane.kubeconfig, NO_COLOR: '1' },
    input,
  );
  const code = await running.exited;
  const { stdout, stderr } = running.output;
  for (const value of VALUES) {
    expect(stdout).not.toContain(value);
    expect(stderr).not.toContain(value);
  }
  return { code, stdout, stderr };
}

async function manifestFile(objects: object[]): Promise<string> {
  const path = join(dir, `manifests-${++counter}.yaml`);
  await writeFile(path, yamlDocuments(...objects));
  return path;
}

interface JsonPlan {
  kind: string;
  namespace: string;
  name: string;
  verdict: string;
  reasons: string[];
  changedSources: { ref: string; changedKeys: string[] }[];
}

async function planJson(args: readonly string[], objects: object[], kubeconfig?: string) {
  const run = await confighash(
    ['plan', '-f', await manifestFile(objects), '-o', 'json', ...args],
    undefined,
    kubeconfig,
  );
  const list = JSON.parse(run.stdout) as { apiVersion: string; kind: string; items: JsonPlan[] };
  expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
  return { code: run.code, plans: list.items, stderr: run.stderr };
}

describe('plan before a change of the pod template itself', () => {
  it('a new image with the same config: roll, naming the field; with new config too: one roll naming both', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const withImage = (config: string, image: string) => [
      ...appObjects(ns, config).slice(0, 2),
      workload(ns, 'web', { image }),
    ];

    const imageOnly = await planJson([], withImage('v: 1', 'registry.example/app:2'));
    expect(imageOnly.code).toBe(1);
    expect(imageOnly.plans[0]).toMatchObject({
      verdict: 'roll',
      reasons: [
        'the pod template itself changes (template.spec.containers[0].image): it rolls whatever the config',
      ],
      changedSources: [],
    });
    await apply(['--server-side'], withImage('v: 1', 'registry.example/app:2'));
    expect(await file.api.revision(ns, 'web')).toBe(2);

    const both = await planJson([], withImage('v: 2', 'registry.example/app:3'));
    expect(both.plans[0]).toMatchObject({
      verdict: 'roll',
      reasons: [
        'the pod template itself changes (template.spec.containers[0].image): it rolls whatever the config',
        'configmap/web-config changes: app.yaml',
      ],
    });
    await apply(['--server-side'], withImage('v: 2', 'registry.example/app:3'));
    expect(await file.api.revision(ns, 'web')).toBe(3);
  });
});

describe('plan before a config-only change', () => {
  it.each(['true', 'follow'])(
    'in a `%s` namespace: roll, exit 1, and the apply then rolls',
    async (label) => {
      const ns = await appNamespace(label);
      await apply(['--server-side'], appObjects(ns, 'v: 1'));
      expect(await file.api.revision(ns, 'web')).toBe(1);

      const { code, plans } = await planJson([], appObjects(ns, 'v: 2'));
      expect(code).toBe(1);
      expect(plans).toEqual([
        {
          kind: 'Deployment',
          group: 'apps',
          namespace: ns,
          name: 'web',
          verdict: 'roll',
          reasons: ['configmap/web-config changes: app.yaml'],
          changedSources: [{ ref: 'configmap/web-config', changedKeys: ['app.yaml'] }],
          waitsForApproval: [],
        },
      ]);
      await apply(['--server-side'], appObjects(ns, 'v: 2'));
      expect(await file.api.revision(ns, 'web')).toBe(2);

      const unchanged = await planJson([], appObjects(ns, 'v: 2'));
      expect(unchanged.code).toBe(0);
      expect(unchanged.plans[0]).toMatchObject({
        verdict: 'no-roll',
        reasons: ['no selected key changes'],
      });
    },
  );

  it('--client-side in a `true` namespace: the write will not reach the webhook, and indeed nothing rolls', async () => {
    const ns = await appNamespace('true');
    await apply([], appObjects(ns, 'v: 1'));
    expect(await file.api.revision(ns, 'web')).toBe(1);
    const { code, plans } = await planJson(['--client-side'], appObjects(ns, 'v: 2'));
    expect(code).toBe(0);
    expect(plans[0]!.verdict).toBe('no-roll');
    expect(plans[0]!.reasons[0]).toBe(
      'the write will not reach the webhook: a client-side apply of an unchanged workload sends nothing',
    );
    expect(plans[0]!.changedSources).toEqual([
      { ref: 'configmap/web-config', changedKeys: ['app.yaml'] },
    ]);
    const serverSide = await planJson([], appObjects(ns, 'v: 2'));
    expect(serverSide.plans[0]!.verdict).toBe('roll');

    await apply([], appObjects(ns, 'v: 2'));
    expect(await file.api.revision(ns, 'web')).toBe(1);
  });

  it('reads -f - (stdin) and -k DIR (kubectl kustomize), with a readable table', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const stdin = await confighash(['plan', '-f', '-'], yamlDocuments(...appObjects(ns, 'v: 2')));
    expect(stdin.code).toBe(1);
    expect(stdin.stdout).toBe(
      [
        'NAMESPACE  WORKLOAD        VERDICT    WHY',
        `${ns.padEnd(9)}  deployment/web  will roll  configmap/web-config changes: app.yaml`,
        '',
        '1 workload: 1 will roll, 0 will not, 0 cannot tell.',
        '',
      ].join('\n'),
    );
    const kustomization = join(dir, `kustomize-${ns}`);
    await import('node:fs/promises').then((fs) => fs.mkdir(kustomization));
    await writeFile(join(kustomization, 'app.yaml'), yamlDocuments(...appObjects(ns, 'v: 2')));
    await writeFile(join(kustomization, 'kustomization.yaml'), 'resources: [app.yaml]\n');
    const kustomized = await confighash(['plan', '-k', kustomization, '-o', 'json']);
    expect(kustomized.code).toBe(1);
    expect((JSON.parse(kustomized.stdout) as { items: JsonPlan[] }).items[0]!.verdict).toBe('roll');
  });
});

describe('plan after an out-of-band change', () => {
  it('the manifests bring nothing new, but the hash is stale: the webhook says any write rolls it', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    await changeConfigOutOfBand(ns);
    const { code, plans } = await planJson([], appObjects(ns, 'v: 2'));
    expect(code).toBe(1);
    expect(plans[0]).toMatchObject({ verdict: 'roll', changedSources: [] });
    expect(plans[0]!.reasons).toEqual([
      'its config already changed since its last write (the webhook would write a new hash now): any write rolls it',
    ]);
    await apply(['--server-side'], appObjects(ns, 'v: 2'));
    expect(await file.api.revision(ns, 'web')).toBe(2);
  });
});

describe('plan says why nothing rolls', () => {
  it('an unselected key changes', async () => {
    const ns = await appNamespace('true');
    const reader = workload(ns, 'web', {
      podSpec: {
        containers: [
          {
            name: 'app',
            image: 'registry.example/app:1',
            env: [
              {
                name: 'APP',
                valueFrom: { configMapKeyRef: { name: 'web-config', key: 'app.yaml' } },
              },
            ],
          },
        ],
      },
    });
    const objects = (debug: string) => [
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1', debug }),
      reader,
    ];
    await apply(['--server-side'], objects('debug-1'));
    const { code, plans } = await planJson([], objects('debug-2'));
    expect(code).toBe(0);
    expect(plans[0]).toMatchObject({
      verdict: 'no-roll',
      reasons: ['only unselected keys of configmap/web-config change (debug)'],
      changedSources: [],
    });
  });

  it.each([
    ['an unlabelled namespace', undefined, {}, /^namespace plan-\d+ is not opted in/],
    ['an opted-out workload', 'true', { 'confighash.dev/enabled': 'false' }, /^opted out/],
    [
      'an excluded Secret',
      'true',
      { 'confighash.dev/exclude': 'secret/web-secret' },
      /secret\/web-secret changes, but confighash\.dev\/exclude leaves it out/,
    ],
  ])('%s', async (_name, label, annotations, reason) => {
    const ns = await appNamespace(label);
    const objects = (password: string) => [
      configMap(ns, 'web-config', { 'app.yaml': 'v: 1' }),
      secret(ns, 'web-secret', { password }),
      workload(ns, 'web', { annotations }),
    ];
    await apply(['--server-side'], objects('hunter2-e2e'));
    const { code, plans } = await planJson([], objects('hunter2-e2e-next'));
    expect(code).toBe(0);
    expect(plans[0]!.verdict).toBe('no-roll');
    expect(plans[0]!.reasons.join('\n')).toMatch(reason);
  });

  it('a Secret the user may not read: unknown with the reason, exit 1, no crash', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    await file.e2e.k(['create', 'serviceaccount', 'viewer', '-n', ns]);
    await file.e2e.k([
      'create',
      'role',
      'viewer',
      '-n',
      ns,
      '--verb=get,list',
      '--resource=configmaps,deployments,statefulsets,daemonsets',
    ]);
    await file.e2e.k([
      'create',
      'rolebinding',
      'viewer',
      '-n',
      ns,
      '--role=viewer',
      `--serviceaccount=${ns}:viewer`,
    ]);
    await file.e2e.k([
      'create',
      'clusterrole',
      `${ns}-namespaces`,
      '--verb=get',
      '--resource=namespaces',
    ]);
    await file.e2e.k([
      'create',
      'clusterrolebinding',
      `${ns}-namespaces`,
      `--clusterrole=${ns}-namespaces`,
      `--serviceaccount=${ns}:viewer`,
    ]);
    const kubeconfig = await serviceAccountKubeconfig(
      file.e2e.controlPlane,
      file.e2e.k,
      dir,
      ns,
      'viewer',
    );
    const { code, plans } = await planJson([], appObjects(ns, 'v: 2'), kubeconfig);
    expect(code).toBe(1);
    expect(plans[0]).toMatchObject({
      verdict: 'unknown',
      reasons: ['cannot read secret/web-secret: forbidden'],
    });
  });
});

interface JsonExplanation {
  namespaceMode: string;
  optedOut: boolean;
  sources: { ref: string; state: string; resourceVersion: string | null; keys: string[] | 'all' }[];
  templateHash: string | null;
  adoptedHash: string | null;
  wouldWrite: string | null;
  nextWriteRolls: boolean;
  webhook: { reached: boolean };
  explanation: string[];
}

async function explainJson(ns: string, target = 'deploy/web'): Promise<JsonExplanation> {
  const run = await confighash(['explain', target, '-n', ns, '-o', 'json']);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as JsonExplanation;
}

describe('explain', () => {
  it('right after a server-side apply: nextWriteRolls false; after an out-of-band change: true, until touched', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const hash = await file.api.hash(ns, 'deployment', 'web');
    const settled = await explainJson(ns);
    expect(settled).toMatchObject({
      namespaceMode: 'true',
      optedOut: false,
      templateHash: hash,
      adoptedHash: null,
      wouldWrite: hash,
      nextWriteRolls: false,
      webhook: { reached: true },
    });
    expect(settled.sources.map(({ ref, state, keys }) => ({ ref, state, keys }))).toEqual([
      { ref: 'configmap/web-config', state: 'found', keys: 'all' },
      { ref: 'secret/web-secret', state: 'found', keys: 'all' },
    ]);
    expect(settled.sources[0]!.resourceVersion).toMatch(/^\d+$/);
    // managedFields times have seconds: the out-of-band change lands in a later second.
    await new Promise((resolve) => setTimeout(resolve, 1100));

    await changeConfigOutOfBand(ns);
    const stale = await explainJson(ns);
    expect(stale.nextWriteRolls).toBe(true);
    expect(stale.templateHash).toBe(hash);
    expect(stale.wouldWrite).toMatch(/^[0-9a-f]{64}$/);
    expect(stale.wouldWrite).not.toBe(hash);
    expect(stale.explanation[1]).toMatch(
      /^the next write rolls: configmap\/web-config changed since the last write of the workload \(/,
    );
    expect(stale.explanation.join('\n')).toMatch(
      /this namespace is "true", so nothing writes it until/,
    );
    // The dry-run wrote nothing: the template still has the old hash, and no rollout happened.
    expect(await file.api.hash(ns, 'deployment', 'web')).toBe(hash);
    expect(await file.api.revision(ns, 'web')).toBe(1);

    await file.e2e.k(['patch', 'deployment', 'web', '-n', ns, '--type=merge', '-p', '{}']);
    expect(await file.api.revision(ns, 'web')).toBe(2);
    expect((await explainJson(ns)).nextWriteRolls).toBe(false);
  });

  it('in an unlabelled namespace: the webhook never sees the writes, and says so', async () => {
    const ns = await appNamespace();
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const explained = await explainJson(ns, 'deployments.apps/web');
    expect(explained).toMatchObject({
      namespaceMode: 'none',
      templateHash: null,
      nextWriteRolls: false,
    });
    expect(explained.explanation[0]).toMatch(/is not opted in: the webhook never sees its writes/);
  });

  it('the human form, and a missing workload as one line with exit 2', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const human = await confighash(['explain', 'deploy/web', '-n', ns]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^deployment\/web in namespace plan-\d+\n {2}namespace mode {2}true\n/,
    );
    expect(human.stdout).toMatch(/next write {6}rolls nothing/);
    expect(human.stdout).toMatch(/ {2}configmap\/web-config {2}found {2}rv \d+ +all keys/);
    const missing = await confighash(['explain', 'sts/nope', '-n', ns]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`confighash: statefulset/nope in namespace ${ns} not found\n`);
  });
});

describe('which cluster, as a kubectl plugin picks it: --kubeconfig, --context, KUBECONFIG', () => {
  /** A context `nowhere` (a port nothing listens on), current, beside the control plane's own contexts. */
  async function kubeconfigs(ns: string) {
    const admin = JSON.parse(await readFile(file.e2e.controlPlane.kubeconfig, 'utf8')) as {
      clusters: object[];
      users: object[];
      contexts: { name: string; context: object }[];
    };
    const real = admin.contexts[0]!.name;
    const nowhere = {
      clusters: [{ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'nowhere', user: { token: 'nobody' } }],
      contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'nowhere' } }],
    };
    const write = async (name: string, config: object) => {
      const path = join(dir, `${name}-${++counter}.kubeconfig`);
      await writeFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'Config', ...config }), {
        mode: 0o600,
      });
      return path;
    };
    const both = await write('two-contexts', {
      clusters: [...nowhere.clusters, ...admin.clusters],
      users: [...nowhere.users, ...admin.users],
      contexts: [
        ...nowhere.contexts,
        // The real context names the namespace: explain needs no -n with it.
        ...admin.contexts.map(({ name, context }) => ({
          name,
          context: { ...context, namespace: ns },
        })),
      ],
      'current-context': 'nowhere',
    });
    const nowhereOnly = await write('nowhere', { ...nowhere, 'current-context': 'nowhere' });
    return { real, both, nowhereOnly };
  }

  it('--kubeconfig wins over KUBECONFIG; --context picks the reachable context and its namespace', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const { real, both } = await kubeconfigs(ns);
    const chosen = await confighash([
      'explain',
      'deploy/web',
      '--kubeconfig',
      both,
      '--context',
      real,
      '-o',
      'yaml',
    ]);
    expect(chosen.stderr).toBe('');
    expect(chosen.code).toBe(0);
    const { load } = await import('js-yaml');
    expect(load(chosen.stdout)).toMatchObject({
      kind: 'Deployment',
      namespace: ns,
      name: 'web',
      namespaceMode: 'true',
      nextWriteRolls: false,
    });
    // Its current-context points nowhere: without --context, that is where explain goes.
    const unreachable = await confighash(['explain', 'deploy/web', '--kubeconfig', both]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stdout).toBe('');
    expect(unreachable.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(unreachable.stderr).toMatch(/^confighash: .*127\.0\.0\.1:1/);
  });

  it('KUBECONFIG of two files: the first one’s current-context, a context of the second by --context', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const { real, nowhereOnly } = await kubeconfigs(ns);
    const merged = `${nowhereOnly}:${file.e2e.controlPlane.kubeconfig}`;
    const manifests = await manifestFile(appObjects(ns, 'v: 2'));
    const planned = await confighash(
      ['plan', '-f', manifests, '--context', real, '-n', ns, '-o', 'json'],
      undefined,
      merged,
    );
    expect(planned.code).toBe(1);
    expect(JSON.parse(planned.stdout).items).toMatchObject([
      { kind: 'Deployment', namespace: ns, name: 'web', verdict: 'roll' },
    ]);
    const current = await confighash(['plan', '-f', manifests, '-n', ns], undefined, merged);
    expect(current.code).toBe(2);
    expect(current.stderr).toMatch(/^confighash: .*127\.0\.0\.1:1/);
  });
});

// --- as kubectl's plugins behave (docs/design.md §9) ----------------------------------

/** A workload of appObjects' kind with labels of its own, for -l. */
function labelled(ns: string, name: string, labels: Record<string, string>): object {
  const object = workload(ns, name) as { metadata: Record<string, unknown> };
  return { ...object, metadata: { ...object.metadata, labels } };
}

/** A Lease held by `holder`, renewed now, for an hour: a follower that leads. */
function leadingLease(ns: string, holder: string): object {
  const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'confighash-follow', namespace: ns },
    spec: { holderIdentity: holder, leaseDurationSeconds: 3600, renewTime: now, acquireTime: now },
  };
}

describe('explain and plan as kubectl names things', () => {
  it('options before the command, TYPE NAME…, -l, -A, -o name, -o json as a List, -v 6, --request-timeout', async () => {
    const ns = await appNamespace('true');
    const mark = { 'plan-e2e': ns };
    await apply(
      ['--server-side'],
      [
        ...appObjects(ns, 'v: 1').slice(0, 2),
        configMap(ns, 'api-config', { 'app.yaml': 'v: 1' }),
        secret(ns, 'api-secret', { password: 'hunter2-e2e' }),
        labelled(ns, 'web', { ...mark, app: 'web' }),
        labelled(ns, 'api', { ...mark, app: 'api' }),
      ],
    );
    const several = await confighash(['-n', ns, '-o', 'json', 'explain', 'deploy', 'web', 'api']);
    expect(several.code, several.stderr).toBe(0);
    expect(JSON.parse(several.stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { kind: 'Deployment', group: 'apps', namespace: ns, name: 'web', nextWriteRolls: false },
        { kind: 'Deployment', group: 'apps', namespace: ns, name: 'api', nextWriteRolls: false },
      ],
    });
    const selected = await confighash([
      'explain',
      'deployment',
      '-l',
      'app=web',
      '-n',
      ns,
      '-o',
      'name',
    ]);
    expect(selected).toMatchObject({ code: 0, stdout: 'deployment.apps/web\n' });
    const everywhere = await confighash([
      'explain',
      'deploy',
      '-A',
      '-l',
      `plan-e2e=${ns}`,
      '-o',
      'name',
    ]);
    expect(everywhere.stdout.split('\n').sort()).toEqual([
      '',
      'deployment.apps/api',
      'deployment.apps/web',
    ]);

    const traced = await confighash([
      '-v',
      '6',
      'explain',
      `deployment/web`,
      '-n',
      ns,
      '--request-timeout',
      '30s',
    ]);
    expect(traced.code, traced.stderr).toBe(0);
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web`;
    expect(traced.stderr).toMatch(
      new RegExp(` GET https://\\S+${path} 200 in \\d+ milliseconds$`, 'm'),
    );
    expect(traced.stderr).toMatch(
      new RegExp(` PATCH https://\\S+${path}\\?dryRun=All&fieldManager=confighash 200 in `, 'm'),
    );
    const hurried = await confighash([
      'explain',
      'deploy/web',
      '-n',
      ns,
      '--request-timeout',
      '1ms',
    ]);
    expect(hurried.code).toBe(2);
    expect(hurried.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(hurried.stderr).toMatch(/^confighash: .*no answer within 1 ms/);
  });

  it('plan -f DIR -R -o name: the workloads that will roll', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    const tree = join(dir, `tree-${ns}`);
    await mkdir(join(tree, 'config'), { recursive: true });
    const [config, secretObject, web] = appObjects(ns, 'v: 2');
    await writeFile(join(tree, 'web.yaml'), yamlDocuments(web!));
    await writeFile(join(tree, 'config', 'config.yaml'), yamlDocuments(config!, secretObject!));
    const flat = await confighash(['plan', '-f', tree, '-o', 'name']);
    expect(flat).toMatchObject({ code: 0, stdout: '' });
    const deep = await confighash(['plan', '-f', tree, '-R', '-o', 'name']);
    expect(deep).toMatchObject({ code: 1, stdout: 'deployment.apps/web\n' });
  });

  it('--as a user who may read but not patch: explain says the patch is forbidden, exit 2', async () => {
    const ns = await appNamespace('true');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    await file.e2e.k(['create', 'serviceaccount', 'reader', '-n', ns]);
    await file.e2e.k([
      'create',
      'role',
      'reader',
      '-n',
      ns,
      '--verb=get,list',
      '--resource=configmaps,secrets,deployments,events',
    ]);
    await file.e2e.k([
      'create',
      'rolebinding',
      'reader',
      '-n',
      ns,
      '--role=reader',
      `--serviceaccount=${ns}:reader`,
    ]);
    const as = `system:serviceaccount:${ns}:reader`;
    const denied = await confighash(['explain', 'deploy/web', '-n', ns, '-o', 'json', '--as', as]);
    expect(denied.code).toBe(2);
    expect(denied.stdout).toBe('');
    expect(denied.stderr).toBe(
      `confighash: you may not patch deployments.apps in namespace ${ns} (forbidden): explain asks the webhook about deployment/web through a server-side dry-run patch, which needs the patch verb on deployments.apps (nothing is written)\n`,
    );
  });
});

describe("the follower's Lease", () => {
  it('explain, plan and doctor say "no follower is leading" without a current holder, and "follow mode touches it" with one', async () => {
    const ns = await appNamespace('follow');
    await apply(['--server-side'], appObjects(ns, 'v: 1'));
    await changeConfigOutOfBand(ns);
    const lines = async (lease: string[]) => {
      const run = await confighash(['explain', 'deploy/web', '-n', ns, '-o', 'json', ...lease]);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as JsonExplanation).explanation.join('\n');
    };
    expect(await lines([])).toContain(
      'no follower is leading (Lease confighash-system/confighash-follow: there is no Lease): nothing touches it until one does',
    );
    const readerOnly = [configMap(ns, 'web-config', { 'app.yaml': 'v: 3' })];
    const vacant = await planJson([], readerOnly);
    expect(vacant.plans[0]).toMatchObject({ name: 'web', verdict: 'no-roll' });
    expect(vacant.plans[0]!.reasons[0]).toMatch(
      /no follower is leading \(Lease confighash-system\/confighash-follow: there is no Lease\)/,
    );

    const doctorVacant = await confighash(['doctor', '-n', ns]);
    expect(doctorVacant.code).toBe(1);
    expect(doctorVacant.stdout).toMatch(/^ok {4}the webhook answers/m);
    expect(doctorVacant.stdout).toMatch(
      /^FAIL {2}no follower is leading \(Lease confighash-system\/confighash-follow: there is no Lease\): config changes are not followed — is confighash follow running/m,
    );

    await apply([], [leadingLease(ns, 'follower-e2e')]);
    const here = ['--lease-namespace', ns];
    expect(await lines(here)).toContain('follow mode touches it once due');
    const led = await planJson(here, readerOnly);
    expect(led.plans[0]).toMatchObject({ name: 'web', verdict: 'roll' });
    expect(led.plans[0]!.reasons[0]).toMatch(/^follow mode touches it/);
    const doctorLed = await confighash(['doctor', '-n', ns, ...here]);
    expect(doctorLed.code, doctorLed.stdout).toBe(0);
    expect(doctorLed.stdout).toMatch(
      new RegExp(`^ok {4}a follower leads: follower-e2e \\(Lease ${ns}/confighash-follow\\)$`, 'm'),
    );
  });
});

describe('doctor', () => {
  /** `kubectl confighash ARGS`: kubectl finds the plugin on PATH, as after npm install -g. */
  async function kubectlConfighash(args: readonly string[]): Promise<Run> {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    const plugin = join(bin, 'kubectl-confighash');
    const command = [process.execPath, ...confighashNodeArgs([])].map((word) => `'${word}'`);
    await writeFile(plugin, `#!/bin/sh\nexec ${command.join(' ')} "$@"\n`);
    await chmod(plugin, 0o755);
    const { execFile } = await import('node:child_process');
    return new Promise((resolve) => {
      execFile(
        'kubectl',
        ['confighash', ...args],
        {
          env: {
            ...process.env,
            PATH: `${bin}:${process.env.PATH}`,
            KUBECONFIG: file.e2e.controlPlane.kubeconfig,
          },
          cwd: join(dir),
        },
        (error, stdout, stderr) =>
          resolve({
            code: error ? Number((error as { code?: number }).code ?? 1) : 0,
            stdout,
            stderr,
          }),
      );
    });
  }

  it('kubectl confighash doctor -n NS: every check ok in a `true` namespace, exit 0', async () => {
    const ns = await appNamespace('true');
    const run = await kubectlConfighash(['doctor', '-n', ns]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')).toEqual([
      expect.stringMatching(
        /^ok {4}MutatingWebhookConfiguration confighash is registered \(1 webhook, failurePolicy \w+, calls /,
      ),
      expect.stringMatching(
        new RegExp(
          `^ok {4}namespace ${ns} is opted in, confighash.dev/enabled=true: admission only`,
        ),
      ),
      expect.stringMatching(
        /^ok {4}the webhook answers: a server-side dry-run create of a probe Deployment/,
      ),
      '',
    ]);
  });

  it('a namespace not opted in: FAIL with what to do, the webhook check skipped, exit 1', async () => {
    const plain = await appNamespace();
    const off = await confighash(['doctor', '-n', plain]);
    expect(off.code).toBe(1);
    expect(off.stdout).toMatch(
      new RegExp(
        `^FAIL {2}namespace ${plain} is not opted in: .* — kubectl label namespace ${plain} confighash.dev/enabled=true`,
        'm',
      ),
    );
    expect(off.stdout).toMatch(/^skip {2}the webhook was not asked/m);
  });
});
