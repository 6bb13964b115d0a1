/**
 * An engine outage answered as one: while Redis is away, `POST /api/publish` answers 503
 * with `Retry-After` (not 500 with a stack trace), a Bayeux publish `503::engine_unavailable`,
 * and the log says so once per outage at warn, never at error; once Redis is back,
 * publishing works again and the end of the outage is logged.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BayouServer, createServer, publishApi } from '../src/index.js';
import { operationsOf } from '../src/kernel/node-operations.js';
import { redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';
import { eventually, TestClient } from './test-client.js';

requireRedis('publishing while Redis is away');

const KEY = 'outage-key-0123456789abcdef';

describe.runIf(redisAvailable)('publishing while Redis is away', () => {
  const redis = redisPerFile();
  const lines: { level: number; msg: string }[] = [];
  let server: BayouServer;
  let base: string;

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk)
          .split('\n')
          .filter((l) => l !== ''))
          lines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    server = await createServer({
      host: '127.0.0.1',
      port: 0,
      timeout: 2000,
      logger: { level: 'info', stream },
      redis: redis().url,
      redisEngine: { keyPrefix: `outage${process.pid}:`, commandTimeoutMs: 1000 },
    });
    await server.app.register(publishApi, { apiKey: KEY, publish: (c, d) => server.bayou.publish(c, d) });
    base = await server.listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (body: unknown) =>
    fetch(`${base}/api/publish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(body),
    });

  it('answers 503 with Retry-After and 503::engine_unavailable, logged once at warn', async () => {
    const client = new TestClient(base, 'websocket');
    await client.connect();
    expect((await post({ channel: '/o/a', data: 0 })).status).toBe(200);
    const engine = operationsOf(server.app).engine;
    const from = lines.length;
    try {
      await redis().kill();
      await eventually(() => expect(engine.ready()).toBe(false), 10_000);
      for (let i = 0; i < 3; i++) {
        const r = await post(i === 2 ? [{ channel: '/o/a', data: i }] : { channel: '/o/a', data: i });
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).toBe('1');
      }
      for (let i = 0; i < 3; i++) {
        const reply = await client.publish('/o/a', i);
        expect({ successful: reply.successful, error: reply.error }).toEqual({
          successful: false,
          error: '503::engine_unavailable',
        });
      }
    } finally {
      await redis().restart();
    }
    await eventually(() => expect(engine.ready()).toBe(true), 15_000);
    await eventually(
      async () => expect((await post({ channel: '/o/a', data: 'back' })).status).toBe(200),
      15_000,
    );
    await eventually(
      async () => expect((await client.publish('/o/a', 'back')).successful).toBe(true),
      15_000,
    );
    const during = lines.slice(from);
    // pino levels: 30 info, 40 warn, 50 error.
    expect(during.filter((l) => l.level >= 50)).toEqual([]);
    const outage = during.filter((l) => l.msg.includes('the engine is unavailable'));
    expect(outage.map((l) => [l.level, l.msg.split(':')[0]])).toEqual([
      [40, 'bayou.publish/deliver/updateRecord'],
      [40, 'Bayeux'],
    ]);
    const back = during.filter((l) => l.msg.includes('the engine answers again'));
    expect(back.map((l) => [l.level, l.msg.split(':')[0]])).toEqual([
      [30, 'bayou.publish/deliver/updateRecord'],
      [30, 'Bayeux'],
    ]);
    await client.close();
  }, 40_000);
});
