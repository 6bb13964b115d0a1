/**
 * `sharedConnection` in headless Chromium, WebSocket refused (harness: `shared-tabs.ts`):
 * the leader's stream cut mid-stream loses and repeats nothing; a tab that joins late gets
 * only what it subscribed to, and the hub gives up a channel when the last tab following
 * it is closed; a follower's publishes and records go through the leader; presence; a
 * leader change on a quiet channel. The SharedWorker's cases are in
 * `shared-connection-worker.test.ts`, who shares with whom and the fallbacks in
 * `shared-connection-fallback.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from './helpers.js';
import { needChromium, type Tab, tabsHarness } from './shared-tabs.js';

needChromium();

describe('a connection shared by the tabs of one browser, more cases (Chromium, WebSocket refused)', () => {
  const { serve, open, stream, count, states, exactlyOnce, sharedTabs } = tabsHarness();

  it("the leader's stream cut mid-stream: every tab gets every message once", async () => {
    const { server, proxy, base } = await serve();
    const tabs = await sharedTabs(base, 6);
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    const s = stream(server);
    await waitFor(async () => (await count(tabs[5])) >= 20, 15_000, 'the stream');
    expect(proxy.cutStreams()).toBe(1);
    const before = (await count(tabs[5])) ?? 0;
    await waitFor(async () => (await count(tabs[5])) >= before + 40, 15_000, 'the stream again');
    const n = s.stop();
    for (const tab of tabs) await exactlyOnce(tab, n);
  });

  it('a leader change on a channel nothing has arrived on yet: what is published before the new leader subscribes is recovered', async () => {
    const { server, proxy, base } = await serve();
    const tabs = await sharedTabs(base, 3, ['/quiet']);
    await waitFor(() => server.bayou.subscriberCount('/quiet') === 1, 15_000, 'the subscription');
    await waitFor(
      async () => (await states(tabs)).every((s) => s === 'connected'),
      15_000,
      'every tab connected',
    );
    const leader = tabs[0] as Tab;
    expect(await leader.leader()).toBe(true);
    // The network down: the new leader cannot subscribe before the publish.
    proxy.setDown(true);
    await leader.page.close();
    const rest = tabs.slice(1);
    await waitFor(
      async () => (await Promise.all(rest.map((t) => t.leader()))).some(Boolean),
      15_000,
      'a new leader',
    );
    server.bayou.publish('/quiet', 1);
    proxy.setDown(false);
    for (const tab of rest)
      await waitFor(async () => (await tab.received()).length > 0, 15_000, 'the message from history');
    // Then the live stream: the next message, and nothing twice.
    server.bayou.publish('/quiet', 2);
    for (const tab of rest) {
      await waitFor(async () => (await tab.received()).length === 2, 15_000, 'the next message');
      expect(await tab.received()).toEqual(['/quiet:1', '/quiet:2']);
    }
  });

  it('a tab that joins late gets only what it subscribed to; the last tab to leave a channel unsubscribes', async () => {
    const { server, base } = await serve();
    const tabs = await sharedTabs(base, 3);
    await waitFor(() => server.bayou.subscriberCount('/feed') === 1, 15_000, 'the feed subscription');
    server.bayou.publish('/feed', 1);
    await waitFor(async () => (await count(tabs[2])) === 1, 15_000, 'the first message');
    const late = await open(`${base}/test/shared`, { sharedConnection: true }, ['/news']);
    await waitFor(() => server.bayou.subscriberCount('/news') === 1, 15_000, 'the late subscription');
    server.bayou.publish('/feed', 2);
    server.bayou.publish('/news', 'n1');
    await waitFor(async () => (await late.received()).length === 1, 15_000, "the late tab's message");
    await waitFor(async () => (await count(tabs[0])) === 2, 15_000, 'the second feed message');
    expect(await late.received()).toEqual(['/news:n1']);
    expect(await tabs[0]?.received()).toEqual([1, 2]);
    expect(server.bayou.sessionCount).toBe(1);
    // The late tab goes (closed, no word said): the hub notices through its lock and unsubscribes.
    await late.page.close();
    await waitFor(() => server.bayou.subscriberCount('/news') === 0, 15_000, 'the unsubscribe');
    expect(server.bayou.subscriberCount('/feed')).toBe(1);
  });
  it("a follower's publishes and records go through the leader: a late record tab gets its own snapshot", async () => {
    const { server, base } = await serve({ records: [{ pattern: '/fx/*' }] });
    server.bayou.updateRecord('/fx/EURUSD', { bid: 1.1, ask: 1.2 });
    const [leader, follower] = await sharedTabs(base, 2, ['/chat']);
    type W = {
      client: {
        record(s: string, o: object, cb: (image: Record<string, unknown>) => void): unknown;
        publish(c: string, d: unknown): Promise<void>;
      };
      images: Record<string, unknown>[];
    };
    const follow = (tab: Tab | undefined, fields?: string[]) =>
      tab?.page.evaluate((f) => {
        const w = window as unknown as W;
        w.images = [];
        w.client.record('/fx/EURUSD', f ? { fields: f } : {}, (image) => w.images.push({ ...image }));
      }, fields);
    const images = (tab: Tab | undefined) =>
      tab?.page.evaluate(() => (window as unknown as W).images) ?? Promise.resolve([]);
    await follow(leader);
    await waitFor(async () => (await images(leader)).length === 1, 15_000, "the leader's snapshot");
    // A second tab asks for the same subject later: the hub subscribes again for its snapshot.
    await follow(follower, ['bid']);
    await waitFor(async () => (await images(follower)).length >= 1, 15_000, "the follower's snapshot");
    expect((await images(follower))[0]).toEqual({ bid: 1.1 });
    server.bayou.updateRecord('/fx/EURUSD', { bid: 1.3 });
    await waitFor(
      async () => (await images(follower)).at(-1)?.bid === 1.3,
      15_000,
      'the update in the follower',
    );
    await waitFor(async () => (await images(leader)).at(-1)?.bid === 1.3, 15_000, 'the update in the leader');
    expect((await images(leader)).at(-1)).toEqual({ bid: 1.3, ask: 1.2 });
    expect(server.bayou.subscriberCount('/fx/EURUSD')).toBe(1);
    // A publish from the follower is settled by the server's reply, relayed by the leader.
    await follower?.page.evaluate(() =>
      (window as unknown as W).client.publish('/chat', 'hi from the follower'),
    );
    await waitFor(
      async () => (await leader?.received())?.includes('/chat:hi from the follower'),
      15_000,
      'the chat',
    );
    expect(await follower?.received()).toEqual(['/chat:hi from the follower']);
  });
  it("presence in shared tabs: one tab follows a room's members, another tab's subscription makes the shared session join and leave", async () => {
    const { server, base } = await serve({
      authenticate: (message) => ({ sub: (message.ext as { user?: string } | undefined)?.user }),
      auth: { channels: { rules: [{ pattern: '/room/*', presence: true }] } },
    });
    const options = { sharedConnection: true, handshake: { user: 'ada' } };
    const watcher = await open(`${base}/test/shared`, options, []);
    const member = await open(`${base}/test/shared`, options, []);
    type W = {
      client: {
        presence(c: string): {
          subscribe(l: () => void): () => void;
          getSnapshot(): { ready: boolean; members: { user: string }[] };
        };
        subscribe(c: string, h: () => void): { unsubscribe(): void };
      };
      room: { getSnapshot(): { ready: boolean; members: { user: string }[] } };
      inRoom: { unsubscribe(): void };
    };
    await watcher.page.evaluate(() => {
      const w = window as unknown as W;
      w.room = w.client.presence('/room/x');
      (w.room as unknown as { subscribe(l: () => void): () => void }).subscribe(() => undefined);
    });
    const members = () =>
      watcher.page.evaluate(() => {
        const snapshot = (window as unknown as W).room.getSnapshot();
        return snapshot.ready ? snapshot.members.map((m) => m.user) : null;
      });
    await waitFor(async () => (await members())?.length === 0, 15_000, 'the first list');
    await member.page.evaluate(() => {
      const w = window as unknown as W;
      w.inRoom = w.client.subscribe('/room/x', () => undefined);
    });
    await waitFor(async () => (await members())?.join() === 'ada', 15_000, 'the shared session to join');
    expect(server.bayou.sessionCount).toBe(1);
    await member.page.evaluate(() => (window as unknown as W).inRoom.unsubscribe());
    await waitFor(async () => (await members())?.length === 0, 15_000, 'the shared session to leave');
  });
});
