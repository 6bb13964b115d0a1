/**
 * The `streaming` transport against a real HTTP server on loopback that speaks its wire
 * format (test/stream-fixture.ts): a numbered stream arrives exactly once through
 * recycles and through a stream cut mid-flight, the connects that open streams report the
 * frames received, and a stream whose body is held back (a buffering proxy) sends the
 * client to long-polling with the reason `buffered`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BayouClient, type BayouClientOptions, longPolling, streaming } from '../src/index.js';
import { streamUrl } from '../src/transports/streaming.js';
import { waitFor } from './helpers.js';
import { StreamFixture } from './stream-fixture.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function start(
  fixture: StreamFixture,
  options: BayouClientOptions = {},
): Promise<{ client: BayouClient; got: number[]; transports: string[][] }> {
  const url = await fixture.listen();
  cleanup.push(() => fixture.close());
  const client = new BayouClient(url, {
    transports: [streaming, longPolling],
    minReconnectDelay: 50,
    ...options,
  });
  cleanup.push(() => client.disconnect());
  const transports: string[][] = [];
  client.on('transport', (t, previous, reason) => transports.push([t, String(previous), reason]));
  await client.connect();
  const got: number[] = [];
  await client.subscribe('/feed', (m) => got.push(m.data as number)).ready;
  return { client, got, transports };
}

/** Publishes 1..n, one frame each; resolves when every one has been received. */
async function stream(fixture: StreamFixture, got: number[], n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    fixture.publish('/feed', i);
    await new Promise((r) => setImmediate(r));
  }
  await waitFor(() => got.length >= n, 10_000, `${n} messages`);
  // A later message on the same path: anything repeated would have come before it.
  fixture.publish('/feed', n + 1);
  await waitFor(() => got.includes(n + 1), 10_000, 'the last message');
  expect(got).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
}

describe('the streaming transport', () => {
  it('derives the stream URL from the endpoint', () => {
    expect(streamUrl('http://h/bayeux')).toBe('http://h/bayeux/stream');
    expect(streamUrl('/bayeux/?a=1')).toBe('/bayeux/stream?a=1');
  });

  it('receives a numbered stream on one response, the connect opening it reporting frames', async () => {
    const fixture = new StreamFixture();
    const { client, got, transports } = await start(fixture);
    expect(client.transport).toBe('streaming');
    expect(transports).toEqual([['streaming', 'null', 'preferred']]);
    await stream(fixture, got, 50);
    expect(fixture.opened).toHaveLength(1);
    expect(fixture.opened[0]?.connectionType).toBe('streaming');
    expect(fixture.opened[0]?.ext?.ack).toBe(0);
    // Subscribe and the rest went on ordinary POSTs, without a connect.
    expect(fixture.posted.map((m) => m.channel)).toEqual(['/meta/handshake', '/meta/subscribe']);
  });

  it('opens the next stream at once when the server recycles one, losing and repeating nothing', async () => {
    const fixture = new StreamFixture();
    fixture.recycleAfter = 7;
    const states: string[] = [];
    const { client, got } = await start(fixture);
    client.on('state', (s) => states.push(s));
    await stream(fixture, got, 60);
    expect(fixture.opened.length).toBeGreaterThanOrEqual(8);
    // Each new stream reports the last frame the previous one carried.
    const reported = fixture.opened.map((c) => c.ext?.ack as number);
    expect(reported.slice(1).every((n, i) => n > (reported[i] as number))).toBe(true);
    expect(states).toEqual([]);
  });

  it('reopens after a stream cut mid-flight and gets again what the cut lost', async () => {
    const fixture = new StreamFixture();
    const { client, got } = await start(fixture);
    fixture.cutAfter = 3;
    await stream(fixture, got, 30);
    expect(fixture.opened.length).toBe(2);
    expect(client.transport).toBe('streaming');
  });

  it.each([
    ['a last frame advising a handshake', 'handshake', 1],
    ['the stream just ending (the next open answered 402)', undefined, 2],
  ] as const)(
    'handshakes again and resubscribes when the session ends with %s',
    async (_what, advice, opened) => {
      const fixture = new StreamFixture();
      const { client, got } = await start(fixture);
      const first = client.clientId;
      fixture.endSession(advice);
      await waitFor(
        () => fixture.posted.filter((m) => m.channel === '/meta/subscribe').length === 2,
        10_000,
        'the resubscribe',
      );
      expect(client.clientId).not.toBe(first);
      // Streams opened by the ended session: the first, and with no advice the one refused.
      expect(fixture.opened.filter((c) => c.clientId === first)).toHaveLength(opened);
      await stream(fixture, got, 5);
    },
  );

  it('falls back to long-polling, saying buffered, when the stream does not start in time', async () => {
    const fixture = new StreamFixture();
    fixture.buffer = true;
    const t0 = Date.now();
    const { client, got, transports } = await start(fixture, { streamSenseTimeout: 300 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(client.transport).toBe('long-polling');
    expect(transports).toEqual([['long-polling', 'null', 'buffered']]);
    await stream(fixture, got, 10);
  });
});
