// Plan output for people and for programs (DESIGN.md §9). People get aligned
// columns, colour only when asked (a TTY); programs get one JSON object per
// workload. Both carry names and key names only.

import type { Plan, Verdict, WorkloadPlan } from './plan.js';

export interface RenderOptions {
  /** ANSI colour; the caller turns it on only for a TTY. */
  readonly color: boolean;
}

const VERDICT_TEXT: Readonly<Record<Verdict, string>> = {
  roll: 'will roll',
  'no-roll': 'will not roll',
  unknown: 'cannot tell',
};

const VERDICT_COLOR: Readonly<Record<Verdict, number>> = { roll: 33, 'no-roll': 32, unknown: 31 };

export function paint(text: string, code: number, { color }: RenderOptions): string {
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
      const coloured = paint(verdict, VERDICT_COLOR[workload.verdict], options);
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

/** One object per workload, in an array: `kind`, `namespace`, `name`, `verdict`, `reasons`, `changedSources`. */
export function renderPlanJson(plan: Plan): string {
  const workloads = plan.workloads.map(
    ({ kind, namespace, name, verdict, reasons, changedSources }) => ({
      kind,
      namespace,
      name,
      verdict,
      reasons,
      changedSources: changedSources.map(({ ref, changedKeys }) => ({ ref, changedKeys })),
    }),
  );
  return `${JSON.stringify(workloads, null, 2)}\n`;
}
