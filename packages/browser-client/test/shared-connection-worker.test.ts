/**
 * `sharedConnection` with `sharedWorker` in headless Chromium, WebSocket refused (harness:
 * `shared-tabs.ts`): 12 tabs of one page, the connection held by a SharedWorker. Its
 * stream cut mid-stream, and the worker itself terminated mid-stream (as the browser does
 * to a crashed worker): every tab gets every message once.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from './helpers.js';
import { needChromium, TABS, type Tab, tabsHarness } from './shared-tabs.js';

needChromium();

const WORKER = { sharedConnection: true, sharedWorker: '/test/bayou-shared-worker.js' };

describe('a connection shared by 12 tabs, held by a SharedWorker (Chromium, WebSocket refused)', () => {
  const { serve, open, stream, count, states, exactlyOnce, killSharedWorkers } = tabsHarness();

  async function workerTabs(base: string): Promise<Tab[]> {
    const tabs: Tab[] = [];
    for (let i = 0; i < TABS; i++) tabs.push(await open(`${base}/test/shared`, WORKER, ['/feed']));
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    return tabs;
  }

  it("no tab leads; the worker's stream cut and the first tab closed mid-stream lose and repeat nothing", async () => {
    const { server, proxy, base } = await serve();
    const tabs = await workerTabs(base);
    expect(await Promise.all(tabs.map((t) => t.leader()))).toEqual(tabs.map(() => false));
    expect(server.bayou.sessionCount).toBe(1);
    const s = stream(server);
    await waitFor(async () => (await count(tabs[TABS - 1])) >= 20, 15_000, 'the stream');
    expect(proxy.cutStreams()).toBe(1);
    await tabs[0]?.page.close();
    const rest = tabs.slice(1);
    const before = await count(rest[0]);
    await waitFor(async () => (await count(rest[0])) >= before + 40, 15_000, 'the stream again');
    const n = s.stop();
    for (const tab of rest) await exactlyOnce(tab, n);
    expect(await Promise.all(rest.map((t) => t.leader()))).toEqual(rest.map(() => false));
    expect(server.bayou.sessionCount).toBe(1);
  });

  it('the worker terminated mid-stream: a tab takes over, every tab gets every message once', async () => {
    const { server, base } = await serve();
    const tabs = await workerTabs(base);
    const s = stream(server);
    await waitFor(async () => (await count(tabs[TABS - 1])) >= 20, 15_000, 'the stream');
    expect(await killSharedWorkers(tabs[0]?.page as Tab['page'])).toBe(1);
    await waitFor(
      async () => (await Promise.all(tabs.map((t) => t.leader()))).filter(Boolean).length === 1,
      15_000,
      'a tab leading',
    );
    const before = await count(tabs[TABS - 1]);
    await waitFor(async () => (await count(tabs[TABS - 1])) >= before + 40, 15_000, 'the stream again');
    const n = s.stop();
    for (const tab of tabs) await exactlyOnce(tab, n);
    // The new leader's session took over; the worker's, which said nothing, expires later.
    expect(server.bayou.sessionCount).toBeLessThanOrEqual(2);
  });
});
