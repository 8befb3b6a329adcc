// `kubectl kustomize` of a base with components, as a user's own kustomization names them.

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../tools/cluster/repo.js';

const MANIFESTS = join(REPO_ROOT, 'manifests');

/** The rendered YAML of `base` with `components` (paths under manifests/). */
export async function renderKustomization(
  base: string,
  components: readonly string[],
): Promise<string> {
  // kustomize accepts only relative paths to bases and components: a kustomization inside manifests/.
  const dir = await mkdtemp(join(MANIFESTS, '.render-test-'));
  const up = (path: string) => relative(dir, join(MANIFESTS, path));
  await writeFile(
    join(dir, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${up(base)}`,
      'components:',
      ...components.map((component) => `  - ${up(component)}`),
      '',
    ].join('\n'),
  );
  try {
    return (await promisify(execFile)('kubectl', ['kustomize', dir])).stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
