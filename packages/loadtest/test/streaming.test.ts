/**
 * The streaming drivers against a real Bayou server: `--transport streaming` and
 * `eventsource`, lean and browser-like, in the chat, feed and connections scenarios, with
 * streams recycled often (a small streamMaxBytes) so the drivers' reopening is exercised:
 * every delivery arrives once, no session is lost.
 */
import net from 'node:net';
import { type BayouServer, createServer } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli-main.js';
import { runScenario } from '../src/runner.js';

let server: BayouServer;
let proxy: net.Server;
let url: string;
/** Streams opened (both types), counted in the requests passing through a loopback relay. */
let streams = 0;
const relayed = new Set<net.Socket>();
const STREAM_OPEN = /POST \/bayeux\/stream |GET \/bayeux\/[^ ]+ HTTP/g;

beforeAll(async () => {
  server = await createServer({
    host: '127.0.0.1',
    port: 0,
    transports: ['websocket', 'streaming', 'eventsource', 'long-polling'],
    // 4 KiB: a stream is recycled after a few dozen frames, many times in a run.
    streamMaxBytes: 4096,
    logger: false,
  });
  const target = new URL(await server.listen());
  proxy = net.createServer((client) => {
    relayed.add(client);
    client.on('close', () => relayed.delete(client));
    const upstream = net.connect(Number(target.port), target.hostname);
    client.on('data', (chunk: Buffer) => {
      streams += chunk.toString('latin1').match(STREAM_OPEN)?.length ?? 0;
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/bayeux`;
});

afterAll(async () => {
  for (const socket of relayed) socket.destroy();
  await new Promise((resolve) => proxy.close(resolve));
  await server.close();
});

describe.each([
  ['streaming', 'lean'],
  ['streaming', 'browser'],
  ['eventsource', 'lean'],
  ['eventsource', 'browser'],
] as const)('against Bayou over %s, the %s driver', (transport, client) => {
  it('delivers every chat message exactly once through many stream recycles', async () => {
    streams = 0;
    const r = await runScenario('chat', {
      url,
      transport,
      client,
      clients: 50,
      rooms: 10,
      roomsPerClient: 3,
      batches: 40,
      batchSize: 10,
      pause: 5,
      metricsUrl: 'off',
      progress: false,
    });
    expect(r.sessions.connected).toBe(50);
    expect(r.messages.expected).toBeGreaterThan(400 * 10);
    expect(r.messages.received).toBe(r.messages.expected);
    expect({
      lost: r.messages.lost,
      duplicated: r.messages.duplicated,
      sessionsLost: r.sessions.lost,
    }).toEqual({
      lost: 0,
      duplicated: 0,
      sessionsLost: 0,
    });
    // ~120 deliveries of ~100 bytes per client, 4 KiB a stream: clients reopened their streams
    // (an EventSource waits for the server's `retry` first, so fewer times in a short run).
    expect(streams).toBeGreaterThan(transport === 'streaming' ? 50 * 2 : 50);
    expect(r.deliveriesPerFrame).toBeGreaterThan(0);
  });
});

describe('the other scenarios over streaming', () => {
  it('runs the feed: every watcher gets every update', async () => {
    const r = await runScenario('feed', {
      url,
      transport: 'streaming',
      clients: 40,
      subjects: 10,
      subjectsPerClient: 2,
      rate: 20,
      duration: 1000,
      metricsUrl: 'off',
      progress: false,
    });
    expect(r.messages.sent).toBeGreaterThan(100);
    expect(r.messages.lost).toBe(0);
    expect(r.exitCode).toBe(0);
  });

  it('holds idle sessions in the connections scenario from the command line', async () => {
    let out = '';
    const io = { out: { write: (t: string) => (out += t) }, err: { write: () => true } };
    const code = await main(
      [
        'connections',
        '--url',
        url,
        '--transport',
        'streaming',
        '--clients',
        '100',
        '--ramp',
        '500',
        '--hold',
        '500ms',
        '--metrics-url',
        'off',
        '--no-progress',
      ],
      io,
    );
    expect(code).toBe(0);
    expect(out).toMatch(/streaming/);
    expect(out).toMatch(/100 connected|connected\s+100/);
  });
});
