/**
 * The harness of the shared-connection tests in headless Chromium: a persistent browser
 * profile, the real server behind a proxy that refuses WebSocket (so every tab is on the
 * HTTP fallback, where a browser allows 6 connections per origin), tabs of the test page
 * with the shared build, a numbered stream, and the checks on it. `tabsHarness()` is called
 * inside a `describe`: it registers the hooks that start and clean up.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, chromiumOptions } from '../../../scripts/chromium.mjs';
import { startBayou, TestProxy, waitFor } from './helpers.js';

export type Started = Awaited<ReturnType<typeof startBayou>>;
export const TABS = 12;

export interface Tab {
  received(): Promise<unknown[]>;
  leader(): Promise<boolean>;
  page: Page;
}

/** Never a silent skip: without Chromium the suite fails and says how to get it. */
export function needChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  describe('shared connection', () => {
    it('needs Chromium under CI', () => {
      throw new Error(`Chromium not found at ${CHROMIUM_PATH}; the test script installs it through apt-get`);
    });
  });
}

export function tabsHarness() {
  let context: BrowserContext;
  let profile: string;
  const cleanup: (() => Promise<unknown> | unknown)[] = [];

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'bayou-shared-'));
    context = await chromium.launchPersistentContext(profile, chromiumOptions());
  });
  afterAll(async () => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function serve(
    options: Parameters<typeof startBayou>[0] = {},
  ): Promise<{ server: Started; proxy: TestProxy; base: string }> {
    const server = await startBayou({ historySize: 1000, ...options });
    cleanup.push(() => server.close());
    const proxy = new TestProxy(
      `127.0.0.1:${(server.app.server.address() as AddressInfo).port}`,
      'refuse-upgrade',
    );
    const base = await proxy.listen();
    cleanup.push(() => proxy.close());
    return { server, proxy, base };
  }

  /** Opens a tab (its page loaded, nothing started). */
  async function load(url: string): Promise<Tab> {
    const page = await context.newPage();
    cleanup.push(() => page.close());
    page.on('pageerror', (e) => console.error('page error:', e));
    await page.goto(url);
    return {
      page,
      received: () =>
        page.evaluate(() => (window as unknown as { log: { received: unknown[] } }).log.received),
      leader: () =>
        page.evaluate(
          () => (window as unknown as { client: { isLeader?: boolean } }).client.isLeader === true,
        ),
    };
  }

  /** Starts the tab's client and subscribes it to `channels`, without waiting for either. */
  async function start(tab: Tab, options: Record<string, unknown>, channels: string[]): Promise<Tab> {
    await tab.page.evaluate(
      ({ o, chs }) => {
        const w = window as unknown as {
          startClient(o: object): Promise<void>;
          client: { subscribe(c: string, h: (m: { channel: string; data: unknown }) => void): unknown };
          log: { received: unknown[] };
        };
        w.startClient(o).catch(() => {});
        for (const c of chs)
          w.client.subscribe(c, (m) => w.log.received.push(c === '/feed' ? m.data : `${c}:${m.data}`));
      },
      { o: options, chs: channels },
    );
    return tab;
  }

  const open = async (url: string, options: Record<string, unknown>, channels: string[]) =>
    start(await load(url), options, channels);

  /** Publishes 1, 2, 3... on `/feed` every 20 ms until stopped; `stop` returns the last number. */
  function stream(server: Started): { stop(): number } {
    let n = 0;
    const timer = setInterval(() => server.bayou.publish('/feed', ++n), 20);
    return {
      stop() {
        clearInterval(timer);
        server.bayou.publish('/feed', ++n);
        return n;
      },
    };
  }

  const count = async (tab: Tab | undefined) => (await tab?.received())?.length ?? 0;
  const states = (tabs: Tab[]) =>
    Promise.all(
      tabs.map((t) =>
        t.page.evaluate(
          () => (window as unknown as { client: { state: string; transport: string | null } }).client.state,
        ),
      ),
    );

  async function exactlyOnce(tab: Tab, n: number): Promise<void> {
    await waitFor(async () => (await tab.received()).includes(n), 20_000, `message ${n}`);
    const got = (await tab.received()) as number[];
    expect([...got].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  }

  async function sharedTabs(base: string, count: number, channels = ['/feed']): Promise<Tab[]> {
    const tabs: Tab[] = [];
    for (let i = 0; i < count; i++)
      tabs.push(await open(`${base}/test/shared`, { sharedConnection: true }, channels));
    return tabs;
  }

  /** Terminates the origin's SharedWorkers as the browser would (DevTools' closeTarget); returns how many. */
  async function killSharedWorkers(page: Page): Promise<number> {
    const cdp = await context.newCDPSession(page);
    try {
      const { targetInfos } = await cdp.send('Target.getTargets');
      const workers = targetInfos.filter((t) => t.type === 'shared_worker');
      for (const w of workers) await cdp.send('Target.closeTarget', { targetId: w.targetId });
      return workers.length;
    } finally {
      await cdp.detach();
    }
  }

  return { serve, load, start, open, stream, count, states, exactlyOnce, sharedTabs, killSharedWorkers };
}
