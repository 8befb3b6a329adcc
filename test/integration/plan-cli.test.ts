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
      /^confighash: -o must be json or yaml, got 'wide'$/,
    ],
    [
      'explain with an unknown output',
      ['explain', 'deploy/web', '-o', 'wide'],
      /-o must be json or yaml/,
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
      /^confighash: say which workload: confighash explain KIND\/NAME/,
    ],
    ['explain of a name alone', ['explain', 'web'], /^confighash: 'web' is not KIND\/NAME/],
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
    expect(JSON.parse(stdout)).toEqual([
      {
        kind: 'Deployment',
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
    expect(yaml.stdout).toMatch(/^- kind: Deployment\n {2}namespace: app\n {2}name: quiet\n/);
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
    expect(JSON.parse(stdout)).toMatchObject([
      { kind: 'Worker', namespace: 'app', name: 'crunch', verdict: 'no-roll' },
    ]);
  });

  it('without it, the kind is no workload', async () => {
    const { code, stdout } = await run(['plan', '-f', '-', '--offline', '-o', 'json'], worker);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([]);
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
