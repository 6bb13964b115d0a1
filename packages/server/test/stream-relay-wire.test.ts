/**
 * The wire of a stream relayed from another node (cluster/stream-relay.ts) as an
 * independent client reads docs/streaming.md: the same rules as a stream opened on the
 * session's own node (stream-wire.test.ts). Two nodes share an in-process bus; the session
 * lives on A, every stream is opened on B. After a cut, the frames not reported come again
 * with the numbers they first had, ahead of anything newer; no frame, padding included, is
 * larger than `streamMaxBytes`; the recycle notice ends with the ack marker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus, MemoryEngine } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { cookieOf, openStream, type StreamReader, streamConnect, streamingClient } from './stream-client.js';
import type { Msg, TestClient } from './test-client.js';

const nodes: Started[] = [];
const streams: StreamReader[] = [];
afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  for (const n of nodes.splice(0)) await n.server.close();
});

const FRAMES = { ack: true, bayou: { ackFrames: true } };
/** The padding a stream starts with: 2,048 spaces and a newline (docs/streaming.md, step 4). */
const PADDING_BYTES = 2049;

/** Two nodes on one bus: the session's owner and the node its streams are relayed from. */
async function twoNodes(options: { streamMaxBytes?: number } = {}): Promise<[Started, Started]> {
  const bus = new MemoryBus();
  const owner = await startServer({ engine: new MemoryEngine({ bus }), ...options });
  nodes.push(owner);
  const relay = await startServer({ engine: new MemoryEngine({ bus }), ...options });
  nodes.push(relay);
  return [owner, relay];
}

async function stream(
  base: string,
  client: TestClient,
  ext?: Record<string, unknown>,
): Promise<StreamReader> {
  const reader = await openStream(base, streamConnect(client, ext), cookieOf(client));
  streams.push(reader);
  await reader.waitFor((m) => m.channel === '/meta/connect');
  return reader;
}

/** The number a frame's ack marker carries (its last element), or `undefined`. */
const markerOf = (frame: Msg[]): number | undefined => {
  const last = frame.at(-1);
  return last?.channel === '/meta/ack' ? ((last.ext as { ack: number }).ack as number) : undefined;
};
const dataOf = (frame: Msg[]): unknown[] =>
  frame.filter((m) => m.channel === '/n' && m.successful === undefined).map((m) => m.data);

describe('a relayed stream’s wire (docs/streaming.md)', () => {
  it('resends each frame not reported with its own number, ahead of newer messages', async () => {
    const [a, b] = await twoNodes();
    const client = await streamingClient(a.base, 'streaming', FRAMES);
    await client.subscribe('/n');
    const first = await stream(b.base, client);
    for (const data of ['a', 'b', 'c']) {
      a.server.bayou.publish('/n', data);
      await first.waitFor((m) => m.data === data);
    }
    const sent = first.frames.filter((f) => dataOf(f).length > 0);
    expect(sent.map(dataOf)).toEqual([['a'], ['b'], ['c']]);
    const [na, nb, nc] = sent.map(markerOf) as number[];
    expect(na).toBeLessThan(nb as number);
    first.cut();
    await first.ended;
    a.server.bayou.publish('/n', 'd');
    for (let round = 0; round < 2; round++) {
      // Reported only 'a' (twice: a second cut resends the same frames, same numbers).
      const next = await stream(b.base, client, { ackFrames: na });
      await next.until(() => next.messages.some((m) => m.data === 'd'));
      const [reply, fb, fc, fd] = next.frames;
      expect((reply as Msg[]).map((m) => m.channel)).toEqual(['/meta/connect']);
      expect([dataOf(fb as Msg[]), markerOf(fb as Msg[])]).toEqual([['b'], nb]);
      expect([dataOf(fc as Msg[]), markerOf(fc as Msg[])]).toEqual([['c'], nc]);
      expect(dataOf(fd as Msg[])).toEqual(['d']);
      expect(markerOf(fd as Msg[])).toBeGreaterThan(nc as number);
      next.cut();
      await next.ended;
    }
  });

  it('keeps every frame, padding included, within streamMaxBytes; the recycle notice is numbered', async () => {
    const maxBytes = 4096;
    const [a, b] = await twoNodes({ streamMaxBytes: maxBytes });
    const client = await streamingClient(a.base, 'streaming', FRAMES);
    await client.subscribe('/n');
    // Queued while no stream is open: about 6.6 KB, more than one stream may hold.
    const published = Array.from({ length: 20 }, (_, i) => `${i}:${'x'.repeat(300)}`);
    for (const data of published) a.server.bayou.publish('/n', data);
    const received: unknown[] = [];
    const numbers: number[] = [];
    let recycles = 0;
    let last: number | undefined;
    for (let opened = 0; opened < 12 && received.length < published.length; opened++) {
      const reader = await stream(b.base, client, last === undefined ? undefined : { ackFrames: last });
      await reader.until(
        () => received.length + reader.messages.filter((m) => m.channel === '/n').length >= 20,
      );
      const [padding, ...lines] = reader.lines;
      expect(padding).toBe(' '.repeat(2048));
      for (const line of lines) {
        if (line.trim() === '') continue;
        // The first frame shares the stream with the padding: the two fit in streamMaxBytes.
        expect(PADDING_BYTES + Buffer.byteLength(line) + 1).toBeLessThanOrEqual(maxBytes);
      }
      for (const frame of reader.frames) {
        const n = markerOf(frame);
        // Every frame that carries messages is numbered; so is the recycle notice.
        if (dataOf(frame).length > 0) expect(n).toBeDefined();
        const head = frame[0] as Msg;
        if (head.channel === '/meta/connect' && head.id === undefined) {
          expect((head.advice as { interval?: number }).interval).toBe(0);
          expect(n).toBeDefined();
          recycles++;
        }
        if (n !== undefined) numbers.push(n);
        received.push(...dataOf(frame));
      }
      if (received.length < published.length) await reader.ended;
      last = numbers.at(-1);
    }
    // Each once, in order: reporting the recycle notice's number resends nothing.
    expect(received).toEqual(published);
    expect(recycles).toBeGreaterThan(0);
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
