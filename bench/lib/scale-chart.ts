// The `scale` scenario's plot: RSS against cluster size for confighash's follower,
// Reloader and a serving replica, in the style of chart.ts (one self-contained
// SVG, no plotting library). x: Deployments in follow namespaces, log scale;
// y: RSS, MB, linear from 0.

import { escapeXml } from './chart.js';
import type { ScaleRow } from './scale-report.js';

export interface RssSeries {
  readonly label: string;
  readonly color: string;
  readonly dashed?: boolean;
  /** [workloads, MB] */
  readonly points: readonly (readonly [number, number])[];
}

export function rssSeries(rows: readonly ScaleRow[]): RssSeries[] {
  const of = (pick: (r: ScaleRow) => number | undefined) =>
    rows.flatMap((r) => {
      const value = pick(r);
      return value === undefined ? [] : [[r.workloads, value] as const];
    });
  const series: RssSeries[] = [
    {
      label: 'confighash follower, steady',
      color: '#d62728',
      points: of((r) => r.confighash.steadyMb),
    },
    {
      label: 'confighash follower, after a restart',
      color: '#d62728',
      dashed: true,
      points: of((r) => r.confighash.restartMb),
    },
    {
      label: 'Reloader v1.4.21, steady',
      color: '#2ca02c',
      points: of((r) => r.reloader?.steadyMb),
    },
    {
      label: 'Reloader v1.4.21, max',
      color: '#2ca02c',
      dashed: true,
      points: of((r) => r.reloader?.maxMb),
    },
    { label: 'confighash serving replica', color: '#9467bd', points: of((r) => r.serveMb) },
  ];
  return series.filter((s) => s.points.length > 0);
}

const W = 560;
const H = 320;
const PAD = { left: 64, right: 24, top: 48, bottom: 96 };

export function renderRssChart(series: readonly RssSeries[], caption: string): string {
  const width = PAD.left + W + PAD.right;
  const height = PAD.top + H + PAD.bottom;
  const xs = series.flatMap((s) => s.points.map(([x]) => x));
  const ys = series.flatMap((s) => s.points.map(([, y]) => y));
  const xMin = Math.floor(Math.log10(Math.min(...xs)));
  const xMax = Math.max(xMin + 1, Math.ceil(Math.log10(Math.max(...xs))));
  const yStep = niceStep(Math.max(...ys) / 5);
  const yMax = Math.ceil(Math.max(...ys) / yStep) * yStep;
  const px = (x: number) => PAD.left + ((Math.log10(x) - xMin) / (xMax - xMin)) * W;
  const py = (y: number) => PAD.top + H - (y / yMax) * H;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(caption)}</text>`,
    `<rect x="${PAD.left}" y="${PAD.top}" width="${W}" height="${H}" fill="none" stroke="#333"/>`,
  ];
  for (let decade = xMin; decade <= xMax; decade++) {
    const x = px(10 ** decade);
    out.push(
      `<line x1="${x}" y1="${PAD.top}" x2="${x}" y2="${PAD.top + H}" stroke="#ddd"/>`,
      `<text x="${x}" y="${PAD.top + H + 16}" text-anchor="middle">${(10 ** decade).toLocaleString('en-US')}</text>`,
    );
  }
  out.push(
    `<text x="${PAD.left + W / 2}" y="${PAD.top + H + 34}" text-anchor="middle">Deployments in follow namespaces (log; 10 per namespace, 50 ConfigMaps+Secrets per namespace)</text>`,
  );
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    out.push(
      `<line x1="${PAD.left}" y1="${py(y)}" x2="${PAD.left + W}" y2="${py(y)}" stroke="#eee"/>`,
      `<text x="${PAD.left - 6}" y="${py(y) + 4}" text-anchor="end">${y}</text>`,
    );
  }
  out.push(
    `<text transform="translate(${PAD.left - 46},${PAD.top + H / 2}) rotate(-90)" text-anchor="middle">RSS, MB</text>`,
  );
  series.forEach((s, i) => {
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    const d = s.points
      .map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`)
      .join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    for (const [x, y] of s.points) {
      out.push(
        `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${s.color}"/>`,
      );
    }
    const lx = PAD.left + (i % 2) * 280;
    const ly = PAD.top + H + 56 + Math.floor(i / 2) * 16;
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${dash}/>`,
      `<text x="${lx + 27}" y="${ly}">${escapeXml(s.label)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** 1, 2 or 5 times a power of ten, at least `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const decade = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * decade).find((step) => step >= raw)!;
}
