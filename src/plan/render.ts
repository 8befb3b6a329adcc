// Plan output for people and for programs (docs/design.md §9). People get aligned
// columns, colour only when asked (a TTY); programs get one JSON (or YAML) object
// per workload. Both carry names and key names only.

import type { Explanation } from './explain-workload.js';
import type { Plan, Verdict, WorkloadPlan } from './plan-changes.js';
import { renderYaml } from './yaml.js';

interface RenderOptions {
  /** ANSI colour; the caller turns it on only for a TTY. */
  readonly color: boolean;
}

const VERDICT_TEXT: Readonly<Record<Verdict, string>> = {
  roll: 'will roll',
  'no-roll': 'will not roll',
  unknown: 'cannot tell',
};

const VERDICT_COLOR: Readonly<Record<Verdict, number>> = { roll: 33, 'no-roll': 32, unknown: 31 };

function paint(text: string, code: number, { color }: RenderOptions): string {
  return color ? `\u001b[${code}m${text}\u001b[0m` : text;
}

export function renderPlan(plan: Plan, options: RenderOptions): string {
  const lines: string[] = [];
  if (plan.workloads.length > 0) {
    const rows = plan.workloads.map((w) => [
      w.namespace,
      `${w.kind.toLowerCase()}/${w.name}`,
      VERDICT_TEXT[w.verdict],
    ]);
    const header = ['NAMESPACE', 'WORKLOAD', 'VERDICT'];
    const widths = header.map((title, column) =>
      Math.max(title.length, ...rows.map((row) => row[column]!.length)),
    );
    const indent = widths.reduce((sum, width) => sum + width + 2, 0);
    const pad = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!));
    lines.push(`${pad(header).join('  ')}  WHY`);
    plan.workloads.forEach((workload, index) => {
      const [namespace, name, verdict] = pad(rows[index]!) as [string, string, string];
      const text = VERDICT_TEXT[workload.verdict];
      const coloured = `${paint(text, VERDICT_COLOR[workload.verdict], options)}${verdict.slice(text.length)}`;
      const [first = '', ...rest] = workload.reasons;
      lines.push(`${namespace}  ${name}  ${coloured}  ${first}`.trimEnd());
      for (const reason of rest) lines.push(`${' '.repeat(indent)}${reason}`);
    });
    lines.push('');
  }
  for (const problem of plan.problems) lines.push(paint(`! ${problem}`, 31, options));
  lines.push(summarize(plan.workloads));
  return `${lines.join('\n')}\n`;
}

function summarize(workloads: readonly WorkloadPlan[]): string {
  if (workloads.length === 0) return 'No workload in the manifests, and none reading their config.';
  const count = (verdict: Verdict) => workloads.filter((w) => w.verdict === verdict).length;
  const total = workloads.length === 1 ? '1 workload' : `${workloads.length} workloads`;
  return `${total}: ${count('roll')} will roll, ${count('no-roll')} will not, ${count('unknown')} cannot tell.`;
}

/** For a program to read: JSON (the plan's tests pin it) or the same data as YAML. */
type DataFormat = 'json' | 'yaml';

/**
 * A `List` (apiVersion v1, as kubectl prints several objects) of one item per workload:
 * `kind`, `group`, `namespace`, `name`, `verdict`, `reasons`, `changedSources`,
 * `waitsForApproval`.
 */
export function renderPlanData(plan: Plan, format: DataFormat): string {
  const workloads = plan.workloads.map(
    ({ kind, group, namespace, name, verdict, reasons, changedSources, waitsForApproval }) => ({
      kind,
      group,
      namespace,
      name,
      verdict,
      reasons,
      changedSources: changedSources.map(({ ref, changedKeys }) => ({ ref, changedKeys })),
      waitsForApproval,
    }),
  );
  return renderData(asList(workloads), format);
}

/** `-o name`: the workloads that will roll, `KIND.GROUP/NAME` one a line, as kubectl names them. */
export function renderPlanNames(plan: Plan): string {
  return plan.workloads
    .filter(({ verdict }) => verdict === 'roll')
    .map((workload) => `${qualifiedName(workload)}\n`)
    .join('');
}

/** `deployment.apps/web`: kubectl's `-o name`. */
function qualifiedName({ kind, group, name }: { kind: string; group: string; name: string }) {
  return `${kind.toLowerCase()}${group === '' ? '' : `.${group}`}/${name}`;
}

/** kubectl's envelope for several objects. */
function asList(items: readonly unknown[]): object {
  return { apiVersion: 'v1', kind: 'List', items };
}

/** YAML is the JSON's data, so the two never differ in what they carry (no undefined fields). */
function renderData(value: unknown, format: DataFormat): string {
  const json = JSON.stringify(value, null, 2);
  return format === 'json' ? `${json}\n` : renderYaml(JSON.parse(json));
}

// --- explain -------------------------------------------------------------------------

export function renderExplanation(explanation: Explanation, options: RenderOptions): string {
  const e = explanation;
  const none = '-';
  const window = e.rolloutWindow ? `${e.rolloutWindow.window} (${e.rolloutWindow.from})` : none;
  const rolls = e.nextWriteRolls
    ? paint('rolls', 33, options)
    : paint('rolls nothing', 32, options);
  const fields: [string, string][] = [
    ['namespace mode', e.namespaceMode],
    ['opted out', e.optedOut ? 'yes' : 'no'],
    ...(e.notHandled
      ? [
          ['not handled', 'not annotated; the namespace handles annotated workloads only'] as [
            string,
            string,
          ],
        ]
      : []),
    ['include', e.include ?? none],
    ['exclude', e.exclude ?? none],
    ['rollout window', window],
    ['template hash', e.templateHash ?? none],
    ['adopted hash', e.adoptedHash ?? none],
    ['last write', e.lastWrite ?? none],
    ['would write', e.wouldWrite ?? none],
    ['next write', e.webhook.reached ? rolls : paint('webhook not reached', 31, options)],
  ];
  const width = Math.max(...fields.map(([label]) => label.length));
  const lines = [`${e.kind.toLowerCase()}/${e.name} in namespace ${e.namespace}`];
  for (const [label, value] of fields) lines.push(`  ${label.padEnd(width)}  ${value}`);
  lines.push('', 'sources:');
  if (e.sources.length === 0) lines.push('  none');
  const rows = e.sources.map((s) => [
    s.ref,
    s.state,
    s.resourceVersion === null ? '' : `rv ${s.resourceVersion}`,
    s.keys === 'all' ? 'all keys' : `keys ${s.keys.join(', ')}`,
    s.lastWrite === null ? '' : `written ${s.lastWrite}`,
    s.optional ? 'optional' : '',
  ]);
  const widths = [0, 1, 2, 3, 4].map((column) =>
    Math.max(...rows.map((row) => row[column]!.length)),
  );
  for (const row of rows) {
    lines.push(`  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd());
  }
  lines.push('', 'events:');
  if ('unreadable' in e.events) lines.push(`  cannot read them (${e.events.unreadable})`);
  else if (e.events.length === 0) lines.push('  none from confighash');
  else for (const event of e.events) lines.push(`  ${event.time}  ${event.reason}  ${event.note}`);
  lines.push('', ...e.explanation.map((line) => `• ${line}`));
  return `${lines.join('\n')}\n`;
}

/**
 * One workload named by name is one object, as `kubectl get deploy/web -o json`; anything
 * else (several names, a selector) is a List, even of one or none.
 */
export function renderExplanationData(
  explanations: readonly Explanation[],
  format: DataFormat,
  single: boolean,
): string {
  return renderData(
    single && explanations.length === 1 ? explanations[0] : asList(explanations),
    format,
  );
}

/** `-o name`: the workloads explained, `KIND.GROUP/NAME` one a line. */
export function renderExplanationNames(explanations: readonly Explanation[]): string {
  return explanations.map((explanation) => `${qualifiedName(explanation)}\n`).join('');
}
