import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bayou } from '../src/index.js';
import { TestClient } from './test-client.js';

describe('Fastify plugin', () => {
  it('embeds in an app without changing how the app parses its own JSON routes', async () => {
    const app = Fastify();
    app.post('/api/echo', async (req) => ({ got: req.body }));
    await app.register(bayou, { path: '/push', timeout: 1000 });
    app.get('/api/publish', async () => {
      app.bayou.publish('/news', { from: 'route' });
      return { ok: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const echo = await fetch(`${base}/api/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await echo.json()).toEqual({ got: { a: 1 } });

    const c = new TestClient(base, 'websocket');
    Object.defineProperty(c, 'endpoint', { get: () => `${base}/push` });
    await c.connect();
    await c.subscribe('/news');
    await fetch(`${base}/api/publish`);
    expect((await c.waitFor((m) => m.channel === '/news')).data).toEqual({ from: 'route' });
    await c.close();
    await app.close();
  });

  it('routes WebSocket upgrades through Fastify, so app hooks can refuse them', async () => {
    const app = Fastify();
    app.addHook('onRequest', async (req, reply) => {
      if (req.headers['x-token'] !== 'ok') return reply.code(401).send({ error: 'token required' });
    });
    await app.register(bayou);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/bayeux`;
    const statusOf = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(url, { headers });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
        ws.on('error', () => undefined);
      });
    expect(await statusOf({})).toBe(401);
    expect(await statusOf({ 'x-token': 'ok' })).toBe(101);
    await app.close();
  });

  it('rejects an unknown option at registration with an error naming it', async () => {
    const app = Fastify();
    await expect(app.register(bayou, { timeoutt: 5 } as never)).rejects.toThrow(
      /unknown option\(s\): timeoutt/,
    );
  });
});
