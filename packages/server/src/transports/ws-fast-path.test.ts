/**
 * The `ws` internals the WebSocket fast path relies on (ws-fast-path.ts), checked on a real
 * `ws` server and client: should a `ws` upgrade rename or change them, this fails here, not
 * as frames written out of order in production.
 */
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { eventually } from '../../../../scripts/eventually.mjs';
import {
  forgetPeerAddress,
  releaseReceiveQueue,
  SENDER_IDLE,
  senderIdle,
  socketOf,
  type WsInternals,
} from './ws-fast-path.js';
import { type LinkHost, type WebSocketLink, webSocketLinkClass } from './ws-link.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server link (the class the transport uses) and the client on its other end, collecting what arrives. */
async function pair(): Promise<{ link: WebSocketLink; client: WebSocket; received: string[] }> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
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
});
