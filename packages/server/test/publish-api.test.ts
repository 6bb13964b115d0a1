/** The HTTP publish API: keys, validation, sizes, and delivery to Bayeux subscribers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BayouServer, createServer, keyMatches, publishApi } from '../src/index.js';
import { TestClient } from './test-client.js';

const KEY = 'publish-key-0123456789abcdef';

async function start(apiKey?: string, publish?: (c: string, d: unknown) => unknown) {
  const server = await createServer({ host: '127.0.0.1', port: 0, timeout: 2000, sweepInterval: 50 });
  await server.app.register(publishApi, {
    ...(apiKey !== undefined ? { apiKey } : {}),
    publish: publish ?? ((channel, data) => server.bayou.publish(channel, data)),
    maxMessageBytes: 1024,
    maxBatchMessages: 3,
  });
  return { server, base: await server.listen() };
}

function post(base: string, body: unknown, key: string | null = KEY, raw?: string) {
  return fetch(`${base}/api/publish`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
    },
    body: raw ?? JSON.stringify(body),
  });
}

describe('POST /api/publish', () => {
  let server: BayouServer;
  let base: string;
  beforeAll(async () => ({ server, base } = await start(KEY)));
  afterAll(() => server.close());

  it('answers 401 without a key or with a wrong one, before reading the body', async () => {
    const none = await post(base, { channel: '/a', data: 1 }, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post(base, { channel: '/a', data: 1 }, `${KEY}x`)).status).toBe(401);
    expect((await post(base, null, 'wrong', '[[[[[')).status).toBe(401);
  });

  it.each(['websocket', 'long-polling'] as const)(
    'delivers a message to a %s subscriber',
    async (transport) => {
      const c = new TestClient(base, transport);
      await c.connect();
      await c.subscribe('/api/test');
      const r = await post(base, { channel: '/api/test', data: { n: transport } });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({
        channel: '/api/test',
        position: { offset: expect.any(Number), epoch: expect.any(String) },
      });
      await c.waitFor((m) => m.channel === '/api/test' && (m.data as { n?: string })?.n === transport);
      await c.close();
    },
  );

  it('publishes a batch in order, in both forms', async () => {
    const c = new TestClient(base, 'websocket');
    await c.connect();
    await c.subscribe('/b/*');
    const r1 = await post(base, {
      messages: [
        { channel: '/b/1', data: 1 },
        { channel: '/b/2', data: 2 },
      ],
    });
    expect(await r1.json()).toEqual({
      results: [
        { channel: '/b/1', position: { offset: expect.any(Number), epoch: expect.any(String) } },
        { channel: '/b/2', position: { offset: expect.any(Number), epoch: expect.any(String) } },
      ],
    });
    const r2 = await post(base, [{ channel: '/b/3', data: 3 }]);
    expect(r2.status).toBe(200);
    await c.waitFor((m) => m.data === 3);
    expect(c.received.filter((m) => m.channel?.startsWith('/b/')).map((m) => m.data)).toEqual([1, 2, 3]);
    await c.close();
  });

  it('refuses bad channels, missing data, big messages and big batches; a bad batch publishes nothing', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ channel: '/meta/connect', data: 1 }, 400, /channel_invalid/],
      [{ channel: '/service/x', data: 1 }, 400, /channel_invalid/],
      [{ channel: '/a/*', data: 1 }, 400, /channel_invalid/],
      [{ channel: 'nope', data: 1 }, 400, /channel_invalid/],
      [{ data: 1 }, 400, /channel_missing/],
      [{ channel: '/a' }, 400, /no "data"/],
      [{ channel: '/a', data: 'x'.repeat(2000) }, 413, /413:1024:message_too_large/],
      [{ messages: [] }, 400, /empty batch/],
      [{ messages: [1, 2, 3, 4] }, 413, /max 3/],
      [42, 400, /object/],
    ];
    for (const [body, status, error] of cases) {
      const r = await post(base, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(((await r.json()) as { error: string }).error).toMatch(error);
    }
    const before = server.bayou.stats().publishes;
    const r = await post(base, {
      messages: [
        { channel: '/ok', data: 1 },
        { channel: '/meta/x', data: 2 },
      ],
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ index: 1 });
    expect(server.bayou.stats().publishes).toBe(before);
  });

  it('refuses __proto__ keys, deep nesting and malformed JSON with 400', async () => {
    const proto = await post(base, null, KEY, '{"channel":"/a","data":{"__proto__":{"x":1}}}');
    expect(proto.status).toBe(400);
    expect(await proto.json()).toEqual({ error: '400:__proto__:forbidden_key' });
    const deep = await post(base, null, KEY, `${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: string }).error).toMatch(/nested deeper/);
    expect((await post(base, null, KEY, '{"channel":')).status).toBe(400);
  });
});

describe('publish API configuration', () => {
  it('answers 404 when no key is configured', async () => {
    const { server, base } = await start(undefined);
    expect((await post(base, { channel: '/a', data: 1 })).status).toBe(404);
    await server.close();
  });

  it('reports the position publish resolves to', async () => {
    let n = 0;
    const { server, base } = await start(KEY, async () => ({ offset: ++n }));
    expect(await (await post(base, { channel: '/a', data: 1 })).json()).toEqual({
      channel: '/a',
      position: { offset: 1 },
    });
    await server.close();
  });

  it('hands a batch to the engine all at once and answers in order however the engine settles', async () => {
    let inFlight = 0;
    let most = 0;
    const { server, base } = await start(KEY, (channel) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // The first message settles last: only a pipelined batch sees all three in flight.
      const wait = channel === '/p/1' ? 20 : 1;
      return new Promise((resolve) =>
        setTimeout(() => {
          inFlight--;
          resolve({ offset: Number(channel.slice(3)) });
        }, wait),
      );
    });
    const r = await post(
      base,
      [1, 2, 3].map((n) => ({ channel: `/p/${n}`, data: n })),
    );
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      results: [1, 2, 3].map((n) => ({ channel: `/p/${n}`, position: { offset: n } })),
    });
    expect(most).toBe(3);
    await server.close();
  });

  it('answers 503 with Retry-After when the engine refuses, with what went through; a bug is a 500', async () => {
    const { server, base } = await start(KEY, (channel) => {
      if (channel === '/bug') throw new Error('a bug in publish');
      return channel === '/down' ? Promise.reject(new Error('Redis is away')) : Promise.resolve(null);
    });
    const one = await post(base, { channel: '/down', data: 1 });
    expect(one.status).toBe(503);
    expect(one.headers.get('retry-after')).toBe('1');
    expect(await one.json()).toEqual({ error: 'the engine is unavailable: publish again later' });
    const batch = await post(base, [
      { channel: '/up', data: 1 },
      { channel: '/down', data: 2 },
      { channel: '/up', data: 3 },
    ]);
    expect(batch.status).toBe(503);
    expect(await batch.json()).toEqual({
      error: 'the engine is unavailable: publish again later',
      index: 1,
      results: [
        { channel: '/up', position: null },
        { channel: '/down', error: 'the engine is unavailable: publish again later' },
        { channel: '/up', position: null },
      ],
    });
    const bug = await post(base, { channel: '/bug', data: 1 });
    expect(bug.status).toBe(500);
    expect(bug.headers.get('retry-after')).toBeNull();
    expect(await bug.json()).toEqual({ error: 'publish failed' });
    await server.close();
  });

  it('refuses short keys at setup', async () => {
    const server = await createServer({ port: 0 });
    await expect(
      server.app.register(publishApi, { apiKey: 'short', publish: () => undefined }),
    ).rejects.toThrow(/at least 16/);
    await server.close();
  });

  it('compares keys by digest', async () => {
    const { createHash } = await import('node:crypto');
    const d = (s: string) => createHash('sha256').update(s).digest();
    expect(keyMatches('a', [d('b'), d('a')])).toBe(true);
    expect(keyMatches('a', [d('b')])).toBe(false);
  });
});
