// The images a node runs, built by the project's own scripts (tools/image/):
// confighash from this source, and the pause and busybox test images. Each
// script's stdout ends with `image: REF` lines and an `archive: PATH` line.

import { join } from 'node:path';
import { REPO_ROOT } from './repo.js';
import { runScript } from './scripts.js';

export interface ImageArchive {
  readonly refs: readonly string[];
  readonly archive: string;
}

export interface NodeImages {
  /** confighash from this source. */
  readonly confighash: ImageArchive;
  /** pause (the sandbox image) and busybox (the test app). */
  readonly testImages: ImageArchive;
}

/** The image the manifests name: tagged onto the built one, so that they run unchanged. */
export async function manifestImage(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const deployment = await readFile(join(REPO_ROOT, 'manifests/base/deployment.yaml'), 'utf8');
  const image = /^\s+image:\s*(\S+)\s*$/m.exec(deployment)?.[1];
  if (!image) throw new Error('manifests/base/deployment.yaml names no image');
  return image;
}

export async function buildNodeImages(log: (line: string) => void = () => {}): Promise<NodeImages> {
  const confighash = await runImageScript('tools/image/build.sh', log);
  const testImages = await runImageScript('tools/image/test-images.sh', log);
  return { confighash, testImages };
}

async function runImageScript(script: string, log: (line: string) => void): Promise<ImageArchive> {
  const lines = (await runScript(join(REPO_ROOT, script), script, { log })).split('\n');
  const refs = lines.flatMap((line) => /^image: (\S+)$/.exec(line)?.[1] ?? []);
  const archive = lines.flatMap((line) => /^archive: (.+)$/.exec(line)?.[1] ?? []).at(-1);
  if (refs.length === 0 || !archive)
    throw new Error(`${script} printed no image: and archive: lines`);
  return { refs, archive };
}
