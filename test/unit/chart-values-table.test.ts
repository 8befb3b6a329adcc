// The chart README's values table: generated from values.schema.json and values.yaml, and
// checked here against the README, so a value added or reworded in the schema without
// regenerating fails; plus rows for the generator itself.

import { describe, expect, it } from 'vitest';
import {
  listValueRows,
  readChartReadme,
  renderValuesTable,
  replaceValuesTable,
  type SchemaNode,
  TABLE_END,
  TABLE_START,
} from '../../tools/chart/values-table.js';

describe('the chart README', () => {
  it('has the table the generator makes from the schema and values.yaml', async () => {
    const { current, generated } = await readChartReadme();
    expect(
      current.split('\n'),
      'charts/confighash/README.md is out of date with values.schema.json or values.yaml: run `npm run chart:readme`',
    ).toEqual(generated.split('\n'));
  });
});

const leaf = (type: string, description: string, extra: Partial<SchemaNode> = {}): SchemaNode => ({
  type,
  description,
  ...extra,
});

interface TableRow {
  readonly name: string;
  readonly schema: SchemaNode;
  readonly values: unknown;
  readonly rows: readonly string[];
}

interface RejectRow {
  readonly name: string;
  readonly schema: SchemaNode;
  readonly values: unknown;
  readonly error: string;
}

describe('listValueRows and renderValuesTable', () => {
  it.each<TableRow>([
    {
      name: 'nested objects flatten to dotted keys, in schema order',
      schema: {
        properties: {
          b: {
            type: 'object',
            properties: { c: { type: 'object', properties: { d: leaf('string', 'deep') } } },
          },
          a: leaf('integer', 'top'),
        },
      },
      values: { b: { c: { d: 'x' } }, a: 2 },
      rows: ['| `b.c.d` | string | `"x"` | deep |', '| `a` | integer | `2` | top |'],
    },
    {
      name: 'arrays and objects render compactly; long ones point at values.yaml',
      schema: {
        properties: {
          empty: leaf('array', 'e', { items: { type: 'string' } }),
          map: leaf('object', 'm'),
          long: leaf('array', 'l', { items: { type: 'object' } }),
        },
      },
      values: { empty: [], map: { cpu: '1' }, long: [{ key: 'a'.repeat(40) }, { key: 'b' }] },
      rows: [
        '| `empty` | string[] | `[]` | e |',
        '| `map` | object | `{"cpu":"1"}` | m |',
        '| `long` | object[] | 2 items, see [values.yaml](values.yaml) | l |',
      ],
    },
    {
      name: 'pipes are escaped and newlines joined, in descriptions and defaults',
      schema: { properties: { p: leaf('string', 'a | b\n  c') } },
      values: { p: 'x|y' },
      rows: ['| `p` | string | `"x\\|y"` | a \\| b c |'],
    },
    {
      name: 'enums, type lists; the schema default stands in for a value values.yaml lacks',
      schema: {
        properties: {
          e: leaf('string', 'one', { enum: ['A', 'B'] }),
          n: { type: ['integer', 'string'], description: 'two', default: '50%' },
          u: leaf('object', 'three'),
        },
      },
      values: { e: 'A' },
      rows: [
        '| `e` | string (`A`, `B`) | `"A"` | one |',
        '| `n` | integer or string | `"50%"` | two |',
        '| `u` | object | unset | three |',
      ],
    },
    {
      name: 'Helm’s global is no value of the chart',
      schema: { properties: { global: { type: 'object' }, a: leaf('boolean', 'flag') } },
      values: { a: true },
      rows: ['| `a` | boolean | `true` | flag |'],
    },
    {
      name: 'a global value the chart reads is one',
      schema: {
        properties: { global: { type: 'object', properties: { r: leaf('string', 'registry') } } },
      },
      values: { global: { r: '' } },
      rows: ['| `global.r` | string | `""` | registry |'],
    },
  ])('$name', ({ schema, values, rows }) => {
    const table = renderValuesTable(listValueRows(schema, values));
    expect(table.split('\n').slice(2, -1)).toEqual(rows);
  });

  it.each<RejectRow>([
    {
      name: 'a leaf without a description, by its dotted key',
      schema: {
        properties: { a: { properties: { b: { type: 'string' }, c: leaf('string', 'ok') } } },
      },
      values: {},
      error: 'a.b has no description in the schema',
    },
    {
      name: 'a blank description',
      schema: { properties: { a: leaf('string', '  ') } },
      values: {},
      error: 'a has no description in the schema',
    },
    {
      name: 'a value the schema does not define',
      schema: { properties: { a: { properties: { b: leaf('string', 'ok') } } } },
      values: { a: { b: 'x', typo: 1 } },
      error: 'values.yaml sets a.typo, which the schema does not define',
    },
  ])('rejects $name', ({ schema, values, error }) => {
    expect(() => listValueRows(schema, values)).toThrow(error);
  });
});

describe('replaceValuesTable', () => {
  it('replaces only the text between the markers', () => {
    const readme = `# t\n${TABLE_START}\nold\n${TABLE_END}\nafter\n`;
    expect(replaceValuesTable(readme, '| new |\n')).toBe(
      `# t\n${TABLE_START}\n| new |\n${TABLE_END}\nafter\n`,
    );
  });

  it.each([
    { name: 'no markers', readme: '# t\n' },
    { name: 'markers out of order', readme: `${TABLE_END}\n${TABLE_START}\n` },
  ])('rejects a README with $name', ({ readme }) => {
    expect(() => replaceValuesTable(readme, '')).toThrow(TABLE_START);
  });
});
