import { expect, it } from 'vitest';
import { touchNote } from '../../../src/follow/touch.js';
import { mergeChange, type SourceChange } from '../../../src/follow/touch-queue.js';

it.each([
  ['created, then changed: created', ['created', 'changed'], 'created'],
  ['changed twice: changed', ['changed', 'changed'], 'changed'],
  ['changed, then deleted: deleted', ['changed', 'deleted'], 'deleted'],
  ['created, then deleted: deleted', ['created', 'deleted'], 'deleted'],
  ['deleted, then created again: changed', ['deleted', 'created'], 'changed'],
] as [string, SourceChange[], SourceChange][])('%s', (_name, events, expected) => {
  const changes = new Map<string, SourceChange>();
  for (const change of events) mergeChange(changes, 'configmap/a', change);
  expect(changes.get('configmap/a')).toBe(expected);
});

it.each([
  [
    'names what was created and what changed',
    [
      ['secret/b', 'changed'],
      ['configmap/new', 'created'],
      ['configmap/a', 'changed'],
    ],
    false,
    'confighash: configmap/new created; configmap/a, secret/b changed; rolling',
  ],
  [
    'a resync',
    [],
    false,
    'confighash: config changed while not watched (sources: configmap/a); rolling',
  ],
  [
    'an adoption',
    [['configmap/a', 'changed']],
    true,
    'confighash: recorded the config hash of configmap/a (no restart)',
  ],
] as [string, [string, SourceChange][], boolean, string][])(
  '%s',
  (_name, changes, adopted, note) => {
    expect(touchNote(new Map(changes), adopted, 'configmap/a')).toBe(note);
  },
);
