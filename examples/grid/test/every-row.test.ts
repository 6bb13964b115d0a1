/**
 * `?visibleOnly=0`, the comparison the README describes: a page subscribed to all 10,000
 * rows at 1 update/s each. The page holds its one session — its 10,000 snapshots and then
 * 10,000 numbered updates a second, acknowledged about once a second, are more than the
 * default 10,000 unacknowledged messages, which dropped it as a slow consumer and
 * resubscribed it in a loop (a few hundred updates/s reached the page) — and receives
 * thousands of updates a second.
 */
import type { BayouServer } from '@bayou/server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startGrid, waitFor } from './helpers.js';

let browser: Browser;
let server: BayouServer;
let url: string;

describe('the grid with every row subscribed', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    ({ server, url } = await startGrid());
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('keeps its session with 10,000 live records and receives thousands of updates a second', {
    timeout: 40_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 940 } });
    await page.goto(`${url}/?rows=10000&visibleOnly=0`);
    const figure = async (id: string) => Number((await page.textContent(`#${id}`))?.replace(/,/g, ''));
    await waitFor(async () => (await figure('live')) === 10_000, 20_000, 'every row subscribed');
    // A second of the full load as the page counts it (10,000 nominal; 9,700-10,100 measured here).
    await waitFor(async () => (await figure('ups')) >= 5_000, 20_000, 'thousands of updates a second');
    const stats = server.bayou.stats();
    expect(stats.slowConsumers).toBe(0);
    expect(stats.removed['slow-consumer']).toBe(0);
    expect(stats.sessions).toBe(1);
    await page.close();
  });
});
