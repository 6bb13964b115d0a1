import type { AddressInfo } from 'node:net';
import { constants, inflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import {
  boundDeflateOffers,
  compressedFrame,
  compressedFrameOfParts,
  deflateMessage,
  perMessageDeflate,
} from './compression.js';
import { type LinkHost, type WebSocketLink, webSocketLinkClass } from './ws-link.js';

const Link = webSocketLinkClass({ deflateThreshold: 100 } as LinkHost);

import { releaseInflater } from './ws-fast-path.js';

const TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);

describe('deflateMessage', () => {
  it('gives a permessage-deflate payload: raw DEFLATE that inflates back once the sync-flush tail is put back', () => {
    const text = JSON.stringify([{ channel: '/a', data: { rows: 'x'.repeat(3000) } }]);
    const deflated = deflateMessage(text);
    expect(deflated.length).toBeLessThan(200);
    const back = inflateRawSync(Buffer.concat([deflated, TAIL]), { finishFlush: constants.Z_SYNC_FLUSH });
    expect(back.toString()).toBe(text);
  });

  it('compresses a shared payload once for the sockets it goes to in a row', () => {
    const shared = Buffer.from('y'.repeat(2000));
    const first = compressedFrame(shared);
    expect(compressedFrame(shared)).toBe(first);
    expect(compressedFrame(Buffer.from('y'.repeat(2000)))).not.toBe(first);
    expect(first[0]).toBe(0xc1);
  });
});

describe('compressedFrameOfParts', () => {
  it('deflates a shared head once and ends each frame with its own tail, stored: the frame inflates to both', () => {
    const head = Buffer.from(`[${JSON.stringify({ channel: '/t', data: 'z'.repeat(1500) })},`);
    const frames = [1, 2].map((n) =>
      compressedFrameOfParts(head, `{"channel":"/meta/ack","ext":{"ack":${n}}}]`),
    );
    for (const [i, frame] of frames.entries()) {
      expect(frame[0]).toBe(0xc1);
      // 2-byte header (payload < 126) or 4 (< 65536).
      const payload = frame.subarray(frame[1] === 126 ? 4 : 2);
      const text = inflateRawSync(Buffer.concat([payload, TAIL]), {
        finishFlush: constants.Z_SYNC_FLUSH,
      }).toString();
      expect(JSON.parse(text).at(-1)).toEqual({ channel: '/meta/ack', ext: { ack: i + 1 } });
      expect(text.startsWith(head.toString())).toBe(true);
    }
    // The same deflated head in both: only the tail differs.
    const [a, b] = frames as [Buffer, Buffer];
    expect(a.length).toBe(b.length);
    expect(a.subarray(0, a.length - 4).equals(b.subarray(0, b.length - 4))).toBe(true);
    expect(a.equals(b)).toBe(false);
  });
});

describe('boundDeflateOffers', () => {
  it.each([
    ['permessage-deflate; client_max_window_bits', 'permessage-deflate; client_max_window_bits'],
    ['permessage-deflate; client_max_window_bits=15', 'permessage-deflate; client_max_window_bits=15'],
    ['permessage-deflate', undefined],
    ['permessage-deflate; client_max_window_bits=9', undefined],
    ['permessage-deflate; client_max_window_bits; server_max_window_bits=10', undefined],
    [
      'permessage-deflate; server_max_window_bits=9; client_max_window_bits, permessage-deflate; client_max_window_bits',
      ' permessage-deflate; client_max_window_bits',
    ],
    ['x-webkit-deflate-frame', undefined],
  ])('keeps of %j what a 2^11 window both ways can accept', (offer, kept) => {
    const headers: Record<string, string> = { 'sec-websocket-extensions': offer };
    boundDeflateOffers(headers);
    expect(headers['sec-websocket-extensions']).toBe(kept);
  });
});

describe('a compressing link', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('sends compressed frames the client reads, without a compressor of its own', async () => {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      WebSocket: Link,
      perMessageDeflate: perMessageDeflate({ compression: true, compressionThreshold: 100 }),
    });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const linked = new Promise<WebSocketLink>((resolve) => wss.once('connection', resolve));
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    closers.push(async () => {
      client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    });
    const received: string[] = [];
    client.on('message', (data) => received.push(String(data)));
    await new Promise<void>((resolve) => client.once('open', resolve));
    const link = await linked;
    link.opened(link.request);
    expect(link.deflates).toBe(true);
    const big = `[${'"abc",'.repeat(200)}"end"]`;
    link.sendText(big);
    link.sendText(Buffer.from(big));
    link.sendText('["small"]');
    await new Promise<void>((resolve) => client.on('message', () => received.length === 3 && resolve()));
    expect(received).toEqual([big, big, '["small"]']);
    const ext = (link as unknown as { _extensions: Record<string, { _deflate: unknown }> })._extensions;
    expect(ext['permessage-deflate']?._deflate).toBeNull();
  });

  it('lets go of the inflater after each message from the client, and inflates the next with a new one', async () => {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      WebSocket: Link,
      perMessageDeflate: perMessageDeflate({ compression: true, compressionThreshold: 100 }),
    });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const linked = new Promise<WebSocketLink>((resolve) => wss.once('connection', resolve));
    // Compressing everything it sends, as browsers do.
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, {
      perMessageDeflate: { threshold: 0 },
    });
    closers.push(async () => {
      client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    });
    await new Promise<void>((resolve) => client.once('open', resolve));
    const link = await linked;
    const ext = (link as unknown as { _extensions: Record<string, { _inflate: unknown; params: object }> })
      ._extensions['permessage-deflate'];
    expect(ext?.params).toMatchObject({ client_no_context_takeover: true });
    const got: string[] = [];
    const inflaterAfter: unknown[] = [];
    link.on('message', (data) => {
      releaseInflater(link);
      got.push(String(data));
      inflaterAfter.push(ext?._inflate);
    });
    const sent = ['[1]', `[${'"same text again",'.repeat(100)}0]`, '[3]'];
    for (const m of sent) client.send(m);
    await new Promise<void>((resolve) => link.on('message', () => got.length === 3 && resolve()));
    expect(got).toEqual(sent);
    expect(inflaterAfter).toEqual([null, null, null]);
  });
});
