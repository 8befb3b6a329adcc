// Which cluster the resolver's child picks (src/kube/credentials.ts), as kubectl
// would: --kubeconfig, KUBECONFIG's files merged, --context. Each row reads the
// server and namespace it resolved; no server is contacted.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  childProcessResolver,
  KubeconfigError,
  type KubeconfigSelection,
} from '../../src/kube/credentials.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'confighash-kubeconfigs-'));
});

interface Context {
  readonly name: string;
  readonly server: string;
  readonly namespace?: string;
}

/** A kubeconfig whose contexts each have a cluster and a token user of the same name. */
async function kubeconfig(
  file: string,
  contexts: readonly Context[],
  currentContext?: string,
): Promise<string> {
  const path = join(dir, file);
  const text = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: contexts.map(({ name, server }) => ({ name, cluster: { server } })),
    users: contexts.map(({ name }) => ({ name, user: { token: `token-${file}-${name}` } })),
    contexts: contexts.map(({ name, namespace }) => ({
      name,
      context: { cluster: name, user: name, ...(namespace ? { namespace } : {}) },
    })),
    ...(currentContext ? { 'current-context': currentContext } : {}),
  };
  await writeFile(path, JSON.stringify(text), { mode: 0o600 });
  return path;
}

function resolve(env: NodeJS.ProcessEnv, selection: KubeconfigSelection = {}) {
  return childProcessResolver({ PATH: process.env.PATH, HOME: dir, ...env }, selection)();
}

describe('KUBECONFIG with several files, merged as kubectl merges them', () => {
  it('the first file to define a name wins it; the current-context is the first that sets one', async () => {
    const first = await kubeconfig('first', [{ name: 'shared', server: 'https://first:6443' }]);
    const second = await kubeconfig(
      'second',
      [
        { name: 'shared', server: 'https://second:6443' },
        { name: 'staging', server: 'https://staging:6443', namespace: 'shop' },
      ],
      'shared',
    );
    const third = await kubeconfig(
      'third',
      [{ name: 'prod', server: 'https://prod:6443' }],
      'prod',
    );
    const access = await resolve({ KUBECONFIG: [first, second, third].join(':') });
    expect(access.server.href).toBe('https://first:6443/');
    expect(access.headers.authorization).toBe('Bearer token-first-shared');
    const staging = await resolve(
      { KUBECONFIG: [first, second, third].join(':') },
      { context: 'staging' },
    );
    expect(staging.server.href).toBe('https://staging:6443/');
    expect(staging.namespace).toBe('shop');
  });

  it('a file that does not exist or is empty is skipped; when none is left, that is the one-line mistake', async () => {
    const only = await kubeconfig('only', [{ name: 'a', server: 'https://a:6443' }], 'a');
    const empty = join(dir, 'empty');
    await writeFile(empty, '');
    const access = await resolve({ KUBECONFIG: `${join(dir, 'absent')}:${empty}::${only}` });
    expect(access.server.href).toBe('https://a:6443/');
    const none = resolve({ KUBECONFIG: `${join(dir, 'absent')}:${empty}` });
    await expect(none).rejects.toBeInstanceOf(KubeconfigError);
    await expect(none).rejects.toThrow(/^cannot load the kubeconfig: none of the files KUBECONFIG/);
  });

  it('client-node alone does not merge this way: loadFromDefault refuses a name two files define', async () => {
    // Why the child merges the files itself: if client-node starts doing it, this row says so.
    const { KubeConfig } = createRequire(import.meta.url)('@kubernetes/client-node') as {
      KubeConfig: new () => { loadFromDefault(): void };
    };
    const a = await kubeconfig('dup-a', [{ name: 'x', server: 'https://a:6443' }], 'x');
    const b = await kubeconfig('dup-b', [{ name: 'x', server: 'https://b:6443' }], 'x');
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = `${a}:${b}`;
    try {
      expect(() => new KubeConfig().loadFromDefault()).toThrow(/Duplicate cluster: x/);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
    await expect(resolve({ KUBECONFIG: `${a}:${b}` })).resolves.toMatchObject({
      server: new URL('https://a:6443'),
    });
  });
});

describe('--kubeconfig and --context', () => {
  it('--kubeconfig is the one file read: KUBECONFIG is ignored', async () => {
    const fromEnv = await kubeconfig('env', [{ name: 'e', server: 'https://env:6443' }], 'e');
    const chosen = await kubeconfig('flag', [{ name: 'f', server: 'https://flag:6443' }], 'f');
    const access = await resolve({ KUBECONFIG: fromEnv }, { kubeconfig: chosen });
    expect(access.server.href).toBe('https://flag:6443/');
  });

  it('--context picks a context other than the current one, with its namespace', async () => {
    const path = await kubeconfig(
      'two',
      [
        { name: 'here', server: 'https://here:6443' },
        { name: 'there', server: 'https://there:6443', namespace: 'far' },
      ],
      'here',
    );
    const access = await resolve({}, { kubeconfig: path, context: 'there' });
    expect(access.server.href).toBe('https://there:6443/');
    expect(access.namespace).toBe('far');
    expect(access.headers.authorization).toBe('Bearer token-two-there');
  });

  it.each<[string, KubeconfigSelection, RegExp]>([
    [
      'a context the kubeconfig lacks',
      { context: 'nowhere' },
      /^context 'nowhere' is not in the kubeconfig \(contexts: here\)$/,
    ],
    [
      'a --kubeconfig that does not exist',
      { kubeconfig: '/nonexistent/kubeconfig' },
      /^cannot load the kubeconfig: ENOENT/,
    ],
    [
      'an empty --kubeconfig',
      { kubeconfig: '/dev/null' },
      /^cannot load the kubeconfig: \/dev\/null is empty$/,
    ],
  ])('%s is the user’s mistake', async (_name, selection, error) => {
    const path = await kubeconfig('mistakes', [{ name: 'here', server: 'https://h:6443' }], 'here');
    const resolved = resolve({ KUBECONFIG: path }, selection);
    await expect(resolved).rejects.toBeInstanceOf(KubeconfigError);
    await expect(resolved).rejects.toThrow(error);
  });
});
