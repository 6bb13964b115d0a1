/**
 * Numbered frames over `streaming`: each frame ends with the ack marker, and the connect
 * opening the next stream says the last frame received (`ext.ack`, or `ext.ackFrames` as
 * @bayou/client sends it), so a stream cut
 * mid-flight loses nothing and duplicates nothing. Also: a stream's state goes with it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { cookieOf, openStream, type StreamReader, streamConnect, streamingClient } from './stream-client.js';
import { eventually, type Msg, type TestClient } from './test-client.js';

let s: Started | null = null;
const streams: StreamReader[] = [];
afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  await s?.server.close();
  s = null;
});

const FRAMES = { ack: true, bayou: { ackFrames: true } };

async function stream(client: TestClient, ext?: Record<string, unknown>): Promise<StreamReader> {
  const reader = await openStream((s as Started).base, streamConnect(client, ext), cookieOf(client));
  streams.push(reader);
  await reader.waitFor((m) => m.channel === '/meta/connect');
  return reader;
}

/** The number a frame's ack marker carries, or `undefined`. */
const markerOf = (frame: Msg[]): number | undefined => {
  const last = frame.at(-1);
  return last?.channel === '/meta/ack' ? ((last.ext as { ack: number }).ack as number) : undefined;
};
const data = (reader: StreamReader): unknown[] =>
  reader.messages.filter((m) => m.channel === '/n' && m.successful === undefined).map((m) => m.data);

describe('numbered frames over streaming', () => {
  it.each(['ack', 'ackFrames'] as const)(
    'numbers every frame and, after a cut, resends exactly the frames after the last one reported in ext.%s',
    async (key) => {
      s = await startServer();
      const client = await streamingClient(s.base, 'streaming', FRAMES);
      await client.subscribe('/n');
      const first = await stream(client);
      s.server.bayou.publish('/n', 'a');
      await first.waitFor((m) => m.data === 'a');
      s.server.bayou.publish('/n', 'b');
      await first.waitFor((m) => m.data === 'b');
      const numbers = first.frames.slice(1).map(markerOf);
      expect(numbers.every((n) => typeof n === 'number')).toBe(true);
      const [gotA] = numbers as number[];
      first.cut();
      await first.ended;
      // Published while no stream is open.
      s.server.bayou.publish('/n', 'c');
      // The client says it got the frame with 'a' only: 'b' went down with the stream.
      const second = await stream(client, { [key]: gotA });
      await second.until(() => data(second).includes('c'));
      expect(data(second)).toEqual(['b', 'c']);
      expect(second.frames.slice(1).every((f) => markerOf(f) !== undefined)).toBe(true);
      // A third stream reporting everything gets nothing again.
      const last = markerOf(second.frames.at(-1) as Msg[]) as number;
      second.cut();
      const third = await stream(client, { [key]: last });
      s.server.bayou.publish('/n', 'd');
      await third.waitFor((m) => m.data === 'd');
      expect(data(third)).toEqual(['d']);
    },
  );
});

describe('stream state', () => {
  it('is let go when streams end and sessions go: the open-stream gauge returns to zero', async () => {
    s = await startServer({ maxInterval: 1000 });
    const gauge = async (): Promise<number> => {
      const text = await (await fetch(`${(s as Started).base}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('bayou_connections{transport="streaming"}'));
      return Number(line?.split(' ')[1]);
    };
    const clients = await Promise.all(Array.from({ length: 20 }, () => streamingClient((s as Started).base)));
    const readers = await Promise.all(clients.map((c) => stream(c)));
    expect(await gauge()).toBe(20);
    for (const r of readers.slice(0, 10)) r.cut();
    await Promise.all(readers.slice(0, 10).map((r) => r.ended));
    // Sessions whose stream went expire maxInterval later; their streams' state went with them.
    await eventually(() => (s as Started).server.bayou.sessionCount === 10);
    expect(await gauge()).toBe(10);
    await Promise.all(
      clients.slice(10).map((c) => c.request({ channel: '/meta/disconnect', clientId: c.clientId })),
    );
    await Promise.all(readers.slice(10).map((r) => r.ended));
    expect(await gauge()).toBe(0);
    expect(s.server.bayou.sessionCount).toBe(0);
  });
});
