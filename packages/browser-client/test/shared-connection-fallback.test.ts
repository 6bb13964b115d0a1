/**
 * `sharedConnection` in headless Chromium (harness: `shared-tabs.ts`): who shares with whom
 * and the fallbacks. Tabs with different keys (identities) share nothing; a page in an
 * opaque origin, where Chromium refuses Web Locks, has a connection of its own; a
 * `sharedWorker` whose script is missing leaves the lead to a tab; two private windows
 * (Chromium's off-the-record browser contexts) share nothing with each other.
 */
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumOptions } from '../../../scripts/chromium.mjs';
import { waitFor } from './helpers.js';
import { needChromium, tabsHarness } from './shared-tabs.js';

needChromium();

describe('who shares a connection, and the fallbacks (Chromium, WebSocket refused)', () => {
  const { serve, open, states, exactlyOnce } = tabsHarness();

  it('tabs with different keys (identities) do not share: a session each, each its own messages', async () => {
    const { server, base } = await serve();
    const ada = await open(`${base}/test/shared`, { sharedConnection: 'ada' }, ['/feed']);
    const bob = await open(`${base}/test/shared`, { sharedConnection: 'bob' }, ['/feed']);
    const ada2 = await open(`${base}/test/shared`, { sharedConnection: 'ada' }, ['/feed']);
    await waitFor(() => server.bayou.subscriberCount('/feed') === 2, 15_000, 'two subscriptions');
    server.bayou.publish('/feed', 1);
    for (const tab of [ada, bob, ada2]) await exactlyOnce(tab, 1);
    expect(server.bayou.sessionCount).toBe(2);
    expect(await Promise.all([ada, bob, ada2].map((t) => t.leader()))).toEqual([true, true, false]);
    const ids = await Promise.all(
      [ada, bob, ada2].map((t) =>
        t.page.evaluate(() => (window as unknown as { client: { clientId: string } }).client.clientId),
      ),
    );
    expect(ids[0]).toBe(ids[2]);
    expect(ids[1]).not.toBe(ids[0]);
  });

  it('a page in an opaque origin (sandboxed: Web Locks refused) falls back to a connection of its own', async () => {
    const { server, base } = await serve({ allowedOrigins: ['null'] });
    const tabs = [
      await open(`${base}/test/sandboxed`, { sharedConnection: true }, ['/feed']),
      await open(`${base}/test/sandboxed`, { sharedConnection: true }, ['/feed']),
    ];
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    await waitFor(() => server.bayou.subscriberCount('/feed') === 2, 15_000, 'a subscription each');
    server.bayou.publish('/feed', 1);
    server.bayou.publish('/feed', 2);
    for (const tab of tabs) await exactlyOnce(tab, 2);
    expect(server.bayou.sessionCount).toBe(2);
  });

  it('a SharedWorker that cannot start (its script missing): a tab leads after the 3 s it gives the worker', async () => {
    const { server, base } = await serve();
    const options = { sharedConnection: true, sharedWorker: '/test/no-such-worker.js' };
    const tabs = [
      await open(`${base}/test/shared`, options, ['/feed']),
      await open(`${base}/test/shared`, options, ['/feed']),
    ];
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    expect((await Promise.all(tabs.map((t) => t.leader()))).filter(Boolean)).toHaveLength(1);
    server.bayou.publish('/feed', 1);
    for (const tab of tabs) await exactlyOnce(tab, 1);
    expect(server.bayou.sessionCount).toBe(1);
  });

  it('two private windows share nothing with each other: tabs share within a window, a session per window', async () => {
    const { server, base } = await serve();
    const browser = await chromium.launch(chromiumOptions());
    try {
      const tab = async (context: Awaited<ReturnType<typeof browser.newContext>>) => {
        const page = await context.newPage();
        await page.goto(`${base}/test/shared`);
        await page.evaluate(() => {
          const w = window as unknown as {
            startClient(o: object): Promise<void>;
            subscribe(c: string): Promise<void>;
          };
          w.startClient({ sharedConnection: true }).catch(() => {});
          w.subscribe('/feed').catch(() => {});
        });
        return page;
      };
      const [one, two] = [await browser.newContext(), await browser.newContext()];
      const pages = [await tab(one), await tab(one), await tab(two), await tab(two)];
      await waitFor(() => server.bayou.subscriberCount('/feed') === 2, 15_000, 'a subscription per window');
      server.bayou.publish('/feed', 1);
      for (const page of pages) {
        const received = () =>
          page.evaluate(() => (window as unknown as { log: { received: unknown[] } }).log.received);
        await waitFor(async () => (await received()).length === 1, 15_000, 'the message');
        expect(await received()).toEqual([1]);
      }
      expect(server.bayou.sessionCount).toBe(2);
      const ids = await Promise.all(
        pages.map((p) =>
          p.evaluate(() => (window as unknown as { client: { clientId: string } }).client.clientId),
        ),
      );
      expect(ids[0]).toBe(ids[1]);
      expect(ids[2]).toBe(ids[3]);
      expect(ids[0]).not.toBe(ids[2]);
    } finally {
      await browser.close();
    }
  });
});
