import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { outputOf } from '../../tools/cluster/child-output.js';

describe('outputOf', () => {
  it('keeps what arrives after the child exited, until its pipes close', async () => {
    // bash exits at once; the subshell it leaves still holds stdout and writes 300 ms later.
    const child = spawn('bash', ['-c', 'echo early; (sleep 0.3; echo late) &'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(await outputOf(child)).toEqual({ code: 0, stdout: 'early\nlate\n', stderr: '' });
  });

  it('gives the exit code and stderr, and passes stderr on as it comes', async () => {
    const seen: string[] = [];
    const child = spawn('bash', ['-c', 'echo oops >&2; exit 3'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = await outputOf(child, (chunk) => seen.push(chunk));
    expect(output).toEqual({ code: 3, stdout: '', stderr: 'oops\n' });
    expect(seen.join('')).toBe('oops\n');
  });

  it('rejects when the command cannot start', async () => {
    const child = spawn('/nonexistent/command', [], { stdio: ['ignore', 'pipe', 'pipe'] });
    await expect(outputOf(child)).rejects.toThrow(/ENOENT/);
  });
});
