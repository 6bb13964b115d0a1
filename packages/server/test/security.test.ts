/** The security hooks, origin checks and CORS. */

import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServer } from './start-server.js';
import { TestClient, type Transport } from './test-client.js';

describe.each<Transport>(['websocket', 'long-polling'])('security hooks over %s', (transport) => {
  it('denies a handshake with 403::handshake_denied and reconnect none, and keeps what authenticate returns', async () => {
    const { server, base } = await startServer({
      authenticate: async (message) => {
        const token = (message.ext as { token?: string } | undefined)?.token;
        return token === 'secret' ? { user: 'ada' } : false;
      },
    });
    const denied = new TestClient(base, transport);
    expect(await denied.connect({ token: 'wrong' })).toMatchObject({
      successful: false,
      error: '403::handshake_denied',
      advice: { reconnect: 'none' },
    });
    expect(server.bayou.sessionCount).toBe(0);
    const ok = new TestClient(base, transport);
    expect(await ok.connect({ token: 'secret' })).toMatchObject({ successful: true });
    expect(server.bayou.session(ok.clientId)?.auth).toEqual({ user: 'ada' });
    await denied.close();
    await ok.close();
    await server.close();
  });

  it('applies canSubscribe and canPublish', async () => {
    const { server, base } = await startServer({
      canSubscribe: (_s, channel) => !channel.startsWith('/private'),
      canPublish: async (_s, channel) => channel !== '/readonly',
    });
    const c = new TestClient(base, transport);
    await c.connect();
    expect(await c.subscribe('/private/x')).toMatchObject({
      successful: false,
      error: '403:/private/x:subscribe_denied',
    });
    expect(await c.subscribe(['/ok', '/private/y'])).toMatchObject({
      error: '403:/private/y:subscribe_denied',
    });
    expect(server.bayou.subscriberCount('/ok')).toBe(0);
    expect(await c.publish('/readonly', 1)).toMatchObject({
      successful: false,
      error: '403:/readonly:publish_denied',
    });
    expect(await c.publish('/open', 1)).toMatchObject({ successful: true });
    await c.close();
    await server.close();
  });
});

describe('request info for hooks', () => {
  it('gives authenticate the request headers, also for a second handshake on the same WebSocket', async () => {
    const seen: (string | undefined)[] = [];
    const { server, base } = await startServer({
      authenticate: (_m, request) => {
        seen.push(request.headers.cookie);
        return request.headers.cookie === 'token=abc';
      },
    });
    const c = new TestClient(base, 'websocket', { cookie: 'token=abc' });
    expect(await c.connect()).toMatchObject({ successful: true });
    const again = await c.request({
      channel: '/meta/handshake',
      version: '1.0',
      supportedConnectionTypes: ['websocket'],
    });
    expect(again).toMatchObject({ successful: true });
    expect(seen).toEqual(['token=abc', 'token=abc']);
    await c.close();
    await server.close();
  });
});

describe('origins', () => {
  it('refuses a WebSocket upgrade from a foreign origin and accepts an allowed one', async () => {
    const { server, base } = await startServer({ allowedOrigins: ['http://good.example'] });
    const url = `${base.replace('http', 'ws')}/bayeux`;
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { headers: { origin: 'http://evil.example' } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(403);
    const good = new TestClient(base, 'websocket', { origin: 'http://good.example' });
    expect(await good.connect()).toMatchObject({ successful: true });
    await good.close();
    await server.close();
  });

  it('answers CORS preflights and requests for allowed origins only', async () => {
    const { server, base } = await startServer({ allowedOrigins: ['http://good.example'] });
    const pre = await fetch(`${base}/bayeux`, {
      method: 'OPTIONS',
      headers: { origin: 'http://good.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('http://good.example');
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
    const bad = await fetch(`${base}/bayeux`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
      body: '[]',
    });
    expect(bad.status).toBe(403);
    await server.close();
  });
});

describe('health and metrics', () => {
  it('serves /healthz and Prometheus metrics with Bayou counters', async () => {
    const { server, base } = await startServer();
    const c = new TestClient(base, 'websocket');
    await c.connect();
    await c.subscribe('/m');
    server.bayou.publish('/m', 'x');
    await c.waitFor((m) => m.data === 'x');
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', sessions: 1 });
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/^bayou_sessions 1$/m);
    expect(text).toMatch(/^bayou_connections\{transport="websocket"\} 1$/m);
    expect(text).toMatch(/^bayou_publishes_total 1$/m);
    expect(Number(/^bayou_messages_out_total (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(4);
    expect(Number(/^bayou_bytes_out_total (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(100);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    await c.close();
    await server.close();
  });
});

describe('metrics people expect', () => {
  it('counts handshakes by result, removals by reason, subscriptions, service time, bytes (UTF-8) and the build', async () => {
    const { server, base } = await startServer({ authenticate: (m) => m.ext?.deny !== true });
    server.bayou.service('/service/echo', (data) => data);
    const a = new TestClient(base, 'websocket');
    await a.connect();
    const denied = new TestClient(base, 'long-polling');
    expect((await denied.connect({ deny: true })).successful).toBe(false);
    await a.subscribe(['/m/1', '/m/2']);
    expect((await a.publish('/service/echo', 'é')).successful).toBe(true);
    await a.waitFor((m) => m.channel === '/service/echo' && m.data === 'é');
    await a.request({ channel: '/meta/disconnect', clientId: a.clientId });
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/^bayou_handshakes_total\{result="accepted"\} 1$/m);
    expect(text).toMatch(/^bayou_handshakes_total\{result="denied"\} 1$/m);
    expect(text).toMatch(/^bayou_sessions_removed_total\{reason="disconnect"\} 1$/m);
    expect(text).toMatch(/^bayou_subscriptions 0$/m);
    expect(text).toMatch(/^bayou_service_seconds_count 1$/m);
    expect(text).toMatch(/^bayou_build_info\{version="\d+\.\d+\.\d+[^"]*",node="v\d+/m);
    // Bytes, not UTF-16 units: the echo of "é" (2 bytes in UTF-8) is counted as such.
    const bytes = Number(/^bayou_bytes_out_total (\d+)$/m.exec(text)?.[1]);
    expect(bytes).toBeGreaterThan(0);
    const b = new TestClient(base, 'websocket');
    await b.connect();
    await b.subscribe('/m/3');
    const text2 = await (await fetch(`${base}/metrics`)).text();
    expect(text2).toMatch(/^bayou_subscriptions 1$/m);
    await b.close();
    await a.close();
    await server.close();
  });
});
