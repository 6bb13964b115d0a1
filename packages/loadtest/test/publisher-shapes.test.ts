/**
 * `chat --publishers session|api`: one session sending each batch in one WebSocket frame,
 * or a backend sending each batch as one `POST /api/publish`; every member of a room gets
 * every message, and a subscriber gets a session's batch together (several per frame).
 */
import { type BayouServer, createServer, publishApi } from '@bayou/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { runScenario } from '../src/runner.js';

const KEY = 'shapes-key-0123456789abcdef';
let server: BayouServer;
let url: string;

beforeAll(async () => {
  server = await createServer({ host: '127.0.0.1', port: 0, logger: false });
  await server.app.register(publishApi, { apiKey: KEY, publish: (c, d) => server.bayou.publish(c, d) });
  url = `${await server.listen()}/bayeux`;
});
afterAll(async () => {
  await server?.close();
});

const base = {
  clients: 60,
  rooms: 6,
  roomsPerClient: 3,
  batches: 20,
  batchSize: 10,
  pause: 5,
  drain: 3000,
  metricsUrl: 'off',
  progress: false,
} as const;

describe('chat publisher shapes', () => {
  it('session: one session sends each batch in one frame; all of it arrives, several messages per frame', async () => {
    const before = server.bayou.stats().publishes;
    const r = await runScenario('chat', { ...base, url, publishers: 'session' });
    expect(r.messages.sent).toBe(200);
    expect(server.bayou.stats().publishes - before).toBe(200);
    expect(r.messages.lost).toBe(0);
    expect(r.messages.duplicated).toBe(0);
    expect(r.messages.received).toBe(r.messages.expected);
    // A batch of 10 to 6 rooms reaches each client in about 5 of its messages, in one frame.
    expect(r.deliveriesPerFrame).toBeGreaterThan(2);
  });

  it('api: a backend sends each batch as one request; all of it arrives', async () => {
    const r = await runScenario('chat', { ...base, url, publishers: 'api', apiKey: KEY });
    expect(r.messages.sent).toBe(200);
    expect(r.messages.lost).toBe(0);
    expect(r.messages.received).toBe(r.messages.expected);
  });

  it('api with a wrong key: every message is counted lost, not delivered', async () => {
    const r = await runScenario('chat', {
      ...base,
      batches: 2,
      drain: 500,
      url,
      publishers: 'api',
      apiKey: 'x'.repeat(20),
    });
    expect(r.messages.sent).toBe(20);
    expect(r.messages.received).toBe(0);
    expect(r.messages.lost).toBe(r.messages.expected);
  });

  it('refuses api without a key and session over long-polling, naming the fix', () => {
    expect(() => resolveOptions({ publishers: 'api' })).toThrow(/--api-key/);
    expect(() => resolveOptions({ publishers: 'session', transport: 'long-polling' })).toThrow(
      /--transport websocket/,
    );
    expect(resolveOptions({ publishers: 'api', apiKey: KEY }).publishers).toBe('api');
  });
});
