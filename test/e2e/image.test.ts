// The image built without Docker (tools/image/build.sh, `npm run image`) and the two
// test images (tools/image/test-images.sh): reproducible to the byte, and with the
// contents the Dockerfile describes. Everything expected is computed here on its
// own (the Dockerfile, git, an npm install of our own, ldd), never read back from
// the scripts.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT as REPO } from '../../tools/cluster/repo.js';
import { runScriptForOutput } from '../../tools/cluster/scripts.js';

const run = promisify(execFile);
const BUILD_TIMEOUT = 600_000;

// --- reading an OCI archive -------------------------------------------------------

interface TarEntry {
  name: string;
  /** '0' file, '2' symlink, '5' directory (ustar type flags). */
  type: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  linkname: string;
  data: Buffer;
}

/** A ustar/pax reader: enough for GNU tar's --format=posix and Python's tarfile. */
function readTar(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let pax: Record<string, string> = {};
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const text = (start: number, length: number) =>
      header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const octal = (start: number, length: number) =>
      Number.parseInt(text(start, length).trim() || '0', 8);
    const size = pax.size !== undefined ? Number(pax.size) : octal(124, 12);
    const type = text(156, 1) || '0';
    const data = archive.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      pax = parsePax(data);
      continue;
    }
    const prefix = text(345, 155);
    const name = pax.path ?? (prefix ? `${prefix}/${text(0, 100)}` : text(0, 100));
    entries.push({
      name: name.replace(/\/$/, ''),
      type,
      mode: octal(100, 8),
      uid: octal(108, 8),
      gid: octal(116, 8),
      mtime: pax.mtime !== undefined ? Math.floor(Number(pax.mtime)) : octal(136, 12),
      linkname: pax.linkpath ?? text(157, 100),
      data,
    });
    pax = {};
  }
  return entries;
}

function parsePax(data: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.toString('utf8', offset, space));
    const record = data.toString('utf8', space + 1, offset + length - 1);
    const equals = record.indexOf('=');
    records[record.slice(0, equals)] = record.slice(equals + 1);
    offset += length;
  }
  return records;
}

interface ImageConfig {
  architecture: string;
  os: string;
  created: string;
  config: {
    User?: string;
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    Env?: string[];
    ExposedPorts?: Record<string, object>;
    Labels?: Record<string, string>;
  };
  rootfs: { diff_ids: string[] };
}

interface Image {
  ref: string;
  tag: string;
  digest: string;
  annotations: Record<string, string>;
  config: ImageConfig;
  /** The single layer, uncompressed and read. */
  files: TarEntry[];
}

/** Every image in an OCI archive, with each blob checked against its digest. */
async function readArchive(path: string): Promise<{ entries: TarEntry[]; images: Image[] }> {
  const entries = readTar(await readFile(path));
  const file = (name: string) => {
    const entry = entries.find((e) => e.name === name);
    if (!entry) throw new Error(`${path}: no ${name}`);
    return entry.data;
  };
  const blob = (digest: string) => {
    const data = file(`blobs/${digest.replace(':', '/')}`);
    expect(`sha256:${sha256(data)}`, `content of ${digest}`).toBe(digest);
    return data;
  };
  expect(JSON.parse(file('oci-layout').toString())).toEqual({ imageLayoutVersion: '1.0.0' });
  const index = JSON.parse(file('index.json').toString()) as {
    manifests: { digest: string; annotations: Record<string, string>; platform: object }[];
  };
  const images = index.manifests.map((descriptor) => {
    const manifest = JSON.parse(blob(descriptor.digest).toString()) as {
      config: { digest: string };
      layers: { digest: string; mediaType: string }[];
      annotations?: Record<string, string>;
    };
    expect(manifest.layers).toHaveLength(1);
    const layer = manifest.layers[0]!;
    expect(layer.mediaType).toBe('application/vnd.oci.image.layer.v1.tar+gzip');
    const config = JSON.parse(blob(manifest.config.digest).toString()) as ImageConfig;
    const tar = gunzipSync(blob(layer.digest));
    expect(config.rootfs.diff_ids).toEqual([`sha256:${sha256(tar)}`]);
    expect(descriptor.platform).toEqual({ architecture: config.architecture, os: config.os });
    return {
      ref: descriptor.annotations['io.containerd.image.name']!,
      tag: descriptor.annotations['org.opencontainers.image.ref.name']!,
      digest: descriptor.digest,
      annotations: manifest.annotations ?? {},
      config,
      files: readTar(tar),
    };
  });
  return { entries, images };
}

/** Writes a layer's files under `dir` (directories, files with their modes, symlinks). */
async function extract(files: TarEntry[], dir: string): Promise<void> {
  for (const entry of files) {
    const target = join(dir, entry.name);
    if (entry.type === '5') {
      await mkdir(target, { recursive: true });
    } else {
      await mkdir(dirname(target), { recursive: true });
      if (entry.type === '2') await symlink(entry.linkname, target);
      else await writeFile(target, entry.data, { mode: entry.mode });
    }
  }
  for (const entry of files) {
    if (entry.type === '5') await chmod(join(dir, entry.name), entry.mode);
  }
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

// --- what is expected, found independently ------------------------------------------

/** The runtime stage of the Dockerfile (after the last FROM), instruction by instruction. */
async function readDockerfile() {
  const text = await readFile(join(REPO, 'Dockerfile'), 'utf8');
  const lines = text.split('\n').filter((line) => line.trim() && !line.startsWith('#'));
  const last = lines.findLastIndex((line) => line.startsWith('FROM '));
  const runtime = lines.slice(last);
  const one = (instruction: string) => {
    const found = runtime.filter((line) => line.startsWith(`${instruction} `));
    expect(found, `one ${instruction} in the Dockerfile's runtime stage`).toHaveLength(1);
    return found[0]!.slice(instruction.length + 1).trim();
  };
  return {
    nodeVersion: /^ARG NODE_VERSION=(\S+)$/m.exec(text)![1]!,
    user: one('USER'),
    workdir: one('WORKDIR'),
    env: one('ENV'),
    expose: one('EXPOSE'),
    entrypoint: JSON.parse(one('ENTRYPOINT')) as string[],
    copies: runtime
      .filter((line) => line.startsWith('COPY '))
      .map((line) => line.split(/\s+/).at(-1)!),
  };
}

/** Every path under `dir`, relative, directories included, symlinks not followed. */
async function walk(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    found.push(relative(dir, join(entry.parentPath, entry.name)));
  }
  return found;
}

async function git(...args: string[]): Promise<string> {
  return (await run('git', args, { cwd: REPO })).stdout.trim();
}

/** `image: REF` and `archive: PATH` lines at the end of a build script's stdout. */
function parseOutput(stdout: string): { refs: string[]; archive: string } {
  const lines = stdout.trimEnd().split('\n');
  const archive = /^archive: (\/\S+)$/.exec(lines.at(-1)!)?.[1];
  const refs: string[] = [];
  for (let i = lines.length - 2; i >= 0; i--) {
    const ref = /^image: (\S+)$/.exec(lines[i]!)?.[1];
    if (!ref) break;
    refs.unshift(ref);
  }
  if (!archive || refs.length === 0) throw new Error(`unexpected output:\n${stdout}`);
  return { refs, archive };
}

/** A build script's images and archive, and its stdout and stderr. */
async function runImageScript(script: string) {
  const output = await runScriptForOutput(join(REPO, script), script, { timeoutMs: BUILD_TIMEOUT });
  return { ...parseOutput(output.stdout), ...output };
}

// --- the confighash image -----------------------------------------------------------

describe('npm run image (tools/image/build.sh)', () => {
  let first: Awaited<ReturnType<typeof runImageScript>>;
  let firstBytes: string;
  let second: Awaited<ReturnType<typeof runImageScript>>;
  let image: Image;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'confighash-image-test-'));
    // The first may be an earlier build of exactly these inputs (its stamp covers the whole
    // tree, uncommitted files too: CI's image phase made one); the second is a real build:
    // without its stamp, the script cannot take the last build for this one.
    const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    const stamp = join(REPO, 'build/images', `confighash-${version}.stamp`);
    // What `npm run image` runs (package.json).
    first = await runImageScript('tools/image/build.sh');
    firstBytes = sha256(await readFile(first.archive));
    await rm(stamp, { force: true });
    second = await runImageScript('tools/image/build.sh');
    const { images } = await readArchive(second.archive);
    expect(images).toHaveLength(1);
    image = images[0]!;
  }, 2 * BUILD_TIMEOUT);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('is what `npm run image` runs: the build script, nothing around it', async () => {
    const { scripts } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    expect(scripts.image).toBe('bash tools/image/build.sh');
  });

  it('prints the image and the archive last, and the manifest digest on stderr', async () => {
    const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    expect(second.refs).toEqual([`confighash.local/confighash:${version}`]);
    expect(second.archive).toBe(join(REPO, 'build/images', `confighash-${version}.oci.tar`));
    expect(image.ref).toBe(second.refs[0]);
    expect(image.tag).toBe(version);
    expect(second.stderr).toContain(image.digest);
  });

  it('is reproducible: two builds give the same index digest and the same archive bytes', async () => {
    // A real build says `index digest D`; one that found its stamp current, `current (…): index D`.
    const digestOf = (stderr: string) =>
      /index (?:digest )?(sha256:[0-9a-f]{64})/.exec(stderr)?.[1];
    expect(digestOf(first.stderr)).toMatch(/^sha256:/);
    expect(digestOf(second.stderr)).toBe(digestOf(first.stderr));
    expect(sha256(await readFile(second.archive))).toBe(firstBytes);
  });

  it('has the runtime configuration of the Dockerfile', async () => {
    const dockerfile = await readDockerfile();
    const config = image.config.config;
    expect(config.User).toBe(dockerfile.user);
    // Never root, whatever the Dockerfile says.
    expect(config.User).toBe('65532:65532');
    expect(config.Entrypoint).toEqual(dockerfile.entrypoint);
    expect(config.Entrypoint).toEqual([
      '/nodejs/bin/node',
      '--max-old-space-size=128',
      '--max-semi-space-size=8',
      '/app/dist/main.js',
      'serve',
    ]);
    expect(config.Cmd ?? []).toEqual([]);
    expect(config.WorkingDir).toBe(dockerfile.workdir);
    expect(config.Env).toEqual([dockerfile.env]);
    expect(config.Env).toContain('NODE_ENV=production');
    expect(Object.keys(config.ExposedPorts ?? {})).toEqual([`${dockerfile.expose}/tcp`]);
  });

  it('runs the Node.js version of the Dockerfile, on the libraries in the image', async () => {
    const { nodeVersion } = await readDockerfile();
    const rootfs = join(work, 'rootfs');
    await extract(image.files, rootfs);
    // The image's own dynamic loader and libraries, not the host's.
    const [loader] = image.files.map((f) => f.name).filter((name) => /^lib64\/ld-linux/.test(name));
    expect(loader).toBeDefined();
    const node = [
      join(rootfs, loader!),
      '--library-path',
      join(rootfs, 'lib/x86_64-linux-gnu'),
      join(rootfs, 'nodejs/bin/node'),
    ];
    const version = await run(node[0]!, [...node.slice(1), '--version']);
    expect(version.stdout.trim()).toBe(`v${nodeVersion}`);
    // The app starts from /app as laid out in the image.
    const help = await run(node[0]!, [...node.slice(1), 'dist/main.js', '--help'], {
      cwd: join(rootfs, 'app'),
    });
    expect(help.stdout).toContain('serve');
  });

  it('holds package.json, dist/ and the production node_modules in /app, nothing more', async () => {
    // Our own install of the production dependencies, as the Dockerfile's deps stage does it.
    const deps = join(work, 'deps');
    await mkdir(deps);
    await cp(join(REPO, 'package.json'), join(deps, 'package.json'));
    await cp(join(REPO, 'package-lock.json'), join(deps, 'package-lock.json'));
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: deps,
      timeout: BUILD_TIMEOUT,
    });
    const expected = [
      'package.json',
      'dist',
      ...(await walk(join(REPO, 'dist'))).map((p) => `dist/${p}`),
      'node_modules',
      ...(await walk(join(deps, 'node_modules'))).map((p) => `node_modules/${p}`),
      // npm's SBOM of those dependencies (tools/image/build.sh; the Dockerfile has none).
      'sbom.spdx.json',
    ].sort();
    const actual = image.files
      .map((f) => f.name)
      .filter((name) => name.startsWith('app/'))
      .map((name) => name.slice('app/'.length))
      .sort();
    expect(actual).toEqual(expected);
    // What the Dockerfile copies into /app (relative to WORKDIR) is exactly those three,
    // and node goes where the entrypoint runs it.
    const { copies, entrypoint } = await readDockerfile();
    expect(copies.filter((to) => to.startsWith('./')).sort()).toEqual([
      './dist',
      './node_modules',
      './package.json',
    ]);
    expect(copies.filter((to) => !to.startsWith('./'))).toEqual([entrypoint[0]]);

    const inImage = (name: string) => image.files.find((f) => f.name === `app/${name}`)!.data;
    expect(inImage('package.json').equals(await readFile(join(REPO, 'package.json')))).toBe(true);
    for (const path of expected.filter((p) => p.startsWith('dist/') && p.endsWith('.js'))) {
      expect(inImage(path).equals(await readFile(join(REPO, path))), path).toBe(true);
    }
  });

  it('holds, besides /app, only node, the libraries ldd names for it, passwd and group', async () => {
    const node = image.files.find((f) => f.name === 'nodejs/bin/node')!;
    const hostNode = join(work, 'node');
    await writeFile(hostNode, node.data, { mode: 0o755 });
    const { stdout } = await run('ldd', [hostNode]);
    const libraries = [...stdout.matchAll(/(?:=> )?(\/\S+) \(0x/g)].map((m) => m[1]!.slice(1));
    expect(libraries.some((l) => l.includes('libc.so'))).toBe(true);
    const withParents = new Set<string>();
    for (const path of ['nodejs/bin/node', 'etc/passwd', 'etc/group', ...libraries]) {
      const parts = path.split('/');
      for (let i = 1; i <= parts.length; i++) withParents.add(parts.slice(0, i).join('/'));
    }
    const outsideApp = image.files
      .map((f) => f.name)
      .filter((n) => n !== 'app' && !n.startsWith('app/'));
    expect(outsideApp.sort()).toEqual([...withParents].sort());

    const names = image.files.map((f) => f.name);
    expect(names).not.toContain('bin/sh');
    expect(names.filter((n) => /(^|\/)(sh|bash|npm|npx|apt|apt-get|dpkg)$/.test(n))).toEqual([]);
    expect(names.filter((n) => /(^|\/)node_modules\/npm(\/|$)/.test(n))).toEqual([]);
  });

  it('names root and nonroot 65532 in /etc/passwd and /etc/group; every file root-owned, at the epoch', async () => {
    const text = (name: string) => image.files.find((f) => f.name === name)!.data.toString();
    expect(text('etc/passwd')).toMatch(/^root:x:0:0:/m);
    expect(text('etc/passwd')).toMatch(/^nonroot:x:65532:65532:/m);
    expect(text('etc/group')).toMatch(/^root:x:0:/m);
    expect(text('etc/group')).toMatch(/^nonroot:x:65532:/m);
    const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? (await git('log', '-1', '--format=%ct')));
    for (const file of image.files) {
      expect([file.name, file.uid, file.gid, file.mtime]).toEqual([file.name, 0, 0, epoch]);
    }
    // Everything the app needs is readable by 65532 (owner root, no write needed).
    expect(image.files.filter((f) => (f.mode & 0o004) === 0).map((f) => f.name)).toEqual([]);
  });

  it('carries the OCI labels and annotations, the revision being HEAD (-dirty when dirty)', async () => {
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    const dirty = (await git('status', '--porcelain')) !== '';
    const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? (await git('log', '-1', '--format=%ct')));
    const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z');
    const expected = {
      'org.opencontainers.image.source': pkg.repository.url
        .replace(/^git\+/, '')
        .replace(/\.git$/, ''),
      'org.opencontainers.image.revision': `${await git('rev-parse', 'HEAD')}${dirty ? '-dirty' : ''}`,
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.created': created,
      'org.opencontainers.image.title': pkg.name,
      'org.opencontainers.image.licenses': pkg.license,
    };
    expect(image.config.config.Labels).toMatchObject(expected);
    expect(image.annotations).toMatchObject(expected);
    expect(image.config.created).toBe(created);
  });
});

// --- the test images ----------------------------------------------------------------

describe('tools/image/test-images.sh', () => {
  let built: Awaited<ReturnType<typeof runImageScript>>;
  let images: Map<string, Image>;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'confighash-test-images-'));
    built = await runImageScript('tools/image/test-images.sh');
    images = new Map((await readArchive(built.archive)).images.map((image) => [image.ref, image]));
  }, BUILD_TIMEOUT);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('prints both images and one archive that holds exactly them', () => {
    expect(built.refs.sort()).toEqual(['confighash.local/busybox:1', 'confighash.local/pause:1']);
    expect([...images.keys()].sort()).toEqual(built.refs);
    expect([...images.values()].map((i) => i.tag)).toEqual(['1', '1']);
  });

  it(
    'is reproducible, and a rerun with the same inputs reuses the archive',
    async () => {
      const bytes = sha256(await readFile(built.archive));
      const cached = await runImageScript('tools/image/test-images.sh');
      expect(cached.stderr).toContain('cached');
      expect(cached.archive).toBe(built.archive);
      await rm(built.archive);
      const rebuilt = await runImageScript('tools/image/test-images.sh');
      expect(rebuilt.stderr).not.toContain('cached');
      expect(rebuilt.archive).toBe(built.archive);
      expect(sha256(await readFile(rebuilt.archive))).toBe(bytes);
    },
    BUILD_TIMEOUT,
  );

  it('pause:1 is one static /pause that exits 0 on SIGTERM and SIGINT', async () => {
    const pause = images.get('confighash.local/pause:1')!;
    expect(pause.config.config.Entrypoint).toEqual(['/pause']);
    expect(pause.files.map((f) => [f.name, f.type, f.mode])).toEqual([['pause', '0', 0o755]]);
    const binary = pause.files[0]!.data;
    expect(hasInterpreter(binary)).toBe(false);

    const path = join(work, 'pause');
    await writeFile(path, binary, { mode: 0o755 });
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const child = execFile(path);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(child.exitCode).toBe(null);
      const exited = new Promise<number | null>((resolve) =>
        child.on('exit', (code) => resolve(code)),
      );
      child.kill(signal);
      expect(await exited, signal).toBe(0);
    }
  });

  // A PID namespace needs root (the node tests run as root anyway).
  it.runIf(process.getuid?.() === 0)(
    'pause:1 reaps orphans as PID 1 of a PID namespace',
    async () => {
      const path = join(work, 'pause-ns');
      await writeFile(path, images.get('confighash.local/pause:1')!.files[0]!.data, {
        mode: 0o755,
      });
      const unshare = execFile('unshare', ['--pid', '--fork', path]);
      const exited = new Promise<number | null>((resolve) =>
        unshare.on('exit', (code) => resolve(code)),
      );
      const children = async (pid: number) =>
        (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).trim();
      let pause = 0;
      try {
        for (let i = 0; i < 50 && !pause; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          pause = Number((await children(unshare.pid!)) || 0);
        }
        expect(pause).toBeGreaterThan(0);
        // sh starts sleep and exits at once: sleep is re-parented to PID 1, pause. (Its
        // stdio is not nsenter's, or execFile would wait for sleep to close the pipes.)
        await run('nsenter', [
          '-t',
          String(pause),
          '-p',
          '--',
          '/usr/bin/busybox',
          'sh',
          '-c',
          'sleep 1 </dev/null >/dev/null 2>&1 & exit',
        ]);
        const orphan = await children(pause);
        expect(orphan).toMatch(/^\d+$/);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        // Reaped: no zombie left behind.
        expect(await children(pause)).toBe('');
        process.kill(pause, 'SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        // After a failure too, nothing this test started outlives it.
        if (unshare.exitCode === null && unshare.signalCode === null) {
          if (pause) process.kill(pause, 'SIGKILL');
          unshare.kill('SIGKILL');
        }
      }
    },
  );

  it("busybox:1 is Debian's static busybox with its applets, /bin/sh first, usable by any uid", async () => {
    const busybox = images.get('confighash.local/busybox:1')!;
    expect(busybox.config.config.Entrypoint).toEqual(['/bin/sh']);
    expect(busybox.config.config.User ?? '').toBe('');
    const file = (name: string) => busybox.files.find((f) => f.name === name);
    expect(file('bin/busybox')!.data.equals(await readFile('/usr/bin/busybox'))).toBe(true);
    expect(hasInterpreter(file('bin/busybox')!.data)).toBe(false);
    for (const applet of ['sh', 'echo', 'cat', 'sleep', 'env', 'ls', 'printf', 'wget', 'httpd']) {
      expect([applet, file(`bin/${applet}`)?.type, file(`bin/${applet}`)?.linkname]).toEqual([
        applet,
        '2',
        'busybox',
      ]);
    }
    expect(file('tmp')!.mode).toBe(0o1777);
    expect(busybox.files.filter((f) => (f.mode & 0o005) !== 0o005 && f.type !== '2')).toEqual([]);

    const rootfs = join(work, 'busybox');
    await extract(busybox.files, rootfs);
    const { stdout } = await run(join(rootfs, 'bin/sh'), ['-c', 'printf "%s-%s\\n" a b; echo ok']);
    expect(stdout).toBe('a-b\nok\n');
  });
});

/** Whether an ELF64 executable names a dynamic loader (a PT_INTERP program header). */
function hasInterpreter(elf: Buffer): boolean {
  expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    if (elf.readUInt32LE(phoff + i * phentsize) === 3) return true;
  }
  return false;
}
