/**
 * `client.presence(channel)` against the real `@bayou/server` (presence on `/room/*`),
 * over both transports: the store lists who is in the channel and follows joins and
 * leaves, `members()` asks once, a refused channel reports the server's 403, and the last
 * listener leaving ends the server subscription.
 */
import { type BayouServer, createServer } from '@bayou/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  BayouClient,
  longPolling,
  type PresenceSnapshot,
  type WebSocketConstructor,
  websocket,
} from '../src/index.js';
import { waitFor } from './helpers.js';

let server: BayouServer;
let url: string;
const clients: BayouClient[] = [];

beforeAll(async () => {
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    sweepInterval: 50,
    // The user comes from the handshake here (a token's `sub` in production).
    authenticate: (message) => ({ sub: (message.ext as { user?: string } | undefined)?.user }),
    auth: {
      channels: {
        rules: [
          { pattern: '/room/*', presence: true },
          { pattern: '/private/*', subscribe: 'nobody', presence: true },
        ],
      },
    },
  });
  url = `${await server.listen()}/bayeux`;
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined);
});
afterAll(() => server.close());

describe.each(['websocket', 'long-polling'] as const)('client.presence over %s', (transport) => {
  async function as(user: string): Promise<BayouClient> {
    const c = new BayouClient(url, {
      transports: [transport === 'websocket' ? websocket : longPolling],
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      handshake: { user },
    });
    clients.push(c);
    await c.connect();
    return c;
  }
  const users = (s: PresenceSnapshot) => s.members.map((m) => m.user).sort();

  it('lists the members and follows joins and leaves; members() asks once', async () => {
    const channel = `/room/${transport}`;
    const ada = await as('ada');
    const bob = await as('bob');
    const presence = ada.presence(channel);
    const seen: PresenceSnapshot[] = [];
    const off = presence.subscribe(() => seen.push(presence.getSnapshot()));
    await waitFor(() => presence.getSnapshot().ready, 5000, 'the first list');
    expect(presence.getSnapshot().members).toEqual([]);

    const bobIn = bob.subscribe(channel, () => undefined);
    await waitFor(() => users(presence.getSnapshot()).join() === 'bob', 5000, 'bob to join');
    await ada.subscribe(channel, () => undefined).ready;
    await waitFor(() => users(presence.getSnapshot()).join() === 'ada,bob', 5000, 'ada to join');
    expect((await bob.presence(channel).members()).map((m) => m.user).sort()).toEqual(['ada', 'bob']);

    const before = presence.getSnapshot();
    expect(presence.getSnapshot()).toBe(before);
    bobIn.unsubscribe();
    await waitFor(() => users(presence.getSnapshot()).join() === 'ada', 5000, 'bob to leave');
    expect(seen.length).toBeGreaterThanOrEqual(3);

    off();
    await waitFor(() => server.bayou.subscriberCount(`/presence${channel}`) === 0, 5000, 'the unsubscribe');
    expect(presence.getSnapshot().members).toEqual([]);
  });

  it('reports the refusal of a channel the client may not read', async () => {
    const eve = await as('eve');
    const presence = eve.presence('/private/plans');
    const off = presence.subscribe(() => undefined);
    await waitFor(() => presence.getSnapshot().error !== null, 5000, 'the refusal');
    expect(presence.getSnapshot().error?.message).toContain('403');
    await expect(presence.members()).rejects.toThrow(/403:\/private\/plans:subscribe_denied/);
    off();
    expect(() => eve.presence('/room/*')).toThrow(TypeError);
  });
});
