// `npm run chart:readme`: the chart README's values table, generated from values.schema.json
// (key, type, description) and values.yaml (the defaults Helm uses), so the two cannot drift
// from what the README says. The table is the text between the README's marker comments;
// test/unit/chart-values-table.test.ts fails when it is not what this produces.

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { REPO_ROOT } from '../cluster/repo.js';

/** The part of a JSON Schema the table reads. */
export interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
}

export interface ValueRow {
  /** Dotted path from the root of values.yaml. */
  readonly key: string;
  readonly type: string;
  /** Markdown: a code span, or a pointer to values.yaml when the value is long. */
  readonly defaultText: string;
  readonly description: string;
}

export const TABLE_START = '<!-- values-table:start -->';
export const TABLE_END = '<!-- values-table:end -->';

/**
 * Helm sets `global` for subcharts: only the global values this chart reads (those the
 * schema names, e.g. global.imageRegistry) are rows; global itself is none.
 */
const HELM_GLOBAL = 'global';
/** Longer defaults point at values.yaml instead: a table cell is no place for them. */
const MAX_INLINE_DEFAULT = 60;

/**
 * One row per leaf of the schema (a property without `properties` of its own), in schema
 * order. Throws naming every leaf without a description and every values.yaml key the
 * schema does not define.
 */
export function listValueRows(schema: SchemaNode, values: unknown): ValueRow[] {
  const rows: ValueRow[] = [];
  const problems: string[] = [];
  walk(schema, values, [], rows, problems);
  if (problems.length > 0) throw new Error(`values table: ${problems.join('; ')}`);
  return rows;
}

function walk(
  node: SchemaNode,
  value: unknown,
  path: readonly string[],
  rows: ValueRow[],
  problems: string[],
): void {
  const properties = node.properties ?? {};
  for (const key of Object.keys(isRecord(value) ? value : {})) {
    if (!(key in properties)) {
      problems.push(
        `values.yaml sets ${[...path, key].join('.')}, which the schema does not define`,
      );
    }
  }
  for (const [key, child] of Object.entries(properties)) {
    if (path.length === 0 && key === HELM_GLOBAL && !child.properties) continue;
    const childPath = [...path, key];
    const childValue = isRecord(value) ? value[key] : undefined;
    if (child.properties) walk(child, childValue, childPath, rows, problems);
    else rows.push(leafRow(child, childValue, childPath.join('.'), problems));
  }
}

function leafRow(node: SchemaNode, value: unknown, key: string, problems: string[]): ValueRow {
  if (!node.description?.trim()) problems.push(`${key} has no description in the schema`);
  if (node.type === undefined) problems.push(`${key} has no type in the schema`);
  return {
    key,
    type: formatType(node),
    defaultText: formatDefault(value === undefined ? node.default : value),
    description: node.description?.trim() ?? '',
  };
}

function formatType(node: SchemaNode): string {
  const types = typeof node.type === 'string' ? [node.type] : [...(node.type ?? [])];
  const itemType = typeof node.items?.type === 'string' ? node.items.type : undefined;
  const named = types.map((type) => (type === 'array' && itemType ? `${itemType}[]` : type));
  const choices = node.enum
    ? ` (${node.enum.map((choice) => codeSpan(String(choice))).join(', ')})`
    : '';
  return `${named.join(' or ')}${choices}`;
}

function formatDefault(value: unknown): string {
  if (value === undefined) return 'unset';
  const json = JSON.stringify(value);
  if (json.length <= MAX_INLINE_DEFAULT) return codeSpan(json);
  const what = Array.isArray(value) ? `${value.length} items` : 'an object';
  return `${what}, see [values.yaml](values.yaml)`;
}

/** A code span that survives a backtick in its text. */
function codeSpan(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

/** A table cell: a pipe would end it (GFM wants `\|` even inside a code span), a newline the row. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

export function renderValuesTable(rows: readonly ValueRow[]): string {
  const lines = [
    '| Key | Type | Default | Description |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${cell(codeSpan(row.key))} | ${cell(row.type)} | ${cell(row.defaultText)} | ${cell(row.description)} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** The README with the text between its markers replaced by the table. */
export function replaceValuesTable(readme: string, table: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(
      `the chart README needs the markers ${TABLE_START} and ${TABLE_END}, in that order`,
    );
  }
  return `${readme.slice(0, start + TABLE_START.length)}\n${table}${readme.slice(end)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const CHART_DIR = join(REPO_ROOT, 'charts/confighash');
export const CHART_README = join(CHART_DIR, 'README.md');

/** The chart README as it is, and as the generator makes it from the chart's files. */
export async function readChartReadme(): Promise<{ current: string; generated: string }> {
  const [schemaText, valuesText, current] = await Promise.all([
    readFile(join(CHART_DIR, 'values.schema.json'), 'utf8'),
    readFile(join(CHART_DIR, 'values.yaml'), 'utf8'),
    readFile(CHART_README, 'utf8'),
  ]);
  const rows = listValueRows(JSON.parse(schemaText) as SchemaNode, load(valuesText));
  return { current, generated: replaceValuesTable(current, renderValuesTable(rows)) };
}

async function main(): Promise<void> {
  const { current, generated } = await readChartReadme();
  if (generated !== current) await writeFile(CHART_README, generated);
  process.stdout.write(`${CHART_README}: ${generated === current ? 'unchanged' : 'rewritten'}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
