// Files the processes write for their own readers: whole or not at all.

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Write-then-rename, so the reloader never reads half a file. */
export async function writeFileAtomically(path: string, content: string | Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const current = await readFile(path).catch(() => undefined);
  if (current?.equals(Buffer.from(content))) return;
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await rename(temporary, path);
}
