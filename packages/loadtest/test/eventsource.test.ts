import http from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error faye ships no type declarations
import faye from 'faye';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from '../src/runner.js';

let server: http.Server;
let url: string;
/** The EventSource GETs Faye saw, with the headers they came with. */
const streams: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = http.createServer();
  new faye.NodeAdapter({ mount: '/bayeux', timeout: 25 }).attach(server);
  server.prependListener('request', (req: http.IncomingMessage) => {
    if (req.method === 'GET' && req.headers.accept === 'text/event-stream') streams.push(req.headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bayeux`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe.each([
  ['lean', 'bayeux'],
  ['browser-like', 'bayeux-browser'],
] as const)("against Faye's EventSource transport, the %s driver", (_, protocol) => {
  it('receives every message of the chat over the event streams, once', async () => {
    streams.length = 0;
    const r = await runScenario(
      'chat',
      {
        url,
        transport: 'eventsource',
        clients: 60,
        rooms: 10,
        roomsPerClient: 3,
        batches: 20,
        batchSize: 10,
        pause: 5,
        metricsUrl: 'off',
        progress: false,
      },
      { protocol },
    );
    expect(r.sessions.connected).toBe(60);
    expect(r.messages.expected).toBeGreaterThan(200 * 10);
    expect(r.messages.received).toBe(r.messages.expected);
    expect(r.messages.lost).toBe(0);
    expect(r.messages.duplicated).toBe(0);
    expect(r.sessions.lost).toBe(0);
    expect(r.exitCode).toBe(0);
    // One event stream per client; the browser-like one sends what Chrome's EventSource sends.
    expect(streams).toHaveLength(60);
    if (protocol === 'bayeux-browser') {
      expect(streams[0]!['user-agent']).toMatch(/Chrome\//);
      expect(streams[0]!['cache-control']).toBe('no-cache');
    }
  });
});
