// The import graph points inward (CONTRIBUTING.md, rules of the house): core ← evaluate ← mutate/follow ←
// server/kube ← cli ← commands ← main, and the packages that do I/O or belong to an adapter stay
// out of the core. Read from the source text, so a new import that points
// outward fails here rather than in review.

import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

const SRC = join(REPO_ROOT, 'src');

/**
 * The layer of a file under src/, by its first path segment; a use case's `ports.ts` is a
 * layer of its own (`follow/ports`), so that the table can let an adapter see a use case
 * through its ports and nothing else of it.
 */
function layerOf(file: string): string {
  const path = relative(SRC, file).replace(/\.ts$/, '');
  if (path.endsWith('/ports')) return path;
  const top = path.split('/')[0]!;
  return path.includes('/') ? top : path;
}

/** A layer always sees its own ports. */
function isOwnPorts(from: string, to: string): boolean {
  return to === `${from}/ports`;
}

/**
 * What each layer may import, besides itself: CONTRIBUTING.md's table between its `layers`
 * markers, so that the rules people read are the rules this enforces.
 */
const ALLOWED: Record<string, readonly string[]> = readLayers(
  readFileSync(join(REPO_ROOT, 'CONTRIBUTING.md'), 'utf8'),
);

function readLayers(text: string): Record<string, readonly string[]> {
  const table = /<!-- layers:[^>]*-->\n([\s\S]*?)<!-- \/layers -->/.exec(text)?.[1];
  if (!table) throw new Error('CONTRIBUTING.md has no layers table');
  const rows = table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  return Object.fromEntries(
    rows.map(([, layer, , imports]) => [
      layer!.replaceAll('`', ''),
      imports === 'everything'
        ? ['*']
        : imports === '—'
          ? []
          : imports!.split(',').map((name) => name.trim().replaceAll('`', '')),
    ]),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

const imports = sourceFiles(SRC).flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)].map((match) => ({
    file: relative(SRC, file),
    from: layerOf(file),
    to: layerOf(resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts'))),
  })),
);

it('every layer is known', () => {
  const unknown = imports.filter(({ from, to }) => !(from in ALLOWED) || !(to in ALLOWED));
  expect(unknown).toEqual([]);
});

it('imports point inward only', () => {
  const outward = imports.filter(
    ({ from, to }) =>
      from !== to &&
      !isOwnPorts(from, to) &&
      !ALLOWED[from]!.includes('*') &&
      !ALLOWED[from]!.includes(to),
  );
  expect(outward).toEqual([]);
});

it('adapters see the use cases only through their ports; follow mode never sees admission', () => {
  const useCases = ['admission', 'evaluate', 'follow', 'plan'];
  expect([
    ...imports.filter(({ from, to }) => from === 'kube' && useCases.includes(to)),
    ...imports.filter(({ from, to }) => from === 'follow' && to.startsWith('admission')),
    ...imports.filter(({ from, to }) => from === 'admission' && to === 'follow'),
  ]).toEqual([]);
});

it('the shared mechanisms have one home: nothing outside runtime starts a timer-based deadline', () => {
  // AbortSignal.timeout keeps its signal (and what its listener holds) for the whole
  // timeout; the one deadline (runtime/deadline.ts) lets go as soon as the work settles.
  const offenders = sourceFiles(SRC).filter(
    (file) =>
      layerOf(file) !== 'runtime' && /AbortSignal\.timeout\(/.test(readFileSync(file, 'utf8')),
  );
  expect(offenders.map((file) => relative(SRC, file))).toEqual([]);
});

it('main.ts alone stands at the root of src; everything else sits in a room', () => {
  expect(
    sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((path) => !path.includes('/')),
  ).toEqual(['main.ts']);
});

it('a file name means one thing: index.ts and ports.ts aside, no name repeats across rooms', () => {
  const shared = new Set(['index.ts', 'ports.ts']);
  const rooms = new Map<string, string[]>();
  for (const path of sourceFiles(SRC).map((file) => relative(SRC, file))) {
    const name = path.split('/').pop()!;
    if (!shared.has(name)) rooms.set(name, [...(rooms.get(name) ?? []), path]);
  }
  expect([...rooms.values()].filter((paths) => paths.length > 1)).toEqual([]);
});

// --- packages ---------------------------------------------------------------------

/** The layers that know nothing of HTTP, processes, files or the network. */
const PURE_CORE = [
  'sources',
  'hash',
  'patch',
  'workload',
  'evaluate',
  'evaluate/ports',
  'admission',
  'admission/ports',
];

/** Packages that do I/O or belong to an adapter: the core may import their types only. */
const ADAPTER_PACKAGES = [
  '@kubernetes/client-node',
  'fastify',
  'pino',
  'prom-client',
  'close-with-grace',
  'node:child_process',
  'node:fs',
  'node:http',
  'node:https',
  'node:net',
  'node:tls',
];

/** `fs` and `node:fs` are one module; a subpath (`node:fs/promises`) belongs to its package. */
function packageOf(specifier: string): string {
  const named = builtinModules.includes(specifier) ? `node:${specifier}` : specifier;
  const parts = named.split('/');
  return parts.slice(0, named.startsWith('@') ? 2 : 1).join('/');
}

/** `import type {…}`, or braces in which every name is a `type`: nothing is loaded. */
function isTypesOnly(keyword: string | undefined, clause: string | undefined): boolean {
  if (keyword) return true;
  const names = /^\{([^}]*)\}$/
    .exec(clause?.trim() ?? '')?.[1]
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return names !== undefined && names.length > 0 && names.every((name) => name.startsWith('type '));
}

const packageImports = sourceFiles(SRC).flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  const statements = [
    ...text.matchAll(
      /^(?:import|export)(\s+type)?\s+(?:([\w$*{},\s]*?)\s*from\s*)?'([^.'][^']*)'/gm,
    ),
  ].map((match) => ({ specifier: match[3]!, typesOnly: isTypesOnly(match[1], match[2]) }));
  const dynamic = [...text.matchAll(/\bimport\('([^.'][^']*)'\)/g)].map((match) => ({
    specifier: match[1]!,
    typesOnly: false,
  }));
  return [...statements, ...dynamic].map(({ specifier, typesOnly }) => ({
    file: relative(SRC, file),
    from: layerOf(file),
    to: packageOf(specifier),
    typesOnly,
  }));
});

it('the pure core imports no adapter package, types aside', () => {
  expect(
    packageImports.filter(
      ({ from, to, typesOnly }) =>
        PURE_CORE.includes(from) && ADAPTER_PACKAGES.includes(to) && !typesOnly,
    ),
  ).toEqual([]);
});

it('server imports neither kube nor the client kube wraps', () => {
  expect([
    ...imports.filter(({ from, to }) => from === 'server' && to === 'kube'),
    ...packageImports.filter(
      ({ from, to }) => from === 'server' && to === '@kubernetes/client-node',
    ),
  ]).toEqual([]);
});

it('nothing of src loads client-node: the credential child alone does (kube/credentials.ts)', () => {
  // Its generated API is tens of MB and more than a second of CPU on every start of the CLI.
  expect(
    packageImports.filter(({ to, typesOnly }) => to === '@kubernetes/client-node' && !typesOnly),
  ).toEqual([]);
});

it('only the composition root builds adapters: nothing else imports kube or close-with-grace', () => {
  const root = ['main', 'commands'];
  expect([
    ...imports.filter(({ from, to }) => to === 'kube' && from !== 'kube' && !root.includes(from)),
    ...packageImports.filter(({ from, to }) => to === 'close-with-grace' && !root.includes(from)),
  ]).toEqual([]);
});

it('the package check reads what it checks', () => {
  // Without this, a regular expression that matched nothing would pass every rule above.
  const seen = (to: string, typesOnly: boolean) =>
    packageImports.some((entry) => entry.to === to && entry.typesOnly === typesOnly);
  expect([seen('fastify', false), seen('node:fs', false), seen('pino', true)]).toEqual([
    true,
    true,
    true,
  ]);
});
