/**
 * The idle heartbeat (`ext.bayou.heartbeat`): a session that negotiates it is kept alive on
 * its WebSocket by the server's pings (and `[]` frames) instead of a held connect answered
 * every `timeout`; a socket that stops answering is closed and its session expires within
 * `2 × heartbeatInterval + maxInterval` (plus the sweeps); clients that do not ask — CometD,
 * Faye, a long-poll — keep the held-connect cycle. Short intervals, waits on events.
 */
import { BayouClient, type WebSocketConstructor, websocket } from '@bayou/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { BayouServer } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { eventually, type Msg, TestClient } from './test-client.js';

const INTERVAL = 200;
const MAX_INTERVAL = 300;
const SWEEP = 50;
/** The documented bound: a silent socket is closed within two intervals (one slot, 100 ms, of the wheel late at most), its session expires maxInterval later (one sweep late at most). */
const BOUND = 2 * INTERVAL + 100 + MAX_INTERVAL + SWEEP;

let started: Started | null = null;
const cleanup: (() => unknown)[] = [];

afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
  await started?.server.close();
  started = null;
});

async function start(options: Parameters<typeof startServer>[0] = {}): Promise<Started> {
  started = await startServer({
    heartbeatInterval: INTERVAL,
    heartbeatTimeout: 60_000,
    maxInterval: MAX_INTERVAL,
    sweepInterval: SWEEP,
    timeout: 300,
    ...options,
  });
  return started;
}

/** Counts the `/meta/connect` messages the server receives. */
function countConnects(server: BayouServer): { count: number } {
  const counter = { count: 0 };
  server.bayou.addExtension({
    name: 'connect-counter',
    incoming(message) {
      if (message.channel === '/meta/connect') counter.count++;
      return undefined;
    },
  });
  return counter;
}

async function metric(server: BayouServer, name: string): Promise<number> {
  const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** A `ws` WebSocket class that counts the pings and `[]` frames its sockets receive. */
function countingWebSocket(): { WS: WebSocketConstructor; pings: number; empty: number } {
  const seen = { WS: null as unknown as WebSocketConstructor, pings: 0, empty: 0 };
  class Counting extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      this.on('ping', () => seen.pings++);
      this.on('message', (data) => {
        if (data.toString() === '[]') seen.empty++;
      });
    }
  }
  seen.WS = Counting as unknown as WebSocketConstructor;
  return seen;
}

/**
 * A raw `ws` socket with a heartbeat session: handshaken, connected, subscribed, and a
 * connect held unless `next` is false (the first answered, no next one sent).
 */
async function rawSession(
  base: string,
  autoPong: boolean,
  { interval = INTERVAL, next = true } = {},
): Promise<{ ws: WebSocket; pings: () => number; clientId: string; reply: (id: string) => Promise<Msg> }> {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/bayeux`, { autoPong });
  let pings = 0;
  ws.on('ping', () => pings++);
  const replies: Msg[] = [];
  ws.on('message', (data) => {
    for (const m of JSON.parse(data.toString()) as Msg[]) replies.push(m);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const reply = async (id: string) => {
    await eventually(() => replies.some((m) => m.id === id), 5000, `reply ${id}`);
    return replies.find((m) => m.id === id) as Msg;
  };
  ws.send(
    JSON.stringify([
      {
        id: 'h',
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: ['websocket'],
        ext: { bayou: { heartbeat: true } },
      },
    ]),
  );
  const hs = await reply('h');
  expect(hs.ext).toEqual({ bayou: { heartbeat: interval } });
  const clientId = hs.clientId as string;
  const connect = (id: string, advice?: object) =>
    ({
      id,
      channel: '/meta/connect',
      clientId,
      connectionType: 'websocket',
      ...(advice ? { advice } : {}),
    }) as const;
  ws.send(
    JSON.stringify([
      connect('c0', { timeout: 0 }),
      { id: 's', channel: '/meta/subscribe', clientId, subscription: '/idle' },
    ]),
  );
  const first = await reply('c0');
  expect(first.advice).toMatchObject({ timeout: 60_000 });
  await reply('s');
  if (next) ws.send(JSON.stringify([connect('c1')]));
  return { ws, pings: () => pings, clientId, reply };
}

describe('the idle heartbeat', () => {
  it('keeps a @bayou/client WebSocket session alive with pings, its connect held heartbeatTimeout, not timeout', async () => {
    const { server, base } = await start();
    const connects = countConnects(server);
    const seen = countingWebSocket();
    const grants: unknown[] = [];
    const client = new BayouClient(`${base}/bayeux`, { WebSocket: seen.WS, transports: [websocket] });
    cleanup.push(() => client.disconnect());
    client.use({
      incoming(m) {
        if (m.channel === '/meta/handshake')
          grants.push((m.ext?.bayou as { heartbeat?: unknown } | undefined)?.heartbeat);
        return m;
      },
    });
    await client.connect();
    await client.subscribe('/idle', () => {}).ready;
    expect(grants).toEqual([INTERVAL]);
    await eventually(() => seen.pings >= 1, 10_000, 'the first heartbeat');
    const before = connects.count;
    // Five more heartbeats: a second at least, over which a session on the plain cycle
    // (timeout 300 ms) would have sent three connects or more.
    await eventually(() => seen.pings >= 6 && seen.empty >= 6, 10_000, 'five more heartbeats');
    expect(connects.count - before).toBe(0);
    expect(await metric(server, 'bayou_heartbeat_sockets')).toBe(1);
    // The session lives on: a publication reaches it at once over the same socket.
    const got: unknown[] = [];
    await client.subscribe('/live', (m) => got.push(m.data)).ready;
    await server.bayou.publish('/live', 'still here');
    await eventually(() => got.length === 1, 5000, 'the delivery');
    expect(client.state).toBe('connected');
    // Its socket leaves the wheel with it: nothing of it is kept.
    await client.disconnect();
    await eventually(
      async () => (await metric(server, 'bayou_heartbeat_sockets')) === 0,
      5000,
      'off the wheel',
    );
  });

  it('closes a socket that stops answering pings and expires its session within the bound, freeing it', async () => {
    const { server, base } = await start();
    const removed: string[] = [];
    server.bayou.on('session:removed', (s) => removed.push(s.id));
    const alive = await rawSession(base, true);
    cleanup.push(() => alive.ws.terminate());
    const silent = await rawSession(base, false);
    cleanup.push(() => silent.ws.terminate());
    expect(server.bayou.subscriberCount('/idle')).toBe(2);
    const since = Date.now();
    const closed = new Promise<number>((resolve) => silent.ws.once('close', () => resolve(Date.now())));
    await eventually(() => removed.length === 1, 10_000, 'the silent session removed');
    const closedAt = await closed;
    const expiredAt = Date.now();
    // It was pinged, answered nothing, was closed, and then its session expired.
    expect(silent.pings()).toBeGreaterThanOrEqual(1);
    expect(closedAt).toBeLessThanOrEqual(expiredAt);
    // Within the bound (plus slack for a loaded machine: the order of events is the check).
    expect(expiredAt - since).toBeLessThan(BOUND + 3000);
    expect(await metric(server, 'bayou_heartbeat_timeouts_total')).toBe(1);
    expect(server.bayou.subscriberCount('/idle')).toBe(1);
    expect(await metric(server, 'bayou_heartbeat_sockets')).toBe(1);
    // The one that answers is pinged on and keeps its session, its connect still held.
    const pings = alive.pings();
    await eventually(() => alive.pings() >= pings + 2, 5000, 'two more heartbeats');
    expect(alive.ws.readyState).toBe(WebSocket.OPEN);
    expect(server.bayou.sessionCount).toBe(1);
  });

  it('keeps a heartbeat session whose next connect is late while its socket answers pings: maxInterval and two heartbeats', async () => {
    // maxInterval alone (200 ms) ends before the second ping (500–600 ms after the reply);
    // maxInterval + 2 heartbeats (800 ms) does not: a client busy reading a burst keeps its session.
    const { server, base } = await start({ heartbeatInterval: 300, maxInterval: 200 });
    const { ws, pings, clientId, reply } = await rawSession(base, true, { interval: 300, next: false });
    cleanup.push(() => ws.terminate());
    // No next connect: two heartbeats later the session is still there.
    await eventually(() => pings() >= 2, 5000, 'two heartbeats');
    expect(server.bayou.session(clientId)).toBeDefined();
    // And it does expire, maxInterval and two heartbeats after the reply: the next connect is told so.
    await eventually(() => server.bayou.sessionCount === 0, 5000, 'expired');
    ws.send(JSON.stringify([{ id: 'c1', channel: '/meta/connect', clientId, connectionType: 'websocket' }]));
    expect(await reply('c1')).toMatchObject({ successful: false, error: '402::session_unknown' });
  });

  it('says the true time since the reply when a heartbeat session expires with its socket open', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
    const { server, base } = await start({
      heartbeatInterval: 1000,
      maxInterval: 200,
      logger: { level: 'warn', stream },
    });
    // Before the handshake: the connect reply comes later, so this bounds the time since it.
    const before = Date.now();
    const { ws } = await rawSession(base, true, { interval: 1000, next: false });
    cleanup.push(() => ws.terminate());
    await eventually(() => server.bayou.sessionCount === 0, 10_000, 'expired');
    const elapsed = Date.now() - before;
    const said = lines.find((l) => String(l.msg).startsWith('session expired with its connection open'));
    // It waited maxInterval and two heartbeats (2,200 ms), and says so: not 2,000 ms more.
    expect(said?.sinceReplyMs).toBeGreaterThanOrEqual(2200);
    expect(said?.sinceReplyMs).toBeLessThanOrEqual(elapsed);
  });

  it('changes nothing for a client that does not ask, nor on long-polling', async () => {
    const { server, base } = await start();
    const connects = countConnects(server);
    // A plain Bayeux client over WebSocket (CometD's and Faye's ask for nothing either).
    const plain = new TestClient(base, 'websocket');
    cleanup.push(() => plain.close());
    const hs = await plain.handshake();
    expect(hs.ext).toBeUndefined();
    let pings = 0;
    (plain as unknown as { ws: WebSocket }).ws.on('ping', () => pings++);
    const first = await plain.request({
      channel: '/meta/connect',
      clientId: plain.clientId,
      connectionType: 'websocket',
    });
    expect(first.advice).toMatchObject({ timeout: 300 });
    const held = await plain.request({
      channel: '/meta/connect',
      clientId: plain.clientId,
      connectionType: 'websocket',
    });
    expect(held.advice).toMatchObject({ timeout: 300 });
    // Long-polling asks and is granted (a WebSocket may carry it later), but its connects keep `timeout`.
    const lp = new TestClient(base, 'long-polling');
    cleanup.push(() => lp.close());
    const lpHs = await lp.handshake({ bayou: { heartbeat: true } });
    expect(lpHs.ext).toEqual({ bayou: { heartbeat: INTERVAL } });
    const lpFirst = await lp.request({
      channel: '/meta/connect',
      clientId: lp.clientId,
      connectionType: 'long-polling',
    });
    expect(lpFirst.advice).toMatchObject({ timeout: 300 });
    // Two more held connects of the plain socket, each answered after `timeout`: never pinged.
    await plain.request({ channel: '/meta/connect', clientId: plain.clientId, connectionType: 'websocket' });
    await plain.request({ channel: '/meta/connect', clientId: plain.clientId, connectionType: 'websocket' });
    expect(pings).toBe(0);
    expect(connects.count).toBe(5);
    expect(await metric(server, 'bayou_heartbeat_sockets')).toBe(0);
  });

  it('is not granted when turned off (heartbeatInterval 0)', async () => {
    const { base } = await start({ heartbeatInterval: 0 });
    const c = new TestClient(base, 'websocket');
    cleanup.push(() => c.close());
    const hs = await c.handshake({ bayou: { heartbeat: true } });
    expect(hs.successful).toBe(true);
    expect(hs.ext).toBeUndefined();
    const first = await c.request({
      channel: '/meta/connect',
      clientId: c.clientId,
      connectionType: 'websocket',
    });
    expect(first.advice).toMatchObject({ timeout: 300 });
  });
});
