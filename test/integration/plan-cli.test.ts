// plan and explain as processes, without a cluster: every mistake is one line on
// stderr and exit 2; --offline answers from the manifests alone, exit 0 only
// when nothing can roll.

import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { runConfighash, stopStartedProcesses } from '../support/process.js';

// The rows name files in this directory before beforeAll writes them.
const dir = mkdtempSync(join(tmpdir(), 'confighash-plan-cli-'));
const yamlFileName = () => join(dir, 'app.yaml');
const kubeconfigName = () => join(dir, 'kubeconfig');
let yamlFile: string;
let notYaml: string;
beforeAll(async () => {
  yamlFile = yamlFileName();
  await writeFile(
    kubeconfigName(),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'here', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'here', user: { token: 't' } }],
      contexts: [{ name: 'here', context: { cluster: 'here', user: 'here' } }],
      'current-context': 'here',
    }),
  );
  await writeFile(
    yamlFile,
    [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: quiet, namespace: app, annotations: {confighash.dev/enabled: "false"}}',
      'spec: {template: {spec: {containers: [{name: a, image: a}]}}}',
    ].join('\n'),
  );
  notYaml = join(dir, 'broken.yaml');
  await writeFile(notYaml, 'a: [\n');
});
afterEach(stopStartedProcesses);

// No cluster: a kubeconfig that does not exist must never be needed for these.
const ENV = { KUBECONFIG: '/nonexistent/kubeconfig' };

async function run(args: string[], input?: string) {
  const running = runConfighash(args, ENV, input);
  const code = await running.exited;
  return { code, ...running.output };
}

describe('mistakes: one line, exit 2', () => {
  it.each([
    [
      'plan without manifests',
      ['plan'],
      /^confighash: say which manifests: -f FILE, -f - \(stdin\) or -k DIR$/,
    ],
    [
      '-f and -k together',
      ['plan', '-f', 'a', '-k', 'b'],
      /^confighash: -f and -k cannot be combined$/,
    ],
    [
      'an unknown output',
      ['plan', '-f', 'a', '-o', 'wide'],
      /^confighash: -o must be json, yaml or name, got 'wide'$/,
    ],
    [
      'explain with an unknown output',
      ['explain', 'deploy/web', '-o', 'wide'],
      /-o must be json, yaml or name/,
    ],
    [
      'an empty --context',
      ['plan', '-f', 'a', '--context='],
      /^confighash: --context needs a context name$/,
    ],
    [
      'a --kubeconfig that does not exist',
      ['plan', '-f', yamlFileName(), '--kubeconfig', '/nonexistent/other'],
      /^confighash: cannot load the kubeconfig: ENOENT/,
    ],
    [
      'explain with a --context the kubeconfig lacks',
      ['explain', 'deploy/web', '--kubeconfig', kubeconfigName(), '--context', 'nowhere'],
      /^confighash: context 'nowhere' is not in the kubeconfig \(contexts: here\)$/,
    ],
    ['an unknown flag', ['plan', '--frobnicate'], /^confighash: Unknown option '--frobnicate'/],
    [
      'a missing file',
      ['plan', '-f', '/nonexistent.yaml', '--offline'],
      /^confighash: cannot read -f \/nonexistent.yaml: ENOENT$/,
    ],
    [
      'a kustomize failure',
      ['plan', '-k', '/nonexistent-dir', '--offline'],
      /^confighash: kubectl kustomize \/nonexistent-dir failed: /,
    ],
    [
      'explain without a target',
      ['explain'],
      /^confighash: say which workload: confighash explain TYPE\/NAME/,
    ],
    ['explain of a name alone', ['explain', 'web'], /^confighash: 'web' is not a kind confighash/],
    [
      'explain of names with a selector',
      ['explain', 'deploy', 'web', '-l', 'app=web'],
      /^confighash: a name cannot be given together with -l/,
    ],
    [
      'explain of a name across all namespaces',
      ['explain', 'deploy/web', '-A'],
      /^confighash: a workload cannot be named across all namespaces/,
    ],
    [
      'explain of TYPE/NAME mixed with a name',
      ['explain', 'deploy/web', 'api'],
      /^confighash: give every workload as TYPE\/NAME, or one TYPE and its names/,
    ],
    [
      'a --request-timeout that is no duration',
      ['explain', 'deploy/web', '--request-timeout', 'soon'],
      /^confighash: --request-timeout must be a duration such as 30s or 2m/,
    ],
    [
      'a -v that is no number',
      ['plan', '-f', 'a', '-v', 'loud'],
      /^confighash: -v must be a whole number/,
    ],
    ['an empty --as', ['doctor', '--as='], /^confighash: --as needs a user name$/],
    [
      'a global flag before an unknown command',
      ['-n', 'demo', 'launch'],
      /^confighash: unknown command 'launch'/,
    ],
    [
      'completion of no shell',
      ['completion', 'tcsh'],
      /^confighash: say which shell: confighash completion bash\|zsh\|fish$/,
    ],
    [
      '-R with -k',
      ['plan', '-k', 'a', '-R'],
      /^confighash: -R reads -f directories; -k renders its own$/,
    ],
    [
      'a -f directory without manifests',
      ['plan', '-f', '/proc/self/fdinfo', '--offline'],
      /^confighash: -f \/proc\/self\/fdinfo has no \.yaml, \.yml or \.json file \(-R reads its subdirectories too\)$/,
    ],
    [
      'explain of a kind not handled',
      ['explain', 'cm/web'],
      /^confighash: 'cm' is not a kind confighash handles/,
    ],
    [
      'a bad --kind',
      ['plan', '-f', 'a', '--kind', 'Worker'],
      /^confighash: --kind Worker: 'Worker' is not an API group/,
    ],
    [
      'explain of a kind of your own without --kind',
      ['explain', 'worker/web'],
      /^confighash: 'worker' is not a kind confighash handles/,
    ],
    [
      // Past the kind (which --kind made known), the next mistake is the missing cluster.
      'explain of a kind of your own, without a cluster',
      ['explain', 'worker.example.com/web', '--kind', 'example.com/v1/Worker=spec.pod.template'],
      /^confighash: (cannot load the kubeconfig|no Kubernetes cluster found)/,
    ],
    [
      'explain without a cluster',
      ['explain', 'deploy/web'],
      /^confighash: (cannot load the kubeconfig|no Kubernetes cluster found)/,
    ],
  ])('%s', async (_name, args, error) => {
    const { code, stderr, stdout } = await run(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr.trimEnd()).toMatch(error);
  });

  it('manifests that are not YAML', async () => {
    const { code, stderr } = await run(['plan', '-f', notYaml, '--offline']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^confighash: the manifests are not YAML: .*\n$/);
  });
});

describe('--offline', () => {
  it('exit 0 when nothing in the manifests can roll', async () => {
    const { code, stdout } = await run(['plan', '-f', yamlFile, '--offline']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^app +deployment\/quiet +will not roll +opted out/m);
  });

  it('reads stdin, and says "cannot tell" (exit 1) for what needs the cluster', async () => {
    const manifest = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web}',
      'spec: {template: {spec: {containers: [{name: a, image: a, envFrom: [{secretRef: {name: s}}]}]}}}',
    ].join('\n');
    const { code, stdout } = await run(
      ['plan', '-f', '-', '--offline', '-n', 'shop', '-o', 'json'],
      manifest,
    );
    expect(code).toBe(1);
    expect(JSON.parse(stdout).items).toEqual([
      {
        kind: 'Deployment',
        group: 'apps',
        namespace: 'shop',
        name: 'web',
        verdict: 'unknown',
        reasons: ['cannot read namespace shop: offline, and not in the manifests'],
        changedSources: [],
        waitsForApproval: [],
      },
    ]);
  });
});

describe('-o yaml', () => {
  it('the same data as -o json', async () => {
    const json = await run(['plan', '-f', yamlFile, '--offline', '-o', 'json']);
    const yaml = await run(['plan', '-f', yamlFile, '--offline', '-o', 'yaml']);
    expect(yaml.code).toBe(0);
    expect(yaml.stdout).toMatch(
      /^apiVersion: v1\nkind: List\nitems:\n {2}- kind: Deployment\n {4}group: apps\n {4}namespace: app\n/,
    );
    const { load } = await import('js-yaml');
    expect(load(yaml.stdout)).toEqual(JSON.parse(json.stdout));
  });
});

describe('--kind', () => {
  // A kind of your own, as serve --kind takes it: without the flag plan does not see it.
  const worker = [
    'apiVersion: example.com/v1',
    'kind: Worker',
    'metadata: {name: crunch, namespace: app, annotations: {confighash.dev/enabled: "false"}}',
    'spec: {pod: {template: {spec: {containers: [{name: a, image: a}]}}}}',
  ].join('\n');

  it('plans the workloads of a kind given with its template path', async () => {
    const kind = ['--kind', 'example.com/v1/Worker=spec.pod.template'];
    const { code, stdout } = await run(
      ['plan', '-f', '-', '--offline', '-o', 'json', ...kind],
      worker,
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          kind: 'Worker',
          group: 'example.com',
          namespace: 'app',
          name: 'crunch',
          verdict: 'no-roll',
        },
      ],
    });
  });

  it('without it, the kind is no workload', async () => {
    const { code, stdout } = await run(['plan', '-f', '-', '--offline', '-o', 'json'], worker);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ apiVersion: 'v1', kind: 'List', items: [] });
  });
});

describe('-f DIR and -R', () => {
  const deployment = (name: string) =>
    [
      'apiVersion: apps/v1',
      'kind: Deployment',
      `metadata: {name: ${name}, namespace: app, annotations: {confighash.dev/enabled: "false"}}`,
      'spec: {template: {spec: {containers: [{name: a, image: a}]}}}',
    ].join('\n');

  it("a directory's .yaml, .yml and .json files; its subdirectories only with -R", async () => {
    const tree = join(dir, 'tree');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(tree, 'nested'), { recursive: true });
    await writeFile(join(tree, 'a.yaml'), deployment('top-a'));
    await writeFile(join(tree, 'b.yml'), deployment('top-b'));
    await writeFile(join(tree, 'notes.txt'), 'not a manifest: [');
    await writeFile(join(tree, 'nested', 'c.yaml'), deployment('deep-c'));
    const names = async (args: string[]) => {
      const { code, stdout } = await run(['plan', '-f', tree, '--offline', '-o', 'json', ...args]);
      expect(code).toBe(0);
      return (JSON.parse(stdout) as { items: { name: string }[] }).items.map(({ name }) => name);
    };
    expect(await names([])).toEqual(['top-a', 'top-b']);
    expect(await names(['-R'])).toEqual(['top-a', 'top-b', 'deep-c']);
  });
});

describe('as kubectl reads a command line', () => {
  it("kubectl's options before the command: -n demo plan … is plan … -n demo", async () => {
    const manifest = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web, annotations: {confighash.dev/enabled: "false"}}',
      'spec: {template: {spec: {containers: [{name: a, image: a}]}}}',
    ].join('\n');
    for (const args of [
      ['-n', 'demo', 'plan', '-f', '-', '--offline', '-o', 'json'],
      ['--namespace=demo', '-o', 'json', 'plan', '-f', '-', '--offline'],
      ['-ndemo', '-v', '0', 'plan', '-f', '-', '--offline', '-o=json'],
    ]) {
      const { code, stdout } = await run(args, manifest);
      expect(code, args.join(' ')).toBe(0);
      expect(JSON.parse(stdout).items[0]).toMatchObject({ namespace: 'demo', name: 'web' });
    }
  });

  it('-o name prints the workloads that will roll: none here', async () => {
    const { code, stdout } = await run(['plan', '-f', yamlFile, '--offline', '-o', 'name']);
    expect(code).toBe(0);
    expect(stdout).toBe('');
  });

  it('--help lists version and completion; version prints the package version', async () => {
    const help = await run(['--help']);
    expect(help.stdout).toMatch(/^ {2}version +print confighash's version$/m);
    expect(help.stdout).toMatch(/^ {2}completion +print a shell completion script/m);
    expect(help.stdout).toMatch(/^ {2}doctor +check that confighash works/m);
    const version = await run(['version']);
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(version.stdout).toBe(`${pkg.version}\n`);
  });

  it('completion bash loads in bash and completes commands, flags and kinds', async () => {
    const { code, stdout } = await run(['completion', 'bash']);
    expect(code).toBe(0);
    const script = join(dir, 'completion.bash');
    await writeFile(script, stdout);
    const { execFileSync } = await import('node:child_process');
    const complete = (words: string) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${script} && complete -p kubectl-confighash && COMP_WORDS=(${words}) && COMP_CWORD=$((\${#COMP_WORDS[@]}-1)) && _confighash && echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: 'utf8' },
      );
    expect(complete('kubectl-confighash -n demo doc')).toBe(
      'complete -o default -F _confighash kubectl-confighash\ndoctor\n',
    );
    expect(complete('kubectl-confighash explain ""')).toMatch(/\ndeploy deployments sts /);
    expect(complete('kubectl-confighash plan --rec')).toMatch(/\n--recursive\n$/);
  });

  it.each(['zsh', 'fish'])('completion %s names both programs', async (shell) => {
    const { code, stdout } = await run(['completion', shell]);
    expect(code).toBe(0);
    expect(stdout).toContain('kubectl-confighash');
    expect(stdout).toMatch(
      shell === 'zsh' ? /^#compdef confighash kubectl-confighash\n/ : /complete -c confighash /,
    );
  });
});

describe('the kubectl plugin', () => {
  it('npm installs `kubectl-confighash` beside `confighash`: the same program, found by kubectl on PATH', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.bin).toEqual({ confighash: 'dist/main.js', 'kubectl-confighash': 'dist/main.js' });
    const main = await readFile(join(REPO_ROOT, 'src/main.ts'), 'utf8');
    expect(main.startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});
