/**
 * `sharedConnection` in headless Chromium (harness: `shared-tabs.ts`): who shares with whom
 * and the fallbacks. Tabs with different keys (identities) share nothing; a page in an
 * opaque origin, where Chromium refuses Web Locks, has a connection of its own; a
 * `sharedWorker` whose script is missing leaves the lead to a tab.
 */
import { describe, expect, it } from 'vitest';
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
});
