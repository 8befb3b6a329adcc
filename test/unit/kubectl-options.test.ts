// plan and explain take kubectl's own flags for which cluster and which answer
// (src/cli/kubectl-options.ts): --kubeconfig, --context, -n, -o json|yaml.

import { describe, expect, it } from 'vitest';
import { parseExplainConfig, parsePlanConfig } from '../../src/cli/index.js';

const parsers = [
  ['plan', (argv: string[]) => parsePlanConfig(['-f', 'app.yaml', ...argv])],
  ['explain', (argv: string[]) => parseExplainConfig(['deploy/web', ...argv])],
] as const;

describe.each(parsers)('%s', (_command, parse) => {
  it.each([
    ['nothing: kubectl’s defaults', [], {}, 'text'],
    [
      '--kubeconfig and --context',
      ['--kubeconfig', '/tmp/k', '--context', 'staging'],
      { kubeconfig: '/tmp/k', context: 'staging' },
      'text',
    ],
    ['--context=NAME', ['--context=prod'], { context: 'prod' }, 'text'],
    ['-o yaml', ['-o', 'yaml'], {}, 'yaml'],
    ['-o json', ['-o', 'json'], {}, 'json'],
  ])('%s', (_name, argv, cluster, output) => {
    const result = parse([...argv]);
    expect(result).toMatchObject({ ok: true, config: { cluster, output } });
  });

  it('-n names the default namespace', () => {
    expect(parse(['-n', 'shop'])).toMatchObject({ ok: true, config: { namespace: 'shop' } });
  });

  it.each([
    ['-o wide', ['-o', 'wide'], "-o must be json or yaml, got 'wide'"],
    ['an empty --kubeconfig', ['--kubeconfig='], '--kubeconfig needs a file name'],
    ['an empty --context', ['--context', ''], '--context needs a context name'],
  ])('%s is a mistake', (_name, argv, error) => {
    expect(parse([...argv])).toEqual({ ok: false, error });
  });
});
