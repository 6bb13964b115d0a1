/**
 * `permessage-deflate` (the `compression` option) on a real server with `ws` clients:
 * off by default, bounded when on (window 2^11 both ways, no server context takeover),
 * shared frames compressed once, and a client frame inflating past `maxPayloadBytes`
 * closed with 1009 while the server goes on.
 */
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Started, startServer } from './start-server.js';
import { TestClient } from './test-client.js';

let started: Started | null = null;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await started?.server.close();
  started = null;
});

function wsUrl(base: string): string {
  return `${base.replace(/^http/, 'ws')}/bayeux`;
}

type Msg = Record<string, unknown>;

interface Opened {
  ws: WebSocket;
  socket: Socket;
  /** Every message received, in order. */
  messages: Msg[];
  /** Resolves with the first message received (or, later, arriving) that `pred` accepts. */
  until(pred: (m: Msg) => boolean): Promise<Msg>;
}

/** A `ws` client (offering `permessage-deflate`, as `ws` does by default) that collects what it receives. */
async function open(base: string): Promise<Opened> {
  const ws = new WebSocket(wsUrl(base));
  sockets.push(ws);
  const messages: Msg[] = [];
  const waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  ws.on('message', (data) => {
    for (const m of JSON.parse(String(data)) as Msg[]) {
      messages.push(m);
      for (const w of waiters.splice(0)) {
        if (w.pred(m)) w.resolve(m);
        else waiters.push(w);
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const until = (pred: (m: Msg) => boolean): Promise<Msg> => {
    const seen = messages.find(pred);
    return seen !== undefined
      ? Promise.resolve(seen)
      : new Promise((resolve) => waiters.push({ pred, resolve }));
  };
  return { ws, socket: (ws as unknown as { _socket: Socket })._socket, messages, until };
}

/**
 * Handshakes, connects and subscribes to `channel`; resolves on the subscribe reply. With
 * `numbered` it asks for numbered frames, as `@bayou/client` does by default.
 */
async function subscribe(c: Opened, channel: string, numbered = false): Promise<void> {
  const replyTo = (id: string) => c.until((m) => m.id === id);
  const ext = numbered ? { ext: { ack: true, bayou: { ackFrames: true } } } : {};
  c.ws.send(
    JSON.stringify([
      {
        id: 'h',
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: ['websocket'],
        ...ext,
      },
    ]),
  );
  const clientId = (await replyTo('h')).clientId as string;
  c.ws.send(JSON.stringify([{ id: 'c', channel: '/meta/connect', clientId, connectionType: 'websocket' }]));
  c.ws.send(JSON.stringify([{ id: 's', channel: '/meta/subscribe', clientId, subscription: channel }]));
  expect(await replyTo('s')).toMatchObject({ successful: true });
}

describe('permessage-deflate', () => {
  it('is not negotiated by default', async () => {
    started = await startServer();
    const { ws } = await open(started.base);
    expect(ws.extensions).toBe('');
  });

  it('is negotiated with --compression, bounded to a 2^11 window and no server context takeover', async () => {
    started = await startServer({ compression: true });
    const { ws } = await open(started.base);
    const offer = ws.extensions;
    expect(ws.extensions).toBe('permessage-deflate');
    const accepted = (ws as unknown as { _extensions: Record<string, { params: Record<string, unknown> }> })
      ._extensions['permessage-deflate']?.params;
    expect(offer).not.toBe('');
    expect(accepted).toMatchObject({
      server_no_context_takeover: true,
      server_max_window_bits: 11,
      client_max_window_bits: 11,
    });
  });

  it.each([
    ['cannot bound its own window', 'permessage-deflate'],
    [
      'asks for a smaller server window',
      'permessage-deflate; client_max_window_bits; server_max_window_bits=9',
    ],
  ])('connects a client that %s, uncompressed', async (_, offer) => {
    started = await startServer({ compression: true });
    const port = Number(new URL(started.base).port);
    const extensions = await new Promise<string | undefined>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        path: '/bayeux',
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Extensions': offer,
        },
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.headers['sec-websocket-extensions'] as string | undefined);
      });
      req.on('response', (res) => reject(new Error(`answered ${res.statusCode}, not upgraded`)));
      req.on('error', reject);
      req.end();
    });
    expect(extensions).toBeUndefined();
  });

  it('delivers a large publication compressed (fewer bytes on the wire) and a small one as it is', async () => {
    started = await startServer({ compression: true });
    const readers = [await open(started.base), await open(started.base)];
    for (const r of readers) await subscribe(r, '/feed');
    const before = readers.map((r) => r.socket.bytesRead);
    const rows = Array.from({ length: 40 }, (_, i) => ({ symbol: `SYM${i}`, bid: 100 + i, ask: 101 + i }));
    started.server.bayou.publish('/feed', { rows });
    const json = JSON.stringify({ rows }).length;
    for (const [i, r] of readers.entries()) {
      expect((await r.until((m) => m.channel === '/feed')).data).toEqual({ rows });
      expect(r.socket.bytesRead - (before[i] as number)).toBeLessThan(json / 3);
    }
    // Under the threshold: the frame goes as it is (RSV1 clear), still read by the client.
    started.server.bayou.publish('/feed', { small: true });
    const small = await readers[0]?.until((m) => m.channel === '/feed' && (m.data as Msg).small === true);
    expect(small?.data).toEqual({ small: true });
  });

  it('gives sessions with numbered frames the same messages, compressed, each frame with its own marker', async () => {
    started = await startServer({ compression: true });
    const readers = [await open(started.base), await open(started.base), await open(started.base)];
    for (const r of readers) await subscribe(r, '/feed', true);
    const before = readers.map((r) => r.socket.bytesRead);
    const rows = Array.from({ length: 40 }, (_, i) => ({ symbol: `SYM${i}`, bid: 100 + i, ask: 101 + i }));
    // Two publications in one turn: one frame of both for every session, as many share it.
    const bayou = started.server.bayou;
    bayou.publish('/feed', { rows, n: 1 });
    bayou.publish('/feed', { rows, n: 2 });
    for (const [i, r] of readers.entries()) {
      await r.until((m) => m.channel === '/feed' && (m.data as Msg).n === 2);
      const from = r.messages.findIndex((m) => m.channel === '/feed');
      const seen = r.messages.slice(from).filter((m) => m.channel === '/feed' || m.channel === '/meta/ack');
      expect(seen.map((m) => (m.channel === '/feed' ? (m.data as Msg).n : 'ack'))).toEqual([1, 2, 'ack']);
      expect(seen[0]).toMatchObject({ data: { rows } });
      expect(seen[2]?.ext).toMatchObject({ ack: expect.any(Number) });
      expect(r.socket.bytesRead - (before[i] as number)).toBeLessThan(JSON.stringify({ rows }).length / 2);
    }
  });

  it('closes a socket whose compressed frame inflates past maxPayloadBytes with 1009; the server goes on', async () => {
    started = await startServer({ compression: true, maxPayloadBytes: 16 * 1024 });
    const { ws } = await open(started.base);
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const bomb = JSON.stringify([{ channel: '/x', data: 'a'.repeat(1024 * 1024) }]);
    const wire = (ws as unknown as { _socket: Socket })._socket;
    const sentBefore = wire.bytesWritten;
    ws.send(bomb);
    expect(await closed).toBe(1009);
    // What crossed the wire was far under the bound: it was the inflated size that was refused.
    expect(wire.bytesWritten - sentBefore).toBeLessThan(16 * 1024);
    const next = new TestClient(started.base, 'websocket');
    expect(await next.connect()).toMatchObject({ successful: true });
    await next.close();
  });
});
