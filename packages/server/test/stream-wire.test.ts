/**
 * The `streaming` wire as an independent client reads docs/streaming.md (#30 item 8): the
 * raw response is split into lines by the test's own reader (`stream-client.ts`, plain
 * `fetch`), never by the server's code. After a cut, the frames not reported come again
 * with the numbers they first had, ahead of anything newer; no frame, padding included,
 * is larger than `streamMaxBytes`; the recycle notice ends with the ack marker too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { cookieOf, openStream, type StreamReader, streamConnect, streamingClient } from './stream-client.js';
import type { Msg, TestClient } from './test-client.js';

let s: Started | null = null;
const streams: StreamReader[] = [];
afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  await s?.server.close();
  s = null;
});

const FRAMES = { ack: true, bayou: { ackFrames: true } };
/** The padding a stream starts with: 2,048 spaces and a newline (docs/streaming.md, step 4). */
const PADDING_BYTES = 2049;

async function stream(client: TestClient, ext?: Record<string, unknown>): Promise<StreamReader> {
  const reader = await openStream((s as Started).base, streamConnect(client, ext), cookieOf(client));
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

describe('the streaming wire (docs/streaming.md)', () => {
  it.each(['ack', 'ackFrames'] as const)(
    'resends each frame not reported with its own number (ext.%s), ahead of newer messages',
    async (key) => {
      s = await startServer();
      const client = await streamingClient(s.base, 'streaming', FRAMES);
      await client.subscribe('/n');
      const first = await stream(client);
      for (const data of ['a', 'b', 'c']) {
        s.server.bayou.publish('/n', data);
        await first.waitFor((m) => m.data === data);
      }
      const sent = first.frames.filter((f) => dataOf(f).length > 0);
      expect(sent.map(dataOf)).toEqual([['a'], ['b'], ['c']]);
      const [na, nb, nc] = sent.map(markerOf) as number[];
      expect(na).toBeLessThan(nb as number);
      first.cut();
      await first.ended;
      s.server.bayou.publish('/n', 'd');
      for (let round = 0; round < 2; round++) {
        // Reported only 'a' (twice: a second cut resends the same frames, same numbers).
        const next = await stream(client, { [key]: na });
        await next.until(() => next.messages.some((m) => m.data === 'd'));
        const [reply, b, c, d] = next.frames;
        expect((reply as Msg[]).map((m) => m.channel)).toEqual(['/meta/connect']);
        expect([dataOf(b as Msg[]), markerOf(b as Msg[])]).toEqual([['b'], nb]);
        expect([dataOf(c as Msg[]), markerOf(c as Msg[])]).toEqual([['c'], nc]);
        expect(dataOf(d as Msg[])).toEqual(['d']);
        expect(markerOf(d as Msg[])).toBeGreaterThan(nc as number);
        next.cut();
        await next.ended;
      }
    },
  );

  it('keeps every frame, padding included, within streamMaxBytes; the recycle notice is numbered', async () => {
    const maxBytes = 4096;
    s = await startServer({ streamMaxBytes: maxBytes });
    const client = await streamingClient(s.base, 'streaming', FRAMES);
    await client.subscribe('/n');
    // Queued while no stream is open: about 6.6 KB, more than one stream may hold.
    const published = Array.from({ length: 20 }, (_, i) => `${i}:${'x'.repeat(300)}`);
    for (const data of published) s.server.bayou.publish('/n', data);
    const received: unknown[] = [];
    const numbers: number[] = [];
    let recycles = 0;
    let last: number | undefined;
    for (let opened = 0; opened < 12 && received.length < published.length; opened++) {
      const reader = await stream(client, last === undefined ? undefined : { ackFrames: last });
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
