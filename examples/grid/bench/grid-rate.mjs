// What `?visibleOnly=0` delivers: the grid with every row subscribed, in headless Chromium,
// against the real server's demo feed at GRID_RATE updates/s per symbol; reads the page's own
// "updates/s" figure once a second once every row is subscribed, and reports its median and
// range with the machine's load average beside it.
//
//   node bench/grid-rate.mjs [--rows 10000] [--rate 1] [--seconds 15]
//
// Needs a build (`node build.mjs`) and Chromium at CHROMIUM_PATH (default /usr/bin/chromium).
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { createGridServer } from '../dist/grid-server.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '15' },
    layout: { type: 'string', default: 'virtual' },
  },
});
const rows = Number(values.rows);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = await createGridServer({ host: '127.0.0.1', port: 0, symbols: Math.max(rows, 1), rate });
const base = await server.listen();
const browser = await chromium.launch(chromiumOptions());
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 940 } });
  // Every state the page's client went through (a reconnect would restart its subscriptions).
  const states = [];
  const watch = setInterval(async () => {
    const state = await page.textContent('#state').catch(() => null);
    if (state !== null && states.at(-1) !== state) states.push(state);
  }, 100);
  const started = Date.now();
  await page.goto(`${base}/?rows=${rows}&layout=${values.layout}&visibleOnly=0`);
  await page.waitForSelector('#state[data-state="connected"]', { timeout: 60_000 });
  const figure = async (id) => Number((await page.textContent(`#${id}`))?.replace(/,/g, ''));
  while ((await figure('live')) < rows) {
    if (Date.now() - started > 120_000) throw new Error(`only ${await figure('live')} of ${rows} subscribed`);
    await sleep(250);
  }
  const subscribedIn = (Date.now() - started) / 1000;
  await sleep(2000); // the page's per-second figure covers a whole second of the full load
  const samples = [];
  for (let i = 0; i < seconds; i++) {
    await sleep(1000);
    samples.push(await figure('ups'));
  }
  clearInterval(watch);
  const stats = server.bayou.stats();
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(
    JSON.stringify({
      rows,
      ratePerSymbol: rate,
      nominal: rows * rate,
      subscribedInSeconds: Number(subscribedIn.toFixed(1)),
      updatesPerSecond: { median, min: sorted[0], max: sorted.at(-1), samples },
      states,
      server: {
        sessions: stats.sessions,
        messagesOut: stats.messagesOut,
        frames: stats.frames,
        slowConsumers: stats.slowConsumers,
        removed: stats.removed,
      },
      loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    }),
  );
} finally {
  await browser.close();
  await server.close();
}
