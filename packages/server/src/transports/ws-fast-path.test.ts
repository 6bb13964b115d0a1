/**
 * The `ws` internals the WebSocket fast path relies on (ws-fast-path.ts), checked on a real
 * `ws` server and client: should a `ws` upgrade rename or change them, this fails here, not
 * as frames written out of order in production.
 */
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { eventually } from '../../../../scripts/eventually.mjs';
import {
  forgetPeerAddress,
  LINK_EVENTS,
  releaseReceiveQueue,
  SENDER_IDLE,
  senderIdle,
  shapeListeners,
  shareNoExtensions,
  socketOf,
  type WsInternals,
} from './ws-fast-path.js';
import { type LinkHost, type WebSocketLink, webSocketLinkClass } from './ws-link.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server link (the class the transport uses) and the client on its other end, collecting what arrives. */
async function pair({
  clientTracking = true,
} = {}): Promise<{ link: WebSocketLink; client: WebSocket; received: string[] }> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    clientTracking,
    WebSocket: webSocketLinkClass({ deflateThreshold: 100 } as LinkHost),
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const linked = new Promise<WebSocketLink>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const received: string[] = [];
  client.on('message', (data, isBinary) => received.push(`${isBinary ? 'binary' : 'text'} ${String(data)}`));
  closers.push(async () => {
    client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  await new Promise<void>((resolve) => client.once('open', resolve));
  return { link: await linked, client, received };
}

async function until(received: string[], count: number): Promise<void> {
  await eventually(() => received.length >= count, 5000, `${count} messages`);
}

describe('the ws internals of the WebSocket fast path', () => {
  it("still has the socket and the sender's state and queue, idle after the upgrade", async () => {
    const { link, client } = await pair();
    const internals = link as unknown as WsInternals;
    expect(internals._socket).toBeInstanceOf(Socket);
    // The very connection of the client: its local port is the socket's remote one.
    const clientSocket = (client as unknown as WsInternals)._socket;
    expect(socketOf(link).remotePort).toBe(clientSocket.localPort);
    expect(internals._sender).toBeTypeOf('object');
    expect(internals._sender._state).toBe(SENDER_IDLE);
    expect(Array.isArray(internals._sender._queue)).toBe(true);
    expect(internals._sender._queue).toHaveLength(0);
    expect(senderIdle(link)).toBe(true);
  });

  it('reads the sender as busy while it holds a Blob, and queues ws.send behind it', async () => {
    const { link, received } = await pair();
    const sender = (link as unknown as WsInternals)._sender;
    // ws reads a Blob asynchronously: until then its sender is not in its idle state.
    link.send(new Blob(['blob']));
    expect(sender._state).not.toBe(SENDER_IDLE);
    expect(senderIdle(link)).toBe(false);
    link.send('queued');
    expect(sender._queue.length).toBeGreaterThan(0);
    await until(received, 2);
    expect(received).toEqual(['binary blob', 'text queued']);
    expect(senderIdle(link)).toBe(true);
  });

  it('falls back to ws.send while the sender is busy, so frames keep their order', async () => {
    const { link, received } = await pair();
    link.send(new Blob(['first']));
    // Written straight to the socket these would overtake the Blob.
    expect(link.sendText('[2]')).toBe(3);
    expect(link.sendText(Buffer.from('[3]'))).toBe(3);
    await until(received, 3);
    // Once idle again, a frame goes straight to the socket: written before sendText returns.
    const socket = socketOf(link);
    const before = socket.bytesWritten + socket.writableLength;
    expect(link.sendText('[4]')).toBe(3);
    expect(socket.bytesWritten + socket.writableLength - before).toBe(5);
    await until(received, 4);
    expect(received).toEqual(['binary first', 'text [2]', 'text [3]', 'text [4]']);
  });

  it("lets go of the receiver's grown chunk queue once a message is in, and never of a chunk not yet read", async () => {
    const { link, client } = await pair();
    const receiver = (link as unknown as WsInternals)._receiver;
    expect(Array.isArray(receiver._buffers)).toBe(true);
    const got: string[] = [];
    /** What the queue held when each message was handed over, before and after the release. */
    const queued: Array<[number, boolean]> = [];
    link.on('message', (data) => {
      const before = receiver._buffers;
      releaseReceiveQueue(link);
      queued.push([before.length, receiver._buffers !== before]);
      got.push(String(data));
    });
    client.send('one');
    await eventually(() => got.length === 1, 5000, 'the first message');
    // Nothing left to read: a fresh array took the place of the one that grew.
    expect(queued[0]).toEqual([0, true]);
    expect(receiver._buffers).toHaveLength(0);
    // Two frames in one write (the second still queued when the first is handed over), then
    // a message larger than one read: every byte arrives, in order.
    const big = 'x'.repeat(300_000);
    (client as unknown as WsInternals)._socket.cork();
    client.send('two');
    client.send('three');
    (client as unknown as WsInternals)._socket.uncork();
    client.send(big);
    await eventually(() => got.length === 4, 5000, 'four messages');
    expect(got.slice(1, 3)).toEqual(['two', 'three']);
    expect(got[3]).toBe(big);
    expect(queued.some(([length, replaced]) => length > 0 && !replaced)).toBe(true);
    expect(queued.every(([length, replaced]) => replaced === (length === 0))).toBe(true);
  });

  it("drops the socket's cached peer address, and Node reads it again when asked", async () => {
    const { link, client } = await pair();
    const socket = socketOf(link);
    const cached = socket as unknown as { _peername?: { port: number } };
    const port = (client as unknown as WsInternals)._socket.localPort;
    expect(socket.remotePort).toBe(port);
    expect(cached._peername?.port).toBe(port);
    forgetPeerAddress(socket);
    expect(cached._peername).toBeUndefined();
    expect(socket.remoteAddress).toBe('127.0.0.1');
    expect(socket.remotePort).toBe(port);
  });

  it('keeps the listeners of a shaped listener map, a fast object whose prototype has no properties', async () => {
    // As the transport runs ws: no listener of its own on the socket.
    const { link, client } = await pair({ clientTracking: false });
    const internals = link as unknown as WsInternals;
    // ws's own map: a null-prototype object, which V8 holds in dictionary mode.
    expect(hasFastProperties(internals._events)).toBe(false);
    shapeListeners(link);
    const map = internals._events;
    expect(hasFastProperties(map)).toBe(true);
    expect(Object.getPrototypeOf(Object.getPrototypeOf(map))).toBeNull();
    expect(map.toString).toBeUndefined();
    expect(map.constructor).toBeUndefined();
    expect(Object.keys(map)).toEqual([...LINK_EVENTS]);
    const got: string[] = [];
    const one = (data: Buffer) => got.push(`one ${data}`);
    link.on('message', one);
    link.on('message', (data: Buffer) => got.push(`two ${data}`));
    link.once('close', () => got.push('closed'));
    expect(link.listenerCount('message')).toBe(2);
    link.off('message', one);
    expect(hasFastProperties(internals._events)).toBe(true);
    client.send('hi');
    await eventually(() => got.length > 0, 5000, 'the message');
    client.close();
    await eventually(() => got.includes('closed'), 5000, 'the close');
    expect(got).toEqual(['two hi', 'closed']);
    // A map that has listeners already is left alone.
    shapeListeners(link);
    expect(internals._events).toBe(map);
  });

  it('shares one extensions object among the sockets with none, read by the socket, its receiver and its sender', async () => {
    const a = await pair();
    const b = await pair();
    const internals = (link: WebSocketLink) => link as unknown as WsInternals;
    // ws's own: one object per socket, the same in its receiver and sender.
    expect(internals(a.link)._extensions).not.toBe(internals(b.link)._extensions);
    expect(internals(a.link)._receiver._extensions).toBe(internals(a.link)._extensions);
    expect(internals(a.link)._sender._extensions).toBe(internals(a.link)._extensions);
    shareNoExtensions(a.link);
    shareNoExtensions(b.link);
    const shared = internals(a.link)._extensions;
    expect(Object.isFrozen(shared)).toBe(true);
    for (const link of [a.link, b.link]) {
      expect(internals(link)._extensions).toBe(shared);
      expect(internals(link)._receiver._extensions).toBe(shared);
      expect(internals(link)._sender._extensions).toBe(shared);
      expect(link.extensions).toBe('');
    }
    a.link.send('still', { compress: true });
    a.client.send('works');
    const echoed = new Promise<string>((resolve) => a.link.once('message', (data) => resolve(String(data))));
    expect(await echoed).toBe('works');
    await until(a.received, 1);
    expect(a.received).toEqual(['text still']);
  });
});

/** V8's own answer (`%HasFastProperties`): whether `o` keeps its properties in fields rather than a dictionary. */
function hasFastProperties(o: object): boolean {
  setFlagsFromString('--allow-natives-syntax');
  return new Function('o', 'return %HasFastProperties(o)')(o) as boolean;
}
