import { describe, expect, it } from 'vitest';
import {
  followContainer,
  quantityBytes,
  serveContainer,
  withEnvOverrides,
} from '../../bench/lib/container.js';

// The bench runs confighash's processes as the manifests and the image do; these rows hold
// what it reads from them to the files themselves.
describe('the containers the bench runs confighash as', () => {
  it("serve: the image's entrypoint flags and the serving Deployment's memory limit", async () => {
    const serve = await serveContainer();
    expect(serve.nodeFlags).toEqual(['--max-old-space-size=128', '--max-semi-space-size=8']);
    expect(Object.keys(serve.env).sort()).toEqual(['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_']);
    expect(serve.memoryLimitBytes).toBe(256 * 2 ** 20);
  });

  it("follow: the follow Deployment's Node flags, allocator variables and memory limit", async () => {
    const follow = await followContainer();
    expect(follow.nodeFlags).toContain('--max-semi-space-size=2');
    expect(Object.keys(follow.env).sort()).toEqual(['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_']);
    expect(follow.memoryLimitBytes).toBe(256 * 2 ** 20);
  });

  it.each([
    ['256Mi', 256 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['512Ki', 512 * 1024],
    ['1000', 1000],
  ])('reads the memory quantity %s', (quantity, bytes) => {
    expect(quantityBytes(quantity)).toBe(bytes);
  });

  it.each(['1.5Gi', '256M', '', 'Mi'])(
    'refuses the quantity %j with the forms it reads',
    (quantity) => {
      expect(() => quantityBytes(quantity)).toThrow('want N, NKi, NMi or NGi');
    },
  );

  it.each([
    { name: 'none: the manifest’s', overrides: undefined, expected: { A: '1', B: '2' } },
    {
      name: 'NAME=VALUE sets, over the manifest’s',
      overrides: 'A=3 C=4',
      expected: { A: '3', B: '2', C: '4' },
    },
    { name: 'NAME= removes', overrides: 'B=', expected: { A: '1' } },
  ])('an experiment’s container variables: $name', ({ overrides, expected }) => {
    expect(withEnvOverrides({ A: '1', B: '2' }, overrides)).toEqual(expected);
  });

  it('refuses an assignment without a name', () => {
    expect(() => withEnvOverrides({}, '=1')).toThrow(/is not NAME=VALUE/);
  });
});
