// A release installed as a user installs it (docs/design.md §12), on a real node of this
// file's own that holds no confighash image (test/support/node.ts, startOwnNodeFixture):
// go-containerregistry's registry runs inside the node's network namespace and is reached
// from here on the same loopback port (tools/cluster/forward.ts to a Unix socket that
// tools/node/unix-to-tcp.mjs serves inside), so one reference names it on both sides.
// `npm run release` pushes into it; the node's containerd pulls the image from it over
// plain HTTP, told so by a hosts.toml as a user configures a registry (no `ctr import`);
// `helm install oci://…` installs the chart from it, 2/2 Ready; a config change rolls an
// app. The arm64 image, pulled back from the registry, runs `node --version` and
// `confighash --help` under Debian's qemu-user-static.

import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASH } from '../../src/workload/annotations.js';
import { type Forward, forwardLoopbackToSocket } from '../../tools/cluster/forward.js';
import { buildNodeImages } from '../../tools/cluster/images.js';
import { registryHostsDir } from '../../tools/cluster/node.js';
import {
  type ManagedProcess,
  startProcess,
  waitUntilReady,
} from '../../tools/cluster/processes.js';
import { REPO_ROOT } from '../../tools/cluster/repo.js';
import { namespace, waitUntil, yamlDocuments } from '../support/e2e.js';
import { helmAgainst, helmOrSkip } from '../support/helm.js';
import {
  isReady,
  type NodeFixture,
  type Pod,
  SYSTEM_NAMESPACE,
  startOwnNodeFixture,
  waitForReadyWebhookPods,
} from '../support/node.js';

const exec = promisify(execFile);
const INDEX = 'application/vnd.oci.image.index.v1+json';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const VERSION = JSON.parse(
  execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").version)'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  }),
) as string;
const NODE_VERSION = /^ARG NODE_VERSION=(\S+)$/m.exec(
  execFileSync('cat', [join(REPO_ROOT, 'Dockerfile')], { encoding: 'utf8' }),
)?.[1];

/** What this file needs and the suite may lack: the registry built, Helm built, qemu. */
function orSkip(what: string, found: string | undefined, why: string): string | undefined {
  if (found) return found;
  if (process.env.CI === 'true')
    throw new Error(`${what}: cannot run: ${why} — with CI=true that is a failure`);
  console.warn(`${what} SKIPPED: ${why}`);
  return undefined;
}

function findOciTools(): string | undefined {
  try {
    return execFileSync('bash', [join(REPO_ROOT, 'tools/build-oci-tools.sh'), '--find'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

function findQemu(): string | undefined {
  try {
    return execFileSync('bash', ['-c', 'command -v qemu-aarch64-static'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    return undefined;
  }
}

const ociTools = orSkip(
  'release node tests',
  findOciTools(),
  'crane and registry are not built (run `bash tools/build-oci-tools.sh`, a minute once)',
);
const helm = helmOrSkip('release node tests');
const qemu = orSkip(
  'the arm64 image under qemu',
  findQemu(),
  'qemu-aarch64-static is not installed (bash tools/setup-host.sh installs it)',
);

interface Released {
  readonly image: { ref: string; digest: string };
  readonly chart: { ref: string; digest: string };
  readonly lines: string;
}

let fixture: NodeFixture & { readonly state: string };
let registry: ManagedProcess | undefined;
let forwarder: ManagedProcess | undefined;
let forward: Forward | undefined;
let host: string;
let released: Released;
let work: string;

beforeAll(async () => {
  if (!ociTools || !helm) return;
  // The test images only: confighash's image reaches this node from the registry alone.
  const images = await buildNodeImages();
  fixture = await startOwnNodeFixture([images.testImages.archive]);
  work = await mkdtemp(join(tmpdir(), 'confighash-release-'));
  host = await startRegistryInNode(join(ociTools, 'registry'));
  await trustPlainHttp(host);
  released = await release(host);
}, 600_000);

afterAll(async () => {
  await forwarder?.stop();
  await registry?.stop();
  await forward?.close();
  await fixture?.stop();
  if (work && !process.env.CONFIGHASH_KEEP_LOGS) await rm(work, { recursive: true, force: true });
});

/**
 * The registry inside the node's network namespace, on the port this host's end of the
 * forward got, so that HOST:PORT is the same registry here and there. Returns HOST:PORT.
 */
async function startRegistryInNode(binary: string): Promise<string> {
  const { pid } = fixture.cluster.node.namespaces;
  const socket = join(work, 'registry.sock');
  forward = await forwardLoopbackToSocket(socket);
  const port = String(forward.port);
  const inside = (command: string, args: string[]) => [
    '--target',
    String(pid),
    '--net',
    '--',
    command,
    ...args,
  ];
  registry = startProcess(
    'registry',
    'nsenter',
    inside(binary, ['-port', port]),
    join(work, 'registry.log'),
  );
  forwarder = startProcess(
    'registry-forward',
    'nsenter',
    inside(process.execPath, [
      join(REPO_ROOT, 'tools/node/unix-to-tcp.mjs'),
      socket,
      '127.0.0.1',
      port,
    ]),
    join(work, 'registry-forward.log'),
  );
  await waitUntilReady(forwarder, async () => Boolean(await stat(socket).catch(() => undefined)));
  const address = `127.0.0.1:${port}`;
  await waitUntilReady(registry, async () => (await fetch(`http://${address}/v2/`)).ok);
  return address;
}

/** containerd's hosts.toml for the registry: plain HTTP, pull and resolve. */
async function trustPlainHttp(address: string): Promise<void> {
  const dir = join(registryHostsDir(fixture.state), address);
  const hosts = [
    `server = "http://${address}"`,
    `[host."http://${address}"]`,
    '  capabilities = ["pull", "resolve"]',
    '',
  ].join('\n');
  await fixture.cluster.node.namespaces.exec('sh', [
    '-c',
    'mkdir -p "$1" && printf %s "$2" >"$1/hosts.toml"',
    'sh',
    dir,
    hosts,
  ]);
}

/** `npm run release -- --registry HOST`, with the file's own Docker and Helm config. */
async function release(address: string): Promise<Released> {
  const { stdout } = await exec(
    'npm',
    ['run', '--silent', 'release', '--', '--registry', address],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...helmEnv(), DOCKER_CONFIG: join(work, 'docker') },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const artefact = (kind: string) => {
    const match = new RegExp(`^${kind}: (\\S+) (sha256:[0-9a-f]{64})$`, 'm').exec(stdout);
    if (!match) throw new Error(`npm run release printed no ${kind}: line:\n${stdout}`);
    return { ref: match[1]!, digest: match[2]! };
  };
  return { image: artefact('image'), chart: artefact('chart'), lines: stdout };
}

function helmEnv(): Record<string, string> {
  return {
    HELM_CACHE_HOME: join(work, 'helm/cache'),
    HELM_CONFIG_HOME: join(work, 'helm/config'),
    HELM_DATA_HOME: join(work, 'helm/data'),
  };
}

const helmRun = (args: readonly string[]) =>
  helmAgainst(helm!, fixture.cluster.kubeconfig, work)(4, SYSTEM_NAMESPACE, args);

/** A manifest or blob of the registry, by the registry API. */
async function registryGet(path: string, accept?: string): Promise<Response> {
  const response = await fetch(`http://${host}/v2/confighash/confighash/${path}`, {
    headers: accept ? { accept } : {},
  });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
  return response;
}

interface Index {
  mediaType: string;
  manifests: { digest: string; platform: { architecture: string; os: string } }[];
}

async function platformImage(architecture: string) {
  const index = (await (
    await registryGet(`manifests/${released.image.digest}`, INDEX)
  ).json()) as Index;
  const entry = index.manifests.find((m) => m.platform.architecture === architecture);
  if (!entry) throw new Error(`no ${architecture} image in the index`);
  const manifest = (await (await registryGet(`manifests/${entry.digest}`, MANIFEST)).json()) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  const config = (await (await registryGet(`blobs/${manifest.config.digest}`)).json()) as {
    architecture: string;
    config: { Labels: Record<string, string> };
  };
  return { manifest, config };
}

/** The layer of a single-layer image, pulled from the registry and unpacked into a new directory. */
async function unpackLayer(digest: string): Promise<string> {
  const rootfs = await mkdtemp(join(tmpdir(), 'confighash-arm64-'));
  const tar = spawn('tar', ['-xz', '-C', rootfs], { stdio: ['pipe', 'ignore', 'inherit'] });
  const body = (await registryGet(`blobs/${digest}`)).body!;
  for await (const chunk of body) tar.stdin.write(chunk);
  tar.stdin.end();
  const [code] = await once(tar, 'exit');
  if (code !== 0) throw new Error(`tar -xz of ${digest} exited ${code}`);
  return rootfs;
}

describe.skipIf(!ociTools || !helm)('a release into a registry on the node', () => {
  it('pushes an OCI index of linux/amd64 and linux/arm64, labelled, and a chart pinning its digest', async () => {
    expect(released.image.ref).toBe(`${host}/confighash/confighash:${VERSION}`);
    expect(released.chart.ref).toBe(`oci://${host}/confighash/charts/confighash:${VERSION}`);
    const tagged = await registryGet(`manifests/${VERSION}`, INDEX);
    expect(tagged.headers.get('docker-content-digest')).toBe(released.image.digest);
    const index = (await tagged.json()) as Index;
    expect(index.mediaType).toBe(INDEX);
    expect(index.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`)).toEqual([
      'linux/amd64',
      'linux/arm64',
    ]);
    const commit = execFileSync('git', ['log', '-1', '--format=%ct'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    const { config } = await platformImage('arm64');
    expect(config.architecture).toBe('arm64');
    expect(config.config.Labels).toMatchObject({
      'org.opencontainers.image.source': 'https://github.com/confighash/confighash',
      'org.opencontainers.image.version': VERSION,
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.created': new Date(Number(commit) * 1000)
        .toISOString()
        .replace('.000', ''),
    });
    expect(config.config.Labels['org.opencontainers.image.revision']).toMatch(
      /^[0-9a-f]{40}(-dirty)?$/,
    );
    // The chart as a user pulls it: its values name the image by the digest just pushed.
    const values = await helmRun([
      'show',
      'values',
      `oci://${host}/confighash/charts/confighash`,
      '--version',
      VERSION,
      '--plain-http',
    ]);
    expect(values).toContain(`repository: "${host}/confighash/confighash"`);
    expect(values).toContain(`digest: "${released.image.digest}"`);
  });

  it.skipIf(!qemu)(
    'its arm64 image runs node and confighash --help under qemu, and carries its SBOM',
    async () => {
      const { manifest } = await platformImage('arm64');
      const rootfs = await unpackLayer(manifest.layers[0]!.digest);
      try {
        // qemu finds the loader and libraries under -L; node opens the script by the path given.
        const run = async (args: string[]) =>
          (
            await exec(qemu!, ['-L', rootfs, join(rootfs, 'nodejs/bin/node'), ...args], {
              cwd: join(rootfs, 'app'),
              maxBuffer: 16 * 1024 * 1024,
            })
          ).stdout;
        expect((await run(['--version'])).trim()).toBe(`v${NODE_VERSION}`);
        expect(await run(['dist/main.js', '--help'])).toMatch(/serve/);
        const sbom = JSON.parse(await readFile(join(rootfs, 'app/sbom.spdx.json'), 'utf8'));
        expect(sbom.spdxVersion).toBe('SPDX-2.3');
        expect(sbom.packages.map((p: { name: string }) => p.name)).toEqual(
          expect.arrayContaining(['confighash', 'fastify']),
        );
        expect(sbom.packages.map((p: { name: string }) => p.name)).not.toContain('vitest');
      } finally {
        await rm(rootfs, { recursive: true, force: true });
      }
    },
  );

  it('helm install oci://… pulls the image from the registry: 2/2 Ready; a config change rolls an app', async () => {
    await helmRun([
      'install',
      'confighash',
      `oci://${host}/confighash/charts/confighash`,
      '--version',
      VERSION,
      '--plain-http',
      '--create-namespace',
    ]);
    await fixture.k([
      'rollout',
      'status',
      'deployment/confighash',
      '-n',
      SYSTEM_NAMESPACE,
      '--timeout=240s',
    ]);
    const pods = await waitForReadyWebhookPods(fixture, 2, SYSTEM_NAMESPACE);
    const image = `${host}/confighash/confighash@${released.image.digest}`;
    const running = await fixture.json<{ spec: { containers: { image: string }[] } }>([
      'get',
      'pod',
      '-n',
      SYSTEM_NAMESPACE,
      pods[0]!.metadata.name,
    ]);
    expect(running.spec.containers[0]!.image).toBe(image);
    // containerd has it under the registry's name: pulled, not imported.
    expect(await fixture.cluster.node.ctr(['images', 'ls', '-q'])).toContain(image);

    const ns = 'released-app';
    await fixture.k(['apply', '--server-side', '-f', '-'], yamlDocuments(namespace(ns, 'true')));
    await fixture.k(['apply', '--server-side', '-n', ns, '-f', '-'], await greeter('hello'));
    await fixture.k(['rollout', 'status', 'deployment/greeter', '-n', ns, '--timeout=120s']);
    const first = await templateHash(ns);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    const oldPods = (await appPods(ns)).map((p) => p.metadata.name);
    await fixture.k(['apply', '--server-side', '-n', ns, '-f', '-'], await greeter('bonjour'));
    expect(await templateHash(ns)).not.toBe(first);
    await fixture.k(['rollout', 'status', 'deployment/greeter', '-n', ns, '--timeout=120s']);
    await waitUntil(
      async () => {
        const now = await appPods(ns);
        return (
          now.length === 2 && now.every((p) => !oldPods.includes(p.metadata.name) && isReady(p))
        );
      },
      'two new greeter pods Ready',
      120_000,
    );
    for (const pod of await appPods(ns)) {
      expect(await fixture.k(['logs', '-n', ns, pod.metadata.name])).toContain('greeting=bonjour');
    }
  });
});

/** examples/greeter with another greeting: config and workload in one file. */
async function greeter(greeting: string): Promise<string> {
  const app = await readFile(join(REPO_ROOT, 'examples/greeter/app.yaml'), 'utf8');
  if (!app.includes('GREETING: hello')) throw new Error('examples/greeter/app.yaml changed');
  return app.replace('GREETING: hello', `GREETING: ${greeting}`);
}

async function appPods(ns: string): Promise<Pod[]> {
  return (await fixture.json<{ items: Pod[] }>(['get', 'pods', '-n', ns, '-l', 'app=greeter']))
    .items;
}

async function templateHash(ns: string): Promise<string | undefined> {
  const deployment = await fixture.json<{
    spec: { template: { metadata: { annotations?: Record<string, string> } } };
  }>(['get', 'deployment', 'greeter', '-n', ns]);
  return deployment.spec.template.metadata.annotations?.[HASH];
}
