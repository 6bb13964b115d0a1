/** The `streaming` connection type on one node: the wire, deliveries, heartbeats, recycling, ends. */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreateServerOptions } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { cookieOf, openStream, type StreamReader, streamConnect, streamingClient } from './stream-client.js';
import { eventually, type Msg, type TestClient } from './test-client.js';

let s: Started | null = null;
const streams: StreamReader[] = [];

async function start(options: CreateServerOptions = {}): Promise<Started> {
  s = await startServer(options);
  return s;
}

/** Opens a stream for `client` and waits for its connect reply. */
async function stream(client: TestClient, ext?: Record<string, unknown>): Promise<StreamReader> {
  const reader = await openStream((s as Started).base, streamConnect(client, ext), cookieOf(client));
  streams.push(reader);
  await reader.waitFor((m) => m.channel === '/meta/connect');
  return reader;
}

const deliveries = (reader: StreamReader, channel: string): unknown[] =>
  reader.messages.filter((m) => m.channel === channel && m.successful === undefined).map((m) => m.data);

afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  await s?.server.close();
  s = null;
});

describe('streaming', () => {
  it('is offered in the handshake, between websocket and long-polling', async () => {
    const { base } = await start();
    const client = await streamingClient(base);
    const reply = await client.request({
      channel: '/meta/handshake',
      version: '1.0',
      supportedConnectionTypes: ['streaming'],
    });
    expect(reply.supportedConnectionTypes).toEqual(['websocket', 'streaming', 'eventsource', 'long-polling']);
  });

  it('opens with padding, then the connect reply, then one frame per flush', async () => {
    const { base, server } = await start();
    const client = await streamingClient(base);
    expect((await client.subscribe('/news')).successful).toBe(true);
    const reader = await stream(client);
    expect(reader.status).toBe(200);
    expect(reader.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(reader.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(reader.headers.get('x-accel-buffering')).toBe('no');
    expect(reader.headers.get('content-length')).toBeNull();
    expect(reader.lines[0]).toBe(' '.repeat(2048));
    expect(reader.frames[0]).toEqual([
      {
        channel: '/meta/connect',
        id: 'open',
        clientId: client.clientId,
        successful: true,
        advice: { reconnect: 'retry', interval: 0, timeout: 2000 },
      },
    ]);
    // Five publications in one turn: one frame.
    for (let i = 0; i < 5; i++) server.bayou.publish('/news', i);
    await reader.until(() => deliveries(reader, '/news').length === 5);
    expect(reader.frames[1]).toEqual([0, 1, 2, 3, 4].map((data) => ({ channel: '/news', data })));
  });

  it('answers POSTs of a streaming session without its deliveries, which go on the stream', async () => {
    const { base } = await start();
    const client = await streamingClient(base);
    await client.subscribe('/echo');
    const reader = await stream(client);
    // The publisher's own copy is queued while its publish is handled: it must not ride the POST.
    const { body } = await client.sendRaw(
      JSON.stringify([{ channel: '/echo', clientId: client.clientId, data: 1 }]),
    );
    expect((JSON.parse(body) as Msg[]).map((m) => m.channel)).toEqual(['/echo']);
    expect(JSON.parse(body)[0].successful).toBe(true);
    await reader.waitFor((m) => m.channel === '/echo' && m.data === 1);
  });

  it('writes a heartbeat line into a silent stream every connect timeout', async () => {
    const { base } = await start({ timeout: 300 });
    const client = await streamingClient(base);
    const reader = await stream(client);
    const before = reader.lines.length;
    await reader.until(() => reader.lines.slice(before).filter((l) => l === '').length >= 2);
    expect(reader.done).toBe(false);
    expect(reader.frames).toHaveLength(1);
  });

  it('recycles a stream past streamMaxBytes and loses nothing: the next stream starts with what was queued', async () => {
    const { base, server } = await start({ streamMaxBytes: 4096 });
    const client = await streamingClient(base);
    await client.subscribe('/big');
    const first = await stream(client);
    const payload = 'x'.repeat(1000);
    let sent = 0;
    // One publication per turn until the stream ends: the recycle comes between two flushes.
    while (!first.done && sent < 50) {
      server.bayou.publish('/big', { n: sent++, payload });
      await new Promise((r) => setImmediate(r));
    }
    await first.ended;
    const last = first.frames.at(-1) as Msg[];
    expect(last).toEqual([
      {
        channel: '/meta/connect',
        clientId: client.clientId,
        successful: true,
        advice: { reconnect: 'retry', interval: 0 },
      },
    ]);
    expect(first.bytes).toBeGreaterThanOrEqual(4096);
    // Published while no stream is open: queued for the next one.
    for (let i = 0; i < 3; i++) server.bayou.publish('/big', { n: sent++, payload });
    const second = await stream(client);
    await second.until(() => deliveries(second, '/big').length + deliveries(first, '/big').length === sent);
    const got = [...deliveries(first, '/big'), ...deliveries(second, '/big')].map(
      (d) => (d as { n: number }).n,
    );
    expect(got).toEqual([...Array(sent).keys()]);
  });

  it('recycles a stream past streamMaxAge', async () => {
    const { base } = await start({ streamMaxAge: 1000 });
    const client = await streamingClient(base);
    const reader = await stream(client);
    await reader.ended;
    expect(reader.frames.at(-1)?.[0]).toMatchObject({ channel: '/meta/connect', advice: { interval: 0 } });
  });

  it('ends the older stream when a second one opens for the session; the newer carries on', async () => {
    const { base, server } = await start();
    const client = await streamingClient(base);
    await client.subscribe('/two');
    const older = await stream(client);
    const newer = await stream(client);
    await older.ended;
    server.bayou.publish('/two', 'after');
    await newer.waitFor((m) => m.channel === '/two');
    expect(deliveries(older, '/two')).toEqual([]);
  });

  it('ends the stream when its session disconnects', async () => {
    const { base, server } = await start();
    const client = await streamingClient(base);
    const reader = await stream(client);
    const reply = await client.request({ channel: '/meta/disconnect', clientId: client.clientId });
    expect(reply.successful).toBe(true);
    await reader.ended;
    expect(server.bayou.sessionCount).toBe(0);
  });

  it('keeps a session with an open stream past maxInterval, and ends it maxInterval after the stream', async () => {
    const { base, server } = await start({ maxInterval: 300, timeout: 200 });
    const client = await streamingClient(base);
    const reader = await stream(client);
    // Two heartbeats (each one connect timeout) outlive maxInterval.
    await reader.until(() => reader.lines.filter((l) => l === '').length >= 2);
    expect(server.bayou.session(client.clientId)).toBeDefined();
    reader.cut();
    await reader.ended;
    await new Promise<void>((resolve) => server.bayou.once('session:removed', () => resolve()));
    expect(server.bayou.session(client.clientId)).toBeUndefined();
  });

  it('answers an unknown session with a 402 connect reply and ends the stream', async () => {
    const { base } = await start();
    const reader = await openStream(base, {
      channel: '/meta/connect',
      clientId: 'nope.nope',
      connectionType: 'streaming',
      id: '1',
    });
    streams.push(reader);
    await reader.ended;
    expect(reader.status).toBe(200);
    expect(reader.frames).toEqual([
      [
        {
          channel: '/meta/connect',
          id: '1',
          successful: false,
          error: '402::session_unknown',
          advice: { reconnect: 'handshake', interval: 0 },
        },
      ],
    ]);
  });

  it('recycles past maxQueuedMessages / 2 messages, so numbered frames kept for a report stay under the cap', async () => {
    const { base, server } = await start({ maxQueuedMessages: 20 });
    const client = await streamingClient(base);
    await client.subscribe('/count');
    const first = await stream(client);
    let sent = 0;
    while (!first.done && sent < 30) {
      server.bayou.publish('/count', sent++);
      await new Promise((r) => setImmediate(r));
    }
    await first.ended;
    // Ten messages written (its connect reply, nine deliveries), then the recycle frame.
    expect(first.frames.slice(0, -1).flat()).toHaveLength(10);
    expect(first.frames.at(-1)?.[0]).toMatchObject({ channel: '/meta/connect', advice: { interval: 0 } });
    const second = await stream(client);
    await second.until(
      () => deliveries(first, '/count').length + deliveries(second, '/count').length === sent,
    );
    expect([...deliveries(first, '/count'), ...deliveries(second, '/count')]).toEqual([
      ...Array(sent).keys(),
    ]);
  });

  it('drops a reader that stops reading as a slow consumer, past maxBufferedBytes', async () => {
    const { base, server } = await start({ maxBufferedBytes: 64 * 1024, streamMaxBytes: 64 * 1024 * 1024 });
    const client = await streamingClient(base);
    await client.subscribe('/flood');
    // A client that sends its request and never reads a byte of the answer.
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    const body = JSON.stringify([streamConnect(client)]);
    socket.write(
      `POST /bayeux/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${client.cookie ? `Cookie: ${client.cookie}\r\n` : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
    await eventually(() => server.bayou.session(client.clientId)?.state === 'carried');
    const payload = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 2000 && server.bayou.session(client.clientId) !== undefined; i++) {
      server.bayou.publish('/flood', payload);
      await new Promise((r) => setImmediate(r));
    }
    expect(server.bayou.session(client.clientId)).toBeUndefined();
    expect(server.bayou.stats().slowConsumers).toBe(1);
    socket.destroy();
  });

  it('frames a publication reaching many streams alone in a turn once, and each gets it whole', async () => {
    const { base, server } = await start();
    const readers: StreamReader[] = [];
    for (let i = 0; i < 3; i++) {
      const client = await streamingClient(base);
      await client.subscribe('/fan');
      readers.push(await stream(client));
    }
    for (let n = 0; n < 5; n++) {
      server.bayou.publish('/fan', { n });
      await new Promise((r) => setImmediate(r));
    }
    for (const r of readers) await r.until(() => deliveries(r, '/fan').length === 5);
    for (const r of readers) expect(deliveries(r, '/fan')).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
  });
});
