// The import graph points inward (STYLE.md, issue 13): core ← evaluate ←
// mutate/follow ← server/kube ← main. Read from the source text, so a new
// import that points outward fails here rather than in review.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

const SRC = join(REPO_ROOT, 'src');

/** The layer of a file under src/, by its first path segment. */
function layerOf(file: string): string {
  const path = relative(SRC, file).replace(/\.ts$/, '');
  const top = path.split('/')[0]!;
  return path.includes('/') ? top : path;
}

/** What each layer may import, besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  sources: [],
  hash: ['sources'],
  patch: [],
  workload: ['sources'],
  admission: [],
  evaluate: ['sources', 'hash', 'workload'],
  review: ['admission', 'evaluate', 'patch', 'sources'],
  mutate: ['admission', 'evaluate', 'review', 'patch', 'sources', 'workload'],
  follow: ['evaluate', 'sources', 'workload'],
  plan: ['evaluate', 'sources', 'hash', 'workload'],
  certs: [],
  server: ['admission', 'review'],
  kube: ['evaluate', 'follow', 'plan', 'certs', 'hash', 'sources', 'workload'],
  config: ['admission', 'certs', 'follow', 'server', 'workload'],
  main: ['*'],
};

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
    ({ from, to }) => from !== to && !ALLOWED[from]!.includes('*') && !ALLOWED[from]!.includes(to),
  );
  expect(outward).toEqual([]);
});

it('nothing but main imports mutate.ts', () => {
  expect(imports.filter(({ to, from }) => to === 'mutate' && from !== 'main')).toEqual([]);
});
