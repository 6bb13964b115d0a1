/**
 * `sharedConnection: true` in headless Chromium, against the real server behind a proxy
 * that refuses WebSocket (harness: `shared-tabs.ts`): 12 tabs of one page share one
 * session and all receive a numbered stream exactly once; without sharing the same 12 tabs
 * hit the wall; the leader tab closed mid-stream loses and repeats nothing, and its
 * beacon ends its session. More in `shared-connection-tabs.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from './helpers.js';
import { needChromium, TABS, type Tab, tabsHarness } from './shared-tabs.js';

needChromium();

describe('a connection shared by the tabs of one browser (Chromium, WebSocket refused)', () => {
  const { serve, load, start, stream, count, states, exactlyOnce, sharedTabs } = tabsHarness();

  it('12 shared tabs over HTTP/1.1 receive a numbered stream exactly once, on one session', async () => {
    const { server, base } = await serve();
    const tabs = await sharedTabs(base, TABS);
    await waitFor(() => server.bayou.subscriberCount('/feed') === 1, 15_000, 'the one subscription');
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    const s = stream(server);
    await waitFor(async () => (await count(tabs[TABS - 1])) >= 20, 15_000, 'the stream');
    const n = s.stop();
    for (const tab of tabs) await exactlyOnce(tab, n);
    expect(server.bayou.sessionCount).toBe(1);
    expect((await Promise.all(tabs.map((t) => t.leader()))).filter(Boolean)).toHaveLength(1);
    expect(
      new Set(
        await Promise.all(
          tabs.map((t) =>
            t.page.evaluate(
              () =>
                (window as unknown as { client: { state: string; transport: string | null } }).client
                  .transport,
            ),
          ),
        ),
      ),
    ).toEqual(new Set(['streaming']));
    // Every tab heard the transport event, with the reason: WebSocket failed (refused).
    for (const tab of tabs) {
      const log = await tab.page.evaluate(
        () => (window as unknown as { log: { transports: string[]; reasons: string[] } }).log,
      );
      expect({ transports: log.transports, reasons: log.reasons }).toEqual({
        transports: ['streaming'],
        reasons: ['failed'],
      });
    }
  });

  it('the same 12 tabs without sharing hit the wall: some starve, the server holds a session per live tab', async () => {
    const { server, base } = await serve();
    // Every page loads first: past the wall a page would not even load.
    const tabs: Tab[] = [];
    for (let i = 0; i < TABS; i++) tabs.push(await load(`${base}/test/`));
    for (const tab of tabs) await start(tab, {}, ['/feed']);
    await waitFor(() => server.bayou.subscriberCount('/feed') >= 1, 15_000, 'a subscription');
    const s = stream(server);
    // Each tab that got a connection receives the stream while it runs (a few seconds).
    await waitFor(async () => (await count(tabs[0])) >= 100, 20_000, 'the stream');
    const n = s.stop();
    const counts = await Promise.all(tabs.map(async (t) => (await t.received()).length));
    const starved = counts.filter((c) => c === 0).length;
    // The wall (6 connections per origin over HTTP/1.1): tabs beyond it have received nothing.
    expect(starved).toBeGreaterThan(0);
    expect(server.bayou.sessionCount).toBeGreaterThan(1);
    expect(server.bayou.sessionCount).toBeLessThanOrEqual(TABS);
    console.log(
      `not shared: ${TABS - starved} of ${TABS} tabs received (of ${n}), ${server.bayou.sessionCount} sessions`,
    );
  });

  it('the leader tab closed mid-stream: every other tab still gets every message once', async () => {
    const { server, base } = await serve();
    const tabs = await sharedTabs(base, TABS);
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    const s = stream(server);
    await waitFor(async () => (await count(tabs[TABS - 1])) >= 20, 15_000, 'the stream');
    const leader = tabs.find((_, i) => i === 0) as Tab;
    expect(await leader.leader()).toBe(true);
    await leader.page.close();
    const rest = tabs.slice(1);
    await waitFor(
      async () => (await Promise.all(rest.map((t) => t.leader()))).some(Boolean),
      15_000,
      'a new leader',
    );
    const before = (await count(rest[0])) ?? 0;
    await waitFor(async () => (await count(rest[0])) >= before + 20, 15_000, 'the stream again');
    const n = s.stop();
    for (const tab of rest) await exactlyOnce(tab, n);
    // The closed leader's beacon ended its session: the new leader's is the only one.
    await waitFor(() => server.bayou.sessionCount === 1, 5000, 'the old session ended');
  });
});
