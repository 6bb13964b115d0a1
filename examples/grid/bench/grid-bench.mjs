// The grid in headless Chromium at 100, 1,000 and 10,000 rows, visibleOnly on and off, in
// both layouts (virtual: only rows near the viewport in the document; plain: every row),
// every watched row updating once a second (the server's demo feed): main-thread busy
// time per second (CDP Performance metrics: TaskDuration, ScriptDuration, and layout +
// style recalculation) and frames per second (requestAnimationFrame callbacks).
//
//   node bench/grid-bench.mjs [--seconds 4] [--json]
//
// Needs a build (`node build.mjs`; the package's `bench` script runs it first) and Chromium
// at CHROMIUM_PATH (default /usr/bin/chromium).
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { createGridServer } from '../dist/grid-server.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '4' }, json: { type: 'boolean', default: false } },
});
const seconds = Number(values.seconds);
const ROW_COUNTS = [100, 1_000, 10_000];
const WARMUP_MS = 1500;
const LAYOUTS = ['virtual', 'plain'];

if (!existsSync(CHROMIUM_PATH)) {
  console.error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  process.exit(1);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(check, ms, what) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function metricsOf(result) {
  return Object.fromEntries(result.metrics.map((m) => [m.name, m.value]));
}

async function measure(browser, base, layout, rows, visibleOnly) {
  const page = await browser.newPage({ viewport: { width: 900, height: 940 } });
  try {
    await page.goto(`${base}/?rows=${rows}&layout=${layout}&visibleOnly=${visibleOnly ? 1 : 0}`);
    await page.waitForSelector('#state[data-state="connected"]', { timeout: 30_000 });
    // Every row subscribed (or every row in view): the live count reaches its level.
    const live = async () => Number(await page.textContent('#live'));
    await until(
      async () => (visibleOnly ? (await live()) > 0 : (await live()) >= rows),
      60_000,
      'subscriptions',
    );
    await sleep(WARMUP_MS);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable', { timeDomain: 'timeTicks' });
    await page.evaluate(() => {
      const w = window;
      w.__frames = 0;
      const loop = () => {
        w.__frames++;
        requestAnimationFrame(loop);
      };
      requestAnimationFrame(loop);
    });
    const before = metricsOf(await cdp.send('Performance.getMetrics'));
    const frames0 = await page.evaluate(() => window.__frames);
    await sleep(seconds * 1000);
    const after = metricsOf(await cdp.send('Performance.getMetrics'));
    const frames1 = await page.evaluate(() => window.__frames);
    const elapsed = after.Timestamp - before.Timestamp;
    const perSecond = (name) => ((after[name] - before[name]) / elapsed) * 1000;
    return {
      layout,
      rows,
      visibleOnly,
      liveSubscriptions: await live(),
      updatesPerSecond: Number(await page.textContent('#ups')),
      busyMsPerSecond: perSecond('TaskDuration'),
      scriptMsPerSecond: perSecond('ScriptDuration'),
      layoutStyleMsPerSecond: perSecond('LayoutDuration') + perSecond('RecalcStyleDuration'),
      fps: (frames1 - frames0) / elapsed,
      domNodes: after.Nodes,
      jsHeapMB: after.JSHeapUsedSize / 1e6,
    };
  } finally {
    await page.close();
  }
}

const server = await createGridServer({ host: '127.0.0.1', port: 0, symbols: 10_000, rate: 1 });
const base = await server.listen();
const browser = await chromium.launch(chromiumOptions());
const results = [];
try {
  for (const layout of LAYOUTS) {
    for (const rows of ROW_COUNTS) {
      for (const visibleOnly of [true, false]) {
        const r = await measure(browser, base, layout, rows, visibleOnly);
        results.push(r);
        if (!values.json)
          console.error(
            `${layout} rows ${rows} visibleOnly ${visibleOnly ? 'on' : 'off'}: ${r.busyMsPerSecond.toFixed(1)} ms/s busy, ${r.fps.toFixed(0)} fps`,
          );
      }
    }
  }
} finally {
  await browser.close();
  await server.close();
}

if (values.json) {
  console.log(JSON.stringify({ seconds, cpus: cpus().length, node: process.version, results }, null, 2));
} else {
  const f = (x, d = 1) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  console.log(
    `\nGrid bench: ${seconds} s measured per configuration, ${cpus().length} CPUs, Node ${process.version}\n`,
  );
  console.log(
    '| layout | rows | visibleOnly | live subscriptions | updates/s | main thread busy ms/s | script ms/s | layout+style ms/s | fps |',
  );
  console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results)
    console.log(
      `| ${r.layout} | ${r.rows.toLocaleString('en-US')} | ${r.visibleOnly ? 'on' : 'off'} | ${r.liveSubscriptions.toLocaleString('en-US')} | ${r.updatesPerSecond.toLocaleString('en-US')} | ${f(r.busyMsPerSecond)} | ${f(r.scriptMsPerSecond)} | ${f(r.layoutStyleMsPerSecond)} | ${f(r.fps, 0)} |`,
    );
}
