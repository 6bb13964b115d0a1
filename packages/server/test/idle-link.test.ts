/**
 * What an idle WebSocket costs beyond `ws` and Node (the idle floor, #36), on the real
 * transport: no closure of its own (ws's client tracking and auto-pong each kept one a
 * socket), a listener map V8 keeps as a fast object, one shared extensions object — and
 * the behaviour these stood for kept: a client's ping answered with its payload, a client
 * that pings but does not read ended as a slow consumer, the open links counted and closed.
 */
import { setFlagsFromString } from 'node:v8';
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import { LINK_EVENTS, socketOf, type WsInternals } from '../src/transports/ws-fast-path.js';
import type { WebSocketLink } from '../src/transports/ws-link.js';
import { type Started, startServer } from './start-server.js';
import { eventually, type Msg } from './test-client.js';

let started: Started | null = null;
const clients: WebSocket[] = [];

afterEach(async () => {
  for (const ws of clients.splice(0)) ws.terminate();
  await started?.server.close();
  started = null;
});

/** A raw client with a handshaken session, and the server's link it is on. */
async function idleSession(s: Started): Promise<{ ws: WebSocket; link: WebSocketLink }> {
  const ws = new WebSocket(`${s.base.replace(/^http/, 'ws')}/bayeux`);
  clients.push(ws);
  const replies: Msg[] = [];
  ws.on('message', (data) => replies.push(...(JSON.parse(String(data)) as Msg[])));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(
    JSON.stringify([{ channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'] }]),
  );
  await eventually(() => replies.length > 0, 5000, 'the handshake reply');
  const clientId = replies[0]?.clientId as string;
  const session = s.server.bayou.session(clientId) as unknown as { carrier: WebSocketLink };
  const link = session.carrier;
  expect(link.readyState).toBe(WebSocket.OPEN);
  return { ws, link };
}

it('holds no closure of its own, a fast listener map with one listener an event, one extensions object for all', async () => {
  started = await startServer();
  const a = await idleSession(started);
  const b = await idleSession(started);
  for (const link of [a.link, b.link]) {
    expect(Object.entries(link).filter(([, v]) => typeof v === 'function')).toEqual([]);
    for (const event of LINK_EVENTS) expect(link.listenerCount(event)).toBe(1);
    // ws's alone: the connection guard counts the socket out when the link closes.
    expect(socketOf(link).listenerCount('close')).toBe(1);
    expect(hasFastProperties((link as unknown as WsInternals)._events)).toBe(true);
  }
  expect((a.link as unknown as WsInternals)._extensions).toBe((b.link as unknown as WsInternals)._extensions);
});

it("answers a client's ping with its payload, and counts and closes the open links", async () => {
  started = await startServer();
  const { server } = started;
  const a = await idleSession(started);
  const b = await idleSession(started);
  const pong = new Promise<string>((resolve) => a.ws.once('pong', (data) => resolve(String(data))));
  a.ws.ping('are you there');
  expect(await pong).toBe('are you there');
  expect(await openWebSockets(started)).toBe(2);
  expect(await metric(started, 'bayou_connections_open')).toBe(2);
  a.ws.close();
  await eventually(async () => (await openWebSockets(started as Started)) === 1, 5000, 'one open link');
  // The connection guard counted it out too (it handed its close over to the link).
  expect(await metric(started, 'bayou_connections_open')).toBe(1);
  const closed = new Promise<number>((resolve) => b.ws.once('close', resolve));
  await server.close();
  started = null;
  // Told to go away (1001) by the close: the transport reached it among its open links.
  expect(await closed).toBe(1001);
});

it('ends the link of a client that pings while more than maxBufferedBytes wait unsent to it', async () => {
  started = await startServer({ maxBufferedBytes: 64 });
  const { ws, link } = await idleSession(started);
  const pong = new Promise<string>((resolve) => ws.once('pong', (data) => resolve(String(data))));
  ws.ping('first');
  expect(await pong).toBe('first');
  // What a client that stops reading leaves behind: bytes the socket cannot send.
  const socket = socketOf(link);
  socket.cork();
  socket.write(Buffer.alloc(100));
  expect(link.bufferedAmount).toBeGreaterThan(64);
  const closed = new Promise<number>((resolve) => ws.once('close', resolve));
  let pongs = 0;
  ws.on('pong', () => pongs++);
  ws.ping('second');
  expect(await closed).toBe(1006);
  expect(pongs).toBe(0);
});

it("drops a pong read alone (a heartbeat's answer, all an idle socket reads) before ws's receiver", async () => {
  started = await startServer();
  const { ws, link } = await idleSession(started);
  const receiver = (link as unknown as WsInternals)._receiver;
  const queue = receiver._buffers;
  let pongs = 0;
  link.on('pong', () => pongs++);
  const read = socketOf(link).bytesRead;
  ws.pong();
  await eventually(() => socketOf(link).bytesRead === read + 6, 5000, 'the pong read');
  // Read (the heartbeat counts it) but never handed to ws: no pong event, the queue untouched.
  expect(pongs).toBe(0);
  expect(receiver._buffers).toBe(queue);
  expect(receiver._bufferedBytes).toBe(0);
});

it('hands ws a pong read with more, and the bytes of a pong inside a frame, and lets ws take its listener off', async () => {
  started = await startServer();
  const { ws, link } = await idleSession(started);
  const replies: string[] = [];
  ws.on('message', (data) => replies.push(String(data)));
  let pongs = 0;
  link.on('pong', () => pongs++);
  const raw = socketOf(ws);
  // A pong and a text frame `x` in one read (masks of zeros): the pong reaches ws, the text the transport.
  raw.write(Buffer.from([0x8a, 0x80, 0, 0, 0, 0, 0x81, 0x81, 0, 0, 0, 0, 0x78]));
  await eventually(() => replies.length === 1, 5000, "the answer to 'x'");
  expect(pongs).toBe(1);
  expect(replies[0]).toContain('"successful":false');
  // A binary frame's header, then its six bytes, which look like a pong read alone: a payload all the same.
  const read = socketOf(link).bytesRead;
  raw.write(Buffer.from([0x82, 0x86, 0, 0, 0, 0]));
  await eventually(() => socketOf(link).bytesRead === read + 6, 5000, 'the header read');
  raw.write(Buffer.from([0x8a, 0x80, 1, 2, 3, 4]));
  await eventually(() => replies.length === 2, 5000, 'the answer to the binary frame');
  expect(pongs).toBe(1);
  // ws takes its own listener off (on a close frame, an error): the one in its place goes with it.
  const socket = socketOf(link);
  const [wsListener] = socket.listeners('data');
  expect(socket.rawListeners('data')[0]).not.toBe(wsListener);
  socket.removeListener('data', wsListener as (...args: unknown[]) => void);
  expect(socket.listenerCount('data')).toBe(0);
});

it("reads every link's socket into one shared buffer and hands ws copies: frames larger than it, from two links at once, arrive whole", async () => {
  started = await startServer({ maxPayloadBytes: 512 * 1024 });
  const a = await idleSession(started);
  const b = await idleSession(started);
  const readBuffer = (link: WebSocketLink) => {
    const socket = socketOf(link) as unknown as Record<symbol, unknown>;
    const key = Object.getOwnPropertySymbols(socket).find((k) => k.description === 'kBuffer');
    return key === undefined ? undefined : socket[key];
  };
  const shared = readBuffer(a.link);
  expect(Buffer.isBuffer(shared)).toBe(true);
  expect(readBuffer(b.link)).toBe(shared);
  const answers = (ws: WebSocket) => {
    const got: string[] = [];
    ws.on('message', (data) => got.push(String(data)));
    return got;
  };
  const [gotA, gotB] = [answers(a.ws), answers(b.ws)];
  // A handshake padded past the shared buffer's 64 KiB, several reads each, both sockets at once.
  const padded = (pad: string) =>
    JSON.stringify([
      { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'], ext: { pad } },
    ]);
  a.ws.send(padded('a'.repeat(200_000)));
  b.ws.send(padded('b'.repeat(150_000)));
  await eventually(() => gotA.length === 1 && gotB.length === 1, 10_000, 'both handshake replies');
  for (const got of [gotA, gotB]) expect(JSON.parse(got[0] as string)[0]).toMatchObject({ successful: true });
});

const openWebSockets = (s: Started) => metric(s, 'bayou_connections{transport="websocket"}');

async function metric(s: Started, name: string): Promise<number> {
  const text = (await s.server.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** V8's own answer (`%HasFastProperties`): whether `o` keeps its properties in fields rather than a dictionary. */
function hasFastProperties(o: object): boolean {
  setFlagsFromString('--allow-natives-syntax');
  return new Function('o', 'return %HasFastProperties(o)')(o) as boolean;
}
