/**
 * The --html report: one self-contained file (inline CSS and SVG, no script, no CDN) with
 * the summary and two charts over time: throughput, and latency percentiles.
 */
import { renderReport } from './report.js';
import type { RunResult } from './result.js';
import type { SeriesPoint } from './stats.js';

export interface Line {
  label: string;
  color: string;
  values: number[];
}

const W = 720;
const H = 240;
const PAD = { left: 64, right: 16, top: 16, bottom: 32 };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A "nice" axis maximum: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/** An SVG line chart of several series over the same x values. */
export function lineChart(
  title: string,
  unit: string,
  xs: readonly number[],
  lines: readonly Line[],
): string {
  const yMax = niceMax(Math.max(0, ...lines.flatMap((l) => l.values)));
  const xMax = Math.max(1, ...xs);
  const x = (v: number) => PAD.left + (v / xMax) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = yMax * f;
    return (
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>` +
      `<text x="${PAD.left - 6}" y="${y(v) + 4}" text-anchor="end">${formatTick(v)}</text>`
    );
  });
  const paths = lines.map((l) => {
    const d = l.values.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(xs[i] ?? 0).toFixed(1)},${y(v).toFixed(1)}`);
    return `<path d="${d.join('')}" fill="none" stroke="${l.color}" stroke-width="2"><title>${escapeHtml(l.label)}</title></path>`;
  });
  const legend = lines.map(
    (l, i) =>
      `<rect x="${PAD.left + i * 110}" y="${H - 12}" width="10" height="10" fill="${l.color}"/>` +
      `<text x="${PAD.left + i * 110 + 14}" y="${H - 3}">${escapeHtml(l.label)}</text>`,
  );
  return [
    `<figure><figcaption>${escapeHtml(title)} (${escapeHtml(unit)}; x: seconds, 0–${formatTick(xMax)})</figcaption>`,
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-size="11">`,
    ...grid,
    ...paths,
    ...legend,
    '</svg></figure>',
  ].join('\n');
}

function formatTick(v: number): string {
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (v >= 1e4) return `${Math.round(v / 1e3)}k`;
  return String(Math.round(v * 100) / 100);
}

export function charts(series: readonly SeriesPoint[]): string {
  const xs = series.map((p) => p.t);
  const pick = (k: keyof SeriesPoint) => series.map((p) => p[k]);
  return [
    lineChart('Throughput', 'messages per second', xs, [
      { label: 'delivered', color: '#1f77b4', values: pick('deliveredPerSecond') },
      { label: 'sent', color: '#ff7f0e', values: pick('sentPerSecond') },
    ]),
    lineChart('Latency percentiles', 'ms', xs, [
      { label: 'p50', color: '#2ca02c', values: pick('p50') },
      { label: 'p90', color: '#bcbd22', values: pick('p90') },
      { label: 'p99', color: '#d62728', values: pick('p99') },
      { label: 'max', color: '#9467bd', values: pick('max') },
    ]),
  ].join('\n');
}

export function renderHtml(r: RunResult): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>bayou-loadtest ${escapeHtml(r.scenario)} ${escapeHtml(r.startedAt)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}pre{background:#f6f6f6;padding:1em}
figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}</style></head>
<body><h1>bayou-loadtest: ${escapeHtml(r.scenario)}</h1>
<p>Started ${escapeHtml(r.startedAt)} against <code>${escapeHtml(r.options.url)}</code>.</p>
<pre>${escapeHtml(renderReport(r))}</pre>
${charts(r.series)}
<details><summary>Options</summary><pre>${escapeHtml(JSON.stringify(r.options, null, 2))}</pre></details>
</body></html>
`;
}
