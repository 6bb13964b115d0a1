/**
 * Presence for clients, on one node: subscribers of a channel that a `presence: true` rule
 * covers are members; `/service/presence` lists them; `/presence<channel>` carries joins and
 * leaves. Real clients: `@bayou/client` and Faye, over both transports.
 */
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import Faye from 'faye';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { MemoryEngine, PresenceMember } from '../src/index.js';
import { operationsOf } from '../src/kernel/node-operations.js';
import { eventually, Inbox, TRANSPORTS, type Transport, within } from './interop-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';
import { type Started, startServer } from './start-server.js';

interface FayeSubscription extends PromiseLike<unknown> {
  cancel(): void;
}
interface FayeClient {
  subscribe(channel: string, onData?: (data: unknown) => void): FayeSubscription;
  publish(channel: string, data: unknown): PromiseLike<unknown>;
  disconnect(): PromiseLike<unknown> | undefined;
  disable(feature: string): void;
  addExtension(extension: {
    outgoing?: (message: Record<string, unknown>, callback: (m: Record<string, unknown>) => void) => void;
  }): void;
}
const FayeClient = (Faye as unknown as { Client: new (url: string, options: object) => FayeClient }).Client;

interface Event {
  action: 'join' | 'leave';
  member: { clientId: string; user: string | null; info: Record<string, unknown> };
}

describe.each(TRANSPORTS)('presence with real clients over %s', (transport: Transport) => {
  let started: Started;
  const clients: BayouClient[] = [];
  const fayes: FayeClient[] = [];

  beforeAll(async () => {
    started = await startServer({ auth: presenceAuth, trustClientSession: true });
  });
  afterAll(() => started.server.close());
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined);
    for (const f of fayes.splice(0)) await Promise.resolve(f.disconnect()).catch(() => undefined);
  });

  function bayouClient(user: string): BayouClient {
    const c = new BayouClient(`${started.base}/bayeux`, {
      transports: [transport === 'websocket' ? websocket : longPolling],
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      token: () => token({ sub: user, bayou: { info: { name: user.toUpperCase() } } }),
    });
    clients.push(c);
    c.connect().catch(() => undefined);
    return c;
  }

  function fayeClient(user: string): FayeClient {
    const f = new FayeClient(`${started.base}/bayeux`, { timeout: 10, retry: 0.1 });
    if (transport === 'long-polling') f.disable('websocket');
    f.addExtension({
      outgoing(message, callback) {
        if (message.channel === '/meta/handshake') {
          void token({ sub: user }).then((t) => callback({ ...message, ext: { auth: { token: t } } }));
          return;
        }
        // Faye sends no ext on subscribe; this one adds presence info from the client.
        if (message.channel === '/meta/subscribe' && message.subscription === '/chat/room1')
          message.ext = { presence: { info: { device: 'faye' } } };
        callback(message);
      },
    });
    fayes.push(f);
    return f;
  }

  it('lists members with user and info, and follows joins and leaves', async () => {
    const ada = bayouClient('ada');
    const events = new Inbox<Event>();
    await ada.subscribe('/presence/chat/room1', (m) => events.push(m.data as Event)).ready;
    await ada.subscribe('/chat/room1', () => undefined).ready;
    const adaJoin = (await events.waitFor(1))[0] as Event;
    expect(adaJoin).toMatchObject({ action: 'join', member: { user: 'ada', info: { name: 'ADA' } } });

    const bob = fayeClient('bob');
    const bobSub = bob.subscribe('/chat/room1', () => undefined);
    await within(Promise.resolve(bobSub), 5000, 'faye subscribe');
    const bobJoin = (await events.waitFor(2))[1] as Event;
    expect(bobJoin).toMatchObject({ action: 'join', member: { user: 'bob', info: { device: 'faye' } } });

    const answer = await ada.request<{ members: Event['member'][] }>('/service/presence', {
      channel: '/chat/room1',
    });
    expect(answer.members.map((m) => m.user).sort()).toEqual(['ada', 'bob']);
    expect(answer.members.find((m) => m.user === 'ada')).toEqual(adaJoin.member);

    // Faye reads the list the Faye way: the answer of a /service publish comes on its subscription.
    const answers = new Inbox<{ members?: Event['member'][] }>();
    await within(Promise.resolve(bob.subscribe('/service/presence', answers.push as never)), 5000, 'faye');
    await within(Promise.resolve(bob.publish('/service/presence', { channel: '/chat/room1' })), 5000, 'faye');
    const fayeList = (await answers.waitFor(1))[0];
    expect(fayeList?.members?.map((m) => m.user).sort()).toEqual(['ada', 'bob']);

    bobSub.cancel();
    expect((await events.waitFor(3))[2]).toEqual({ action: 'leave', member: bobJoin.member });
    // A session that ends leaves too: Faye's disconnect ends bob's session.
    const carol = fayeClient('carol');
    const carolSub = carol.subscribe('/chat/room1', () => undefined);
    await within(Promise.resolve(carolSub), 5000, 'faye subscribe');
    await events.waitFor(4);
    await Promise.resolve(carol.disconnect());
    const last = (await events.waitFor(5))[4] as Event;
    expect(last).toMatchObject({ action: 'leave', member: { user: 'carol' } });
  });

  it('refuses presence of a channel the client may not read, as list and as events', async () => {
    const eve = bayouClient('eve');
    await expect(eve.request('/service/presence', { channel: '/secret/plans' })).rejects.toMatchObject({
      message: expect.stringContaining('403:/secret/plans:subscribe_denied'),
    });
    const follow = eve.subscribe('/presence/secret/plans', () => undefined);
    await expect(follow.ready).rejects.toThrow(/403:\/presence\/secret\/plans:subscribe_denied/);
    // Clients never publish presence events themselves.
    await expect(eve.publish('/presence/chat/room1', { action: 'join' })).rejects.toThrow(/publish_denied/);
    // A channel without presence, and a request without a channel, are refused too.
    await expect(eve.request('/service/presence', { channel: '/news' })).rejects.toThrow(/channel_invalid/);
    await expect(eve.request('/service/presence', {})).rejects.toThrow(/message_invalid/);
  });

  it('drops the member maps of a channel when its last member left (node and engine)', async () => {
    const kernel = operationsOf(started.server.app);
    const engine = kernel.engine as MemoryEngine;
    const users = ['u1', 'u2', 'u3'].map((u) => bayouClient(u));
    const subs = users.map((u, i) => u.subscribe(`/chat/evict${i % 2}`, () => undefined));
    await Promise.all(subs.map((s) => s.ready));
    expect(kernel.presence.localChannels).toBeGreaterThanOrEqual(2);
    expect(engine.bus.presence.has('/chat/evict0')).toBe(true);
    for (const s of subs) s.unsubscribe();
    await eventually(
      () => kernel.presence.localChannels === 0 && !engine.bus.presence.has('/chat/evict0'),
      5000,
    );
    expect(engine.bus.presence.has('/chat/evict1')).toBe(false);
  });
});

describe('presence events for the application', () => {
  it('fires presence:join and presence:leave once per change on the node', async () => {
    const started = await startServer({ auth: presenceAuth, trustClientSession: true });
    const seen: [string, string, PresenceMember][] = [];
    started.server.bayou.on('presence:join', (ch, m) => seen.push(['join', ch, m]));
    started.server.bayou.on('presence:leave', (ch, m) => seen.push(['leave', ch, m]));
    const c = new BayouClient(`${started.base}/bayeux`, {
      transports: [longPolling],
      token: () => token({ sub: 'zed' }),
    });
    c.connect().catch(() => undefined);
    try {
      const s = c.subscribe('/chat/app', () => undefined);
      await s.ready;
      s.unsubscribe();
      await eventually(() => seen.length === 2, 5000);
      expect(seen.map(([a, ch, m]) => [a, ch, m.user])).toEqual([
        ['join', '/chat/app', 'zed'],
        ['leave', '/chat/app', 'zed'],
      ]);
    } finally {
      await c.disconnect().catch(() => undefined);
      await started.server.close();
    }
  });
});
