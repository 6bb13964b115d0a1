/**
 * The --html report: one self-contained file with the text summary and charts drawn by
 * uPlot, whose script and stylesheet are inlined from the installed `uplot` package (no
 * CDN, no network access when the file is opened):
 * - throughput over time (sent and delivered per second);
 * - latency percentiles over time (p50, p90, p99, max per second);
 * - the latency distribution from the run's merged HDR histogram (x in "nines");
 * - sessions connected over time;
 * - the server's CPU (% of one core) and memory (RSS, heap) over time, from its /metrics.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { redactOptions } from './options.js';
import { renderReport } from './report.js';
import type { RunResult } from './result.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One chart: x values, series of y values (null = no value) and how to draw them. */
export interface ChartSpec {
  id: string;
  title: string;
  xLabel: string;
  yLabel: string;
  /** A second y axis on the right for the series marked `right`. */
  y2Label?: string;
  /** x is in "nines" of a percentile: label the ticks 0%, 90%, 99%, 99.9%, … */
  nines?: boolean;
  x: number[];
  series: { label: string; color: string; values: (number | null)[]; right?: boolean }[];
}

export const COLORS = {
  blue: '#1f77b4',
  orange: '#ff7f0e',
  green: '#2ca02c',
  olive: '#bcbd22',
  red: '#d62728',
  purple: '#9467bd',
  brown: '#8c564b',
};

const MB = 1024 * 1024;
const mb = (bytes: number | undefined) => (bytes === undefined ? null : Math.round((bytes / MB) * 10) / 10);

/** The charts a result can draw; the server chart only when /metrics answered during the run. */
export function chartSpecs(r: RunResult): ChartSpec[] {
  const xs = r.series.map((p) => p.t);
  const specs: ChartSpec[] = [
    {
      id: 'throughput',
      title: 'Throughput',
      xLabel: 'seconds since the start',
      yLabel: 'messages per second',
      x: xs,
      series: [
        { label: 'delivered', color: COLORS.blue, values: r.series.map((p) => p.deliveredPerSecond) },
        { label: 'sent', color: COLORS.orange, values: r.series.map((p) => p.sentPerSecond) },
      ],
    },
    {
      id: 'latency-over-time',
      title: 'Latency percentiles over time (each second)',
      xLabel: 'seconds since the start',
      yLabel: 'ms',
      x: xs,
      series: [
        { label: 'p50', color: COLORS.green, values: r.series.map((p) => p.p50) },
        { label: 'p90', color: COLORS.olive, values: r.series.map((p) => p.p90) },
        { label: 'p99', color: COLORS.red, values: r.series.map((p) => p.p99) },
        { label: 'max', color: COLORS.purple, values: r.series.map((p) => p.max) },
      ],
    },
    {
      id: 'latency-distribution',
      title: `Latency distribution (${r.latency.count.toLocaleString('en-US')} samples, HDR histogram)`,
      xLabel: 'percentile',
      yLabel: 'ms',
      nines: true,
      x: r.latencyDistribution.map((p) => nines(p.percentile, r.latency.count)),
      series: [{ label: 'latency', color: COLORS.red, values: r.latencyDistribution.map((p) => p.ms) }],
    },
    {
      id: 'sessions',
      title: 'Sessions connected',
      xLabel: 'seconds since the start',
      yLabel: 'sessions',
      x: xs,
      series: [{ label: 'connected', color: COLORS.brown, values: r.series.map((p) => p.connected) }],
    },
  ];
  if (r.serverSeries.length > 0) {
    specs.push({
      id: 'server',
      title: 'Server CPU and memory (from its /metrics)',
      xLabel: 'seconds since the start',
      yLabel: 'CPU, % of one core',
      y2Label: 'MB',
      x: r.serverSeries.map((p) => p.t),
      series: [
        { label: 'CPU %', color: COLORS.red, values: r.serverSeries.map((p) => p.cpuPercent ?? null) },
        {
          label: 'RSS MB',
          color: COLORS.blue,
          values: r.serverSeries.map((p) => mb(p.rssBytes)),
          right: true,
        },
        {
          label: 'heap MB',
          color: COLORS.green,
          values: r.serverSeries.map((p) => mb(p.heapUsedBytes)),
          right: true,
        },
      ],
    });
  }
  return specs;
}

/** A percentile as "nines": 90% → 1, 99% → 2, 99.9% → 3; 100% sits one step past the last resolvable nine. */
export function nines(percentile: number, count: number): number {
  if (percentile >= 100) return Math.round(Math.log10(Math.max(10, count)) * 10) / 10;
  return Math.max(0, Math.round(-Math.log10(1 - percentile / 100) * 1000) / 1000);
}

let uplot: { js: string; css: string } | undefined;

/** uPlot's minified script and stylesheet, read once from the installed package. */
function uplotAssets(): { js: string; css: string } {
  if (uplot === undefined) {
    const require = createRequire(import.meta.url);
    uplot = {
      js: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
      css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    };
  }
  return uplot;
}

/** JSON safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

// Draws every chart of DATA with uPlot: axis ticks and labels on both axes, a legend, and
// a right-hand axis for series marked `right`.
const DRAW = `
for (const c of BAYOU_CHARTS) {
  const el = document.getElementById('chart-' + c.id);
  const hasRight = c.series.some((s) => s.right);
  const pct = (n) => {
    const p = 100 * (1 - Math.pow(10, -n));
    return (Math.round(p * 1000) / 1000) + '%';
  };
  const axes = [
    c.nines
      ? { label: c.xLabel, splits: (u, i, min, max) => Array.from({ length: Math.floor(max) + 1 }, (_, k) => k), values: (u, splits) => splits.map(pct) }
      : { label: c.xLabel },
    { label: c.yLabel, scale: 'y', size: 70 },
  ];
  if (hasRight) axes.push({ label: c.y2Label, scale: 'y2', side: 1, grid: { show: false }, size: 70 });
  const opts = {
    width: 760,
    height: 280,
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.05 : 1] }, y2: { range: (u, min, max) => [0, max > 0 ? max * 1.05 : 1] } },
    axes,
    legend: { live: true },
    series: [
      { label: c.nines ? 'nines' : 's', value: c.nines ? (u, v) => (v == null ? '-' : pct(v)) : undefined },
      ...c.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, scale: s.right ? 'y2' : 'y', spanGaps: true, points: { show: c.x.length < 40 } })),
    ],
  };
  new uPlot(opts, [c.x, ...c.series.map((s) => s.values)], el);
  el.dataset.drawn = 'true';
}
`;

export function renderHtml(r: RunResult): string {
  const noServer =
    r.serverSeries.length > 0
      ? ''
      : '<p class="note">The server exposed no Prometheus <code>/metrics</code> during the run (or <code>--metrics-url off</code>): no server CPU or memory chart.</p>';
  return htmlPage({
    title: `bayou-loadtest ${r.scenario} ${r.startedAt}`,
    heading: `bayou-loadtest: ${r.scenario}`,
    intro: `Started ${escapeHtml(r.startedAt)} against <code>${escapeHtml(r.options.url)}</code>.`,
    summary: renderReport(r),
    specs: chartSpecs(r),
    after: noServer,
    options: redactOptions(r.options),
  });
}

export interface HtmlPage {
  title: string;
  heading: string;
  /** HTML (already escaped) under the heading. */
  intro: string;
  /** The text report, shown as is. */
  summary: string;
  specs: ChartSpec[];
  /** HTML (already escaped) after the charts. */
  after?: string;
  options: unknown;
}

/** One self-contained page: the text summary, the charts (uPlot inlined), the options. */
export function htmlPage(page: HtmlPage): string {
  const assets = uplotAssets();
  const figures = page.specs
    .map(
      (c) =>
        `<figure><figcaption>${escapeHtml(c.title)}</figcaption><div class="chart" id="chart-${c.id}"></div></figure>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>${escapeHtml(page.title)}</title>
<style>${assets.css}</style>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:820px}pre{background:#f6f6f6;padding:1em;overflow-x:auto;white-space:pre-wrap}
figure{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}.note{color:#666}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}</style></head>
<body><h1>${escapeHtml(page.heading)}</h1>
<p>${page.intro}</p>
<pre>${escapeHtml(page.summary)}</pre>
${figures}
${page.after ?? ''}
<details><summary>Options</summary><pre>${escapeHtml(JSON.stringify(page.options, null, 2))}</pre></details>
<script>${assets.js}</script>
<script>const BAYOU_CHARTS = ${scriptJson(page.specs)};
${DRAW}</script>
</body></html>
`;
}
