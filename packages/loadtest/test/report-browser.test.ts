/**
 * The --html report in Chromium: a real `chat` run against a `bayou start` server in its own
 * process (so that its /metrics CPU and memory are the server's alone) writes the report; Chromium opens the file with the network cut off,
 * and every chart must be drawn: a canvas with pixels in the line colours, axis tick labels
 * present. The screenshot is kept as docs/report.png, which the README shows.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { renderHtml } from '../src/html-report.js';
import { runScenario } from '../src/runner.js';

const SCREENSHOT = join(import.meta.dirname, '../docs/report.png');
const dir = mkdtempSync(join(tmpdir(), 'bayou-report-'));
let server: ChildProcess | undefined;
let browser: Browser;
let file: string;

beforeAll(async () => {
  const cli = join(
    dirname(createRequire(import.meta.url).resolve('@bayou/server/package.json')),
    'dist/cli.js',
  );
  server = spawn(
    process.execPath,
    [cli, 'start', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    server?.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    server?.on('exit', (code) => reject(new Error(`bayou start exited with ${code}: ${out}`)));
  });
  const url = `${base}/bayeux`;
  // Small and short, but long enough for a few points a second apart and a ramp to see.
  const result = await runScenario('chat', {
    url,
    clients: 50,
    rooms: 5,
    roomsPerClient: 2,
    rate: 200,
    duration: 4000,
    warmup: 500,
    drain: 1000,
    progress: false,
  });
  expect(result.exitCode).toBe(0);
  expect(result.serverSeries.length).toBeGreaterThanOrEqual(2);
  file = join(dir, 'report.html');
  await writeFile(file, renderHtml(result));
  browser = await chromium.launch(chromiumOptions());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server?.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the HTML report in Chromium', () => {
  it('draws every chart with axis ticks, offline, and is screenshotted for the README', async () => {
    const context = await browser.newContext({ viewport: { width: 860, height: 900 }, offline: true });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) requests.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => document.querySelectorAll('.chart[data-drawn="true"]').length === 5);
    const charts = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('.chart')].map((el) => {
        const canvas = el.querySelector('canvas');
        if (!canvas) return { id: el.id, canvas: false, painted: 0, ticks: 0, legend: [] as string[] };
        const ctx = canvas.getContext('2d')!;
        const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
        // Count pixels that are neither transparent nor grey: the coloured lines.
        let painted = 0;
        for (let i = 0; i < data.length; i += 4) {
          const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
          if (a > 0 && (Math.abs(r - g) > 40 || Math.abs(g - b) > 40 || Math.abs(r - b) > 40)) painted++;
        }
        // uPlot draws the tick labels on the canvas; the axes it lays out are elements.
        const ticks = el.querySelectorAll('.u-axis').length;
        const legend = [...el.querySelectorAll('.u-legend .u-series .u-label')].map(
          (l) => l.textContent ?? '',
        );
        return { id: el.id, canvas: true, painted, ticks, legend };
      }),
    );
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    expect(charts.map((c) => c.id)).toEqual([
      'chart-throughput',
      'chart-latency-over-time',
      'chart-latency-distribution',
      'chart-sessions',
      'chart-server',
    ]);
    for (const c of charts) {
      expect(c.canvas, c.id).toBe(true);
      expect(c.painted, `${c.id}: coloured pixels`).toBeGreaterThan(100);
      expect(c.ticks, `${c.id}: axes`).toBeGreaterThanOrEqual(2);
    }
    expect(charts.find((c) => c.id === 'chart-server')?.ticks).toBe(3);
    expect(charts.find((c) => c.id === 'chart-latency-over-time')?.legend).toEqual(
      expect.arrayContaining(['p50', 'p90', 'p99', 'max']),
    );
    // The summary box shows every line whole (the latency line is the longest): nothing cut.
    const summary = await page.evaluate(() => {
      const pre = document.querySelector('pre')!;
      return { text: pre.textContent ?? '', scroll: pre.scrollWidth, width: pre.clientWidth };
    });
    expect(summary.text).toMatch(/latency .*max .*samples\)/);
    expect(summary.scroll).toBeLessThanOrEqual(summary.width);
    const png = await page.screenshot({ fullPage: true });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBeGreaterThan(20_000);
    // The README's screenshot: written when missing or asked for (REPORT_SCREENSHOT=1), so
    // test runs leave the tree clean.
    if (!existsSync(SCREENSHOT) || process.env.REPORT_SCREENSHOT === '1') writeFileSync(SCREENSHOT, png);
    await context.close();
  }, 60_000);
});
