/**
 * The server API (`/api/presence`, `/api/history`, `/api/channels`, `/api/disconnect`,
 * `/api/unsubscribe`, `/api/info`): every route on one node with real clients, bad input
 * answered 4xx, and the cluster-wide actions on three nodes over one real Redis.
 */
import { BayouClient, longPolling, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BayouServer, createServer, serverApi } from '../src/index.js';
import {
  type Cluster,
  disconnectAll,
  eventually,
  redisPerFile,
  requireRedis,
  startCluster,
} from './cluster-helpers.js';
import { presenceAuth, token } from './presence-helpers.js';
import { TestClient } from './test-client.js';

const KEY = 'server-api-key-of-some-length';
const clients: BayouClient[] = [];

function client(
  url: string,
  user: string,
  transport: 'websocket' | 'long-polling' = 'websocket',
): BayouClient {
  const c = new BayouClient(url, {
    transports: [transport === 'websocket' ? websocket : longPolling],
    WebSocket: WebSocket as unknown as WebSocketConstructor,
    token: () => token({ sub: user }),
    minReconnectDelay: 50,
    maxReconnectDelay: 200,
  });
  clients.push(c);
  c.connect().catch(() => undefined);
  return c;
}

async function api(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  key: string | null = KEY,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

afterEach(async () => {
  await disconnectAll(clients);
});

describe('the server API on one node', () => {
  let server: BayouServer;
  let base: string;
  beforeAll(async () => {
    server = await createServer({
      host: '127.0.0.1',
      port: 0,
      sweepInterval: 50,
      auth: presenceAuth,
      trustClientSession: true,
      historySize: 10,
    });
    await server.app.register(serverApi, { apiKey: KEY });
    base = await server.listen();
  });
  afterAll(() => server.close());

  it('answers 401 without the key or with a wrong one, 404 when no key is configured', async () => {
    expect((await api(base, 'GET', '/api/info', undefined, null)).status).toBe(401);
    expect((await api(base, 'GET', '/api/info', undefined, 'x'.repeat(20))).status).toBe(401);
    const off = await createServer({ host: '127.0.0.1', port: 0 });
    await off.app.register(serverApi, {});
    try {
      const r = await api(await off.listen(), 'GET', '/api/info');
      expect(r.status).toBe(404);
      expect(r.json.error).toMatch(/no API key/);
    } finally {
      await off.close();
    }
  });

  it('lists presence, history, channels and info', async () => {
    const ada = client(`${base}/bayeux`, 'ada');
    await ada.subscribe('/chat/api', () => undefined).ready;
    await ada.subscribe('/news', () => undefined).ready;
    for (let i = 0; i < 3; i++) await server.bayou.publish('/news', { i });

    const presence = await api(base, 'GET', '/api/presence?channel=/chat/api');
    expect(presence.status).toBe(200);
    expect(presence.json.members).toEqual([expect.objectContaining({ user: 'ada' })]);

    const history = await api(base, 'GET', '/api/history?channel=/news&limit=2');
    expect(history.status).toBe(200);
    expect((history.json.messages as { data: unknown }[]).map((m) => m.data)).toEqual([{ i: 1 }, { i: 2 }]);

    const channels = await api(base, 'GET', '/api/channels');
    expect(channels.json.channels).toEqual(
      expect.arrayContaining([
        { channel: '/chat/api', subscribers: 1 },
        { channel: '/news', subscribers: 1 },
      ]),
    );
    const info = await api(base, 'GET', '/api/info');
    expect(info.json).toMatchObject({ sessions: 1, nodes: [{ nodeId: server.bayou.nodeId, sessions: 1 }] });
    expect(typeof info.json.version).toBe('string');
  });

  it('answers bad input with 400 and a message saying what to fix', async () => {
    const bad: [method: 'GET' | 'POST', path: string, body: unknown, match: RegExp][] = [
      ['GET', '/api/presence', undefined, /"channel" is required/],
      ['GET', '/api/presence?channel=/chat/*', undefined, /not a broadcast channel/],
      ['GET', '/api/presence?channel=/news', undefined, /no presence is kept/],
      ['GET', '/api/history?channel=/news&limit=0', undefined, /"limit"/],
      ['GET', '/api/history?channel=/news&limit=abc', undefined, /"limit"/],
      ['GET', '/api/channels?limit=-1', undefined, /"limit"/],
      ['POST', '/api/disconnect', {}, /exactly one of "user"/],
      ['POST', '/api/disconnect', { user: 'a', clientId: 'b' }, /exactly one of "user"/],
      ['POST', '/api/disconnect', { user: 42 }, /"user" must be/],
      ['POST', '/api/disconnect', [1, 2], /JSON object/],
      ['POST', '/api/unsubscribe', { user: 'ada' }, /"channel" is required/],
      ['POST', '/api/unsubscribe', { user: 'ada', channel: '/meta/connect' }, /not a broadcast channel/],
    ];
    for (const [method, path, body, match] of bad) {
      const r = await api(base, method, path, body);
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
      expect(String(r.json.error)).toMatch(match);
    }
    const malformed = await api(base, 'POST', '/api/disconnect', '{"user":');
    expect(malformed.status).toBe(400);
  });

  it('unsubscribes a user from a channel and ends its sessions, telling them not to reconnect', async () => {
    const ada = client(`${base}/bayeux`, 'ada', 'long-polling');
    const bob = client(`${base}/bayeux`, 'bob');
    const got: Record<string, unknown[]> = { ada: [], bob: [] };
    await ada.subscribe('/news', (m) => got.ada?.push(m.data)).ready;
    await bob.subscribe('/news', (m) => got.bob?.push(m.data)).ready;
    const r = await api(base, 'POST', '/api/unsubscribe', { user: 'ada', channel: '/news' });
    expect(r.json).toEqual({ unsubscribed: 1 });
    await server.bayou.publish('/news', 'after');
    await ada.subscribe('/chat/marker', (m) => got.ada?.push(m.data)).ready;
    await server.bayou.publish('/chat/marker', 'marker');
    await eventually(() => expect(got.ada).toEqual(['marker']));
    expect(got.bob).toEqual(['after']);

    let handshakes = 0;
    ada.use({
      incoming(m) {
        if (m.channel === '/meta/handshake') handshakes++;
        return m;
      },
    });
    const d = await api(base, 'POST', '/api/disconnect', { user: 'ada' });
    expect(d.json).toEqual({ disconnected: 1 });
    await eventually(() => expect(ada.state).toBe('disconnected'));
    expect(handshakes).toBe(0);
    expect(bob.state).toBe('connected');
  });

  it("closes a disconnected client's WebSocket at once, after the frame that tells it not to reconnect", async () => {
    const raw = new TestClient(base, 'websocket');
    await raw.connect({ auth: { token: await token({ sub: 'cy' }) } });
    // Its connect loop sent the next connect before this: once this is answered, that one is held.
    await raw.subscribe('/held');
    const closed = raw.closed();
    const d = await api(base, 'POST', '/api/disconnect', { clientId: raw.clientId });
    expect(d.json).toEqual({ disconnected: 1 });
    // Before, the socket stayed open until the handshake-timeout sweep closed it (about 19 s).
    const code = await Promise.race([closed, new Promise((r) => setTimeout(r, 3_000, 'still open'))]);
    expect(code).toBe(1000);
    // That frame came before the close: it is among what the client received.
    const told = raw.waitFor(
      (m) =>
        m.channel === '/meta/connect' &&
        (m.advice as { reconnect?: string } | undefined)?.reconnect === 'none',
    );
    const late = new Promise((r) => setTimeout(r, 1_000, 'not told'));
    expect(await Promise.race([told.then(() => 'told'), late])).toBe('told');
  });
});

requireRedis('the server API on a Redis cluster');

describe('the server API on a 3-node Redis cluster', () => {
  const redis = redisPerFile();
  let cluster: Cluster | null = null;
  afterEach(async () => {
    await disconnectAll(clients);
    await cluster?.close();
    cluster = null;
  });

  it('disconnects a user on every node, unsubscribes and counts cluster-wide, lists every node', async () => {
    cluster = await startCluster(redis(), 3, { auth: presenceAuth, trustClientSession: true }, (server) => {
      void server.app.register(serverApi, { apiKey: KEY });
    });
    const c = cluster;
    const adas = c.nodes.map((n, i) =>
      client(`${n.base}/bayeux`, 'ada', i === 1 ? 'long-polling' : 'websocket'),
    );
    const bob = client(`${c.nodes[2]?.base}/bayeux`, 'bob');
    await Promise.all([...adas, bob].map((x) => x.subscribe('/chat/c1', () => undefined).ready));

    const channels = await api(c.nodes[0]?.base as string, 'GET', '/api/channels');
    expect(channels.json.channels).toContainEqual({ channel: '/chat/c1', subscribers: 4 });
    const info = await api(c.nodes[1]?.base as string, 'GET', '/api/info');
    expect((info.json.nodes as unknown[]).length).toBe(3);
    expect(info.json.sessions).toBe(4);

    const un = await api(c.nodes[1]?.base as string, 'POST', '/api/unsubscribe', {
      user: 'bob',
      channel: '/chat/c1',
    });
    expect(un.json).toEqual({ unsubscribed: 1 });

    const d = await api(c.nodes[0]?.base as string, 'POST', '/api/disconnect', { user: 'ada' });
    expect(d.json).toEqual({ disconnected: 3 });
    await eventually(() => {
      for (const a of adas) expect(a.state).toBe('disconnected');
    });
    const after = await api(c.nodes[2]?.base as string, 'GET', '/api/presence?channel=/chat/c1');
    expect(after.json.members).toEqual([]);
    expect(bob.state).toBe('connected');
  });
});
