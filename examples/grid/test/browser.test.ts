/**
 * The grid page in headless Chromium against the real server and demo feed: 10,000 rows,
 * about 40 in view, in both layouts (virtual and plain scrolling). The server's record
 * subscriptions for the page stay within the rows in view plus the overscan, follow a
 * scroll, and the values on screen change.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoSymbol } from '@bayou/protocol';
import type { BayouServer } from '@bayou/server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Layout, OVERSCAN_PX, RENDER_OVERSCAN, ROW_HEIGHT } from '../src/page/grid.js';
import { liveSubjects } from '../src/server/grid-server.js';
import { launchChromium, packageDir, startGrid, waitFor } from './helpers.js';

const ROWS = 10_000;
const SYMBOLS = Array.from({ length: ROWS }, (_, i) => demoSymbol(i));
const OVERSCAN_ROWS = 2 * Math.ceil(OVERSCAN_PX / ROW_HEIGHT);

let browser: Browser;
let server: BayouServer;
let page: Page;
const pageErrors: string[] = [];

/** Symbols of the rows whose box intersects the viewport now. */
function rowsInView(): Promise<string[]> {
  return page.evaluate(() => {
    const inView: string[] = [];
    for (const row of document.querySelectorAll<HTMLElement>('.row[data-symbol]')) {
      const r = row.getBoundingClientRect();
      if (r.bottom > 0 && r.top < innerHeight) inView.push(row.dataset.symbol!);
      else if (inView.length > 0) break;
    }
    return inView;
  });
}

const live = () => liveSubjects(server, SYMBOLS).map((s) => s.slice('/demo/prices/'.length));

/** Waits until the server's live rows are the rows in view and their overscan, and returns both. */
async function settled(): Promise<{ visible: string[]; subscribed: string[] }> {
  let visible: string[] = [];
  let subscribed: string[] = [];
  await waitFor(
    async () => {
      visible = await rowsInView();
      subscribed = live();
      const set = new Set(subscribed);
      return (
        visible.length > 0 &&
        visible.every((s) => set.has(s)) &&
        subscribed.length <= visible.length + OVERSCAN_ROWS
      );
    },
    15_000,
    'the live subscriptions to match the rows in view',
  ).catch((error: Error) => {
    throw new Error(`${error.message}: ${visible.length} in view, ${subscribed.length} live`);
  });
  return { visible, subscribed };
}

async function cellTexts(symbols: string[], field: string): Promise<string[]> {
  return page.evaluate(
    ({ symbols, field }) =>
      symbols.map(
        (s) => document.querySelector(`.row[data-symbol="${s}"] [data-field="${field}"]`)?.textContent ?? '',
      ),
    { symbols, field },
  );
}

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe.each<Layout>(['virtual', 'plain'])('the live grid in headless Chromium, %s layout', (layout) => {
  beforeAll(async () => {
    let url: string;
    ({ server, url } = await startGrid({ symbols: ROWS, rate: 2, bayou: { providerLinger: 0 } }));
    page = await browser.newPage({ viewport: { width: 900, height: 40 * ROW_HEIGHT + 60 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${url}/?rows=${ROWS}&layout=${layout}`);
    await page.waitForSelector('#state[data-state="connected"]', { timeout: 20_000 });
  });
  afterAll(async () => {
    await page?.close();
    await server?.close();
  });

  it('shows 10,000 rows and subscribes only to those in view plus the overscan', async () => {
    expect(await page.getAttribute('.grid', 'data-rows')).toBe(String(ROWS));
    const { visible, subscribed } = await settled();
    const inDocument = await page.$$eval('.row[data-symbol]', (rows) => rows.length);
    if (layout === 'plain') expect(inDocument).toBe(ROWS);
    else expect(inDocument).toBeLessThanOrEqual(visible.length + 2 * RENDER_OVERSCAN + 1);
    expect(visible.length).toBeGreaterThanOrEqual(38);
    expect(visible.length).toBeLessThanOrEqual(42);
    expect(visible[0]).toBe('AAA');
    expect(subscribed.length).toBeLessThanOrEqual(visible.length + OVERSCAN_ROWS);
    // And it stays there while the feed ticks: sampled until every row in view showed a new time.
    let most = 0;
    const before = await cellTexts(visible, 'time');
    await waitFor(
      async () => {
        most = Math.max(most, live().length);
        const now = await cellTexts(visible, 'time');
        return now.every((t, i) => t !== before[i]);
      },
      15_000,
      'every row in view to tick',
    );
    expect(most).toBeLessThanOrEqual(visible.length + OVERSCAN_ROWS);
    // The page's own count shows the same.
    await waitFor(
      async () => Number(await page.textContent('#live')) === live().length,
      5000,
      'the on-screen subscription count',
    );
    expect(pageErrors).toEqual([]);
  });

  it('changes the values on screen and counts the updates per second', async () => {
    const { visible } = await settled();
    const rows = visible.slice(0, 10);
    await waitFor(
      async () => (await cellTexts(rows, 'last')).every((t) => t !== '—' && t !== ''),
      10_000,
      'values in the rows in view',
    );
    const before = await cellTexts(rows, 'time');
    await waitFor(
      async () => {
        const now = await cellTexts(rows, 'time');
        return now.filter((t, i) => t !== before[i]).length >= 5;
      },
      10_000,
      'the times on screen to change',
    );
    await waitFor(async () => Number(await page.textContent('#ups')) > 0, 5000, 'updates per second');
    // The README's screenshot: written when missing or asked for, so test runs leave the tree clean.
    const file = join(packageDir, 'screenshot.png');
    if (layout === 'virtual' && (!existsSync(file) || process.env.GRID_SCREENSHOT === '1'))
      writeFileSync(file, await page.screenshot());
  });

  it('follows a scroll: the rows now in view subscribe and the ones left behind are released', async () => {
    await page.evaluate((y) => window.scrollTo(0, y), 5000 * ROW_HEIGHT);
    const { visible, subscribed } = await settled();
    expect(visible).toContain(demoSymbol(5002));
    expect(subscribed.length).toBeLessThanOrEqual(visible.length + OVERSCAN_ROWS);
    expect(subscribed).not.toContain('AAA');
    const near = (s: string) => Math.abs(SYMBOLS.indexOf(s) - 5020) < 40;
    expect(subscribed.every(near)).toBe(true);
    await waitFor(
      async () => (await cellTexts(visible.slice(0, 5), 'bid')).every((t) => /^\d+\.\d{3}$/.test(t)),
      10_000,
      'prices in the rows scrolled to',
    );

    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const end = await settled();
    expect(end.visible).toContain(demoSymbol(ROWS - 1));
    expect(end.subscribed.length).toBeLessThanOrEqual(end.visible.length + OVERSCAN_ROWS);
    expect(pageErrors).toEqual([]);
  });
});
