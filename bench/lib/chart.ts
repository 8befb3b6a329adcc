// The latency-distribution chart, as a self-contained SVG (no browser, no
// plotting library): one panel per concurrency for the load scenarios, one for
// the writes of scenario 4. x: percentile on the usual HdrHistogram scale
// (50, 90, 99, 99.9 … evenly spaced), y: latency, log scale.

import type { BenchReport } from './report.js';

export interface Series {
  readonly label: string;
  readonly color: string;
  readonly dashed?: boolean;
  /** [percentile, µs] */
  readonly points: readonly (readonly [number, number])[];
}

export interface Panel {
  readonly title: string;
  readonly series: readonly Series[];
}

const COLORS: Readonly<Record<string, { color: string; dashed?: boolean }>> = {
  'floor-a': { color: '#8c8c8c', dashed: true },
  'floor-b': { color: '#1f77b4', dashed: true },
  confighash: { color: '#d62728' },
  'floor-b-real': { color: '#17becf', dashed: true },
  'confighash-real': { color: '#9467bd' },
};

const LABELS: Readonly<Record<string, string>> = {
  'floor-a': 'floor (a)',
  'floor-b': 'floor (b), stub',
  confighash: 'confighash, stub',
  'floor-b-real': 'floor (b), apiserver',
  'confighash-real': 'confighash, apiserver',
};

export function panelsOf(report: BenchReport): Panel[] {
  const load = report.scenarios.filter((s) => ['1', '2', '3'].includes(s.id));
  const concurrencies = [...new Set(load.flatMap((s) => s.runs.map((r) => r.concurrency)))].sort(
    (a, b) => a - b,
  );
  const panels: Panel[] = concurrencies.map((c) => ({
    title: `Admission reviews, concurrency ${c}`,
    series: load.flatMap((s) =>
      s.runs
        .filter((r) => r.concurrency === c)
        .map((r) => ({
          label: LABELS[r.target] ?? r.target,
          ...(COLORS[r.target] ?? { color: '#000' }),
          points: r.curve,
        })),
    ),
  }));
  const writes = report.scenarios.find((s) => s.id === '4');
  const curves = writes?.details?.curves as Record<string, [number, number][]> | undefined;
  if (curves) {
    panels.push({
      title: 'Server-side apply through kube-apiserver (c = 1)',
      series: [
        { label: 'no webhook', color: '#8c8c8c', dashed: true, points: curves.off ?? [] },
        { label: 'floor (b) webhook', color: '#1f77b4', dashed: true, points: curves.floor ?? [] },
        { label: 'confighash', color: '#d62728', points: curves.on ?? [] },
        ...(curves.wave
          ? [{ label: "wave's webhook", color: '#2ca02c', points: curves.wave }]
          : []),
      ],
    });
  }
  return panels;
}

const PANEL_W = 460;
const PANEL_H = 300;
const PAD = { left: 56, right: 16, top: 28, bottom: 40 };
const X_MAX = 4.6;

function xOf(percentile: number): number {
  if (percentile >= 100) return X_MAX;
  return Math.min(4, Math.log10(100 / (100 - percentile)));
}

export function renderChart(panels: readonly Panel[], caption: string): string {
  const columns = 2;
  const rows = Math.ceil(panels.length / columns);
  const width = columns * (PANEL_W + PAD.left + PAD.right);
  const height = 40 + rows * (PANEL_H + PAD.top + PAD.bottom + 70);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(caption)}</text>`,
  ];
  panels.forEach((panel, index) => {
    const ox = (index % columns) * (PANEL_W + PAD.left + PAD.right) + PAD.left;
    const oy = 40 + Math.floor(index / columns) * (PANEL_H + PAD.top + PAD.bottom + 70) + PAD.top;
    parts.push(renderPanel(panel, ox, oy));
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function renderPanel(panel: Panel, ox: number, oy: number): string {
  const values = panel.series.flatMap((s) => s.points.map(([, us]) => us)).filter((v) => v > 0);
  const lo = Math.log10(Math.max(1, Math.min(...values)) / 1000);
  const hi = Math.log10(Math.max(...values) / 1000);
  const yMin = Math.floor(lo * 3) / 3;
  const yMax = Math.max(yMin + 0.5, Math.ceil(hi * 3) / 3);
  const px = (x: number) => ox + (x / X_MAX) * PANEL_W;
  const py = (ms: number) => oy + PANEL_H - ((Math.log10(ms) - yMin) / (yMax - yMin)) * PANEL_H;
  const out: string[] = [
    `<text x="${ox}" y="${oy - 10}" font-weight="bold">${escapeXml(panel.title)}</text>`,
    `<rect x="${ox}" y="${oy}" width="${PANEL_W}" height="${PANEL_H}" fill="none" stroke="#333"/>`,
  ];
  for (const [p, label] of [
    [0, '0'],
    [50, '50'],
    [90, '90'],
    [99, '99'],
    [99.9, '99.9'],
    [99.99, '99.99'],
    [100, 'max'],
  ] as const) {
    const x = px(xOf(p));
    out.push(
      `<line x1="${x}" y1="${oy}" x2="${x}" y2="${oy + PANEL_H}" stroke="#ddd"/>`,
      `<text x="${x}" y="${oy + PANEL_H + 16}" text-anchor="middle">${label}</text>`,
    );
  }
  out.push(
    `<text x="${ox + PANEL_W / 2}" y="${oy + PANEL_H + 32}" text-anchor="middle">percentile</text>`,
  );
  for (const tick of yTicks(yMin, yMax)) {
    const y = py(tick);
    out.push(
      `<line x1="${ox}" y1="${y}" x2="${ox + PANEL_W}" y2="${y}" stroke="#eee"/>`,
      `<text x="${ox - 6}" y="${y + 4}" text-anchor="end">${tick}</text>`,
    );
  }
  out.push(
    `<text transform="translate(${ox - 42},${oy + PANEL_H / 2}) rotate(-90)" text-anchor="middle">latency, ms (log)</text>`,
  );
  panel.series.forEach((series, i) => {
    const d = series.points
      .filter(([, us]) => us > 0)
      .map(
        ([p, us], j) =>
          `${j === 0 ? 'M' : 'L'}${px(xOf(p)).toFixed(1)},${py(us / 1000).toFixed(1)}`,
      )
      .join(' ');
    out.push(
      `<path d="${d}" fill="none" stroke="${series.color}" stroke-width="2"${series.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    const lx = ox + (i % 3) * 155;
    const ly = oy + PANEL_H + 50 + Math.floor(i / 3) * 16;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${series.color}" stroke-width="2"${series.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${lx + 27}" y="${ly}">${escapeXml(series.label)}</text>`,
    );
  });
  return out.join('\n');
}

function yTicks(yMin: number, yMax: number): number[] {
  const ticks: number[] = [];
  for (let decade = Math.floor(yMin) - 1; decade <= Math.ceil(yMax); decade++) {
    for (const m of [1, 2, 5]) {
      const value = m * 10 ** decade;
      const log = Math.log10(value);
      if (log >= yMin - 1e-9 && log <= yMax + 1e-9) ticks.push(Number(value.toPrecision(3)));
    }
  }
  return ticks;
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
