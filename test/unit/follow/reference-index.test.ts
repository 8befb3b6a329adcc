// The reference index's view of a source's versions (docs/design.md §6): follow mode's own
// metadata writes (the fan-out record) move a source's version without changing its content,
// so a read at the version they moved it from still saw the content the watches show.

import { describe, expect, it } from 'vitest';
import { ReferenceIndex } from '../../../src/follow/reference-index.js';

const NS = 'shop';
const SOURCE = 'configmap/app';

describe('which versions of a source show its content now', () => {
  it.each([
    ['the version now', (index: ReferenceIndex) => index.setSource(NS, SOURCE, '5'), '5', true],
    ['an older one', (index: ReferenceIndex) => index.setSource(NS, SOURCE, '5'), '4', false],
    [
      'one the record’s own writes moved it from',
      (index: ReferenceIndex) => {
        index.setSource(NS, SOURCE, '4');
        index.advanceSource(NS, SOURCE, '4', '5', '{}');
        index.advanceSource(NS, SOURCE, '5', '6', '{}');
      },
      '4',
      true,
    ],
    [
      'one from before a change of content since',
      (index: ReferenceIndex) => {
        index.setSource(NS, SOURCE, '4');
        index.advanceSource(NS, SOURCE, '4', '5', '{}');
        index.setSource(NS, SOURCE, '7');
      },
      '4',
      false,
    ],
    ['any, of a source not watched', () => {}, '4', true],
  ])('%s', (_, setUp, version, shown) => {
    const index = new ReferenceIndex();
    setUp(index);
    expect(index.shows(NS, SOURCE, version)).toBe(shown);
  });
});
