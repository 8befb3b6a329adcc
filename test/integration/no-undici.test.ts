// The serving and follow processes never load Node's bundled undici (src/kube/node-http.ts):
// an ES import of node:http reads its WebSocket, CloseEvent and MessageEvent getters, which
// load it, 9.5 MB of resident memory on the image's Node for a client confighash never uses.
// Node 20 has no such getters; the fast suite's pass on the image's Node is the one that can
// fail.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('what the processes load', () => {
  it('serve and follow, with every module they import, load no undici', async () => {
    const script = `
      await import('./src/commands/serve-command.ts');
      await import('./src/commands/follow-command.ts');
      await import('./src/commands/plan-command.ts');
      await import('./src/commands/explain-command.ts');
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));
    `;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: new URL('../..', import.meta.url).pathname },
    );
    expect(JSON.parse(stdout.trim())).toEqual([]);
  });
});
