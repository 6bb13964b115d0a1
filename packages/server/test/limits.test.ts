/**
 * The limits extension over both transports: handshakes per second and sessions per IP on
 * `/meta/handshake`, the publish rate per session on publishes and service calls, each
 * answered with a Bayeux error and advice, counted in `/metrics`, and keyed on Fastify's
 * `request.ip` (so `trustProxy` applies).
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bayou, type RequestInfo } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { TestClient, type Transport } from './test-client.js';

function metric(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(line));
  return found === undefined ? Number.NaN : Number(found.slice(line.length).trim());
}

describe.each<Transport>(['websocket', 'long-polling'])('limits over %s', (transport) => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({
      limits: { publishRate: 1, publishBurst: 3, maxSessionsPerIp: 3, handshakeRate: 1, handshakeBurst: 4 },
    });
    s.server.bayou.service('/service/echo', (data) => data);
  });
  afterAll(() => s.server.close());

  it('refuses a publish or service call past the session rate with 429 and a retry interval', async () => {
    const c = new TestClient(s.base, transport);
    await c.connect();
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await c.publish('/x', i));
    expect(replies.every((r) => r.successful === true)).toBe(true);
    const refused = await c.publish('/x', 3);
    expect(refused).toMatchObject({
      successful: false,
      error: '429:/x:rate_limited',
      advice: { reconnect: 'retry' },
    });
    expect((refused.advice as { interval: number }).interval).toBeGreaterThan(0);
    expect(await c.request({ channel: '/service/echo', clientId: c.clientId, data: 1 })).toMatchObject({
      error: '429:/service/echo:rate_limited',
    });
    // Subscriptions and connects are not publishes.
    expect(await c.subscribe('/y')).toMatchObject({ successful: true });
    await c.close();
  });

  it('refuses sessions past the per-IP cap, freeing a slot when a session ends', async () => {
    // One session is left from the test above; the cap is 3.
    const clients = [new TestClient(s.base, transport), new TestClient(s.base, transport)];
    for (const c of clients) expect(await c.connect()).toMatchObject({ successful: true });
    const third = new TestClient(s.base, transport);
    expect(await third.connect()).toMatchObject({
      successful: false,
      error: '403:3:session_limit',
      advice: { reconnect: 'handshake' },
    });
    await clients[0]?.request({ channel: '/meta/disconnect', clientId: clients[0].clientId });
    const again = new TestClient(s.base, transport);
    expect(await again.connect()).toMatchObject({ successful: true });
    for (const c of [...clients, third, again]) await c.close();
  });

  it('refuses handshakes past the per-IP rate, and counts every refusal in /metrics', async () => {
    const fast = await startServer({ limits: { maxSessionsPerIp: 0, handshakeRate: 1, handshakeBurst: 2 } });
    const replies = [];
    const clients = [];
    for (let i = 0; i < 3; i++) {
      const c = new TestClient(fast.base, transport);
      clients.push(c);
      replies.push(await c.connect());
    }
    expect(replies.map((r) => r.successful)).toEqual([true, true, false]);
    expect(replies[2]).toMatchObject({
      error: '429:handshake:rate_limited',
      advice: { reconnect: 'handshake' },
    });
    const text = await (await fetch(`${fast.base}/metrics`)).text();
    expect(metric(text, 'bayou_limit_refusals_total{limit="handshakes"}')).toBe(1);
    expect(metric(text, 'bayou_limit_refusals_total{limit="publish"}')).toBe(0);
    const before = await (await fetch(`${s.base}/metrics`)).text();
    expect(metric(before, 'bayou_limit_refusals_total{limit="publish"}')).toBe(2);
    expect(metric(before, 'bayou_limit_refusals_total{limit="sessions"}')).toBe(1);
    for (const c of clients) await c.close();
    await fast.server.close();
  });
});

describe.each<Transport>(['websocket', 'long-polling'])('client IP behind a proxy over %s', (transport) => {
  const seen: (string | undefined)[] = [];
  let base: string;
  let app: ReturnType<typeof Fastify>;
  beforeAll(async () => {
    app = Fastify({ trustProxy: '127.0.0.1' });
    await app.register(bayou, {
      limits: { maxSessionsPerIp: 1 },
      authenticate: (_m: unknown, request: RequestInfo) => {
        seen.push(request.ip);
        return true;
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => app.close());

  it('gives hooks request.ip from X-Forwarded-For and limits per that IP', async () => {
    const a = new TestClient(base, transport, { 'x-forwarded-for': '203.0.113.7' });
    expect(await a.connect()).toMatchObject({ successful: true });
    expect(seen.at(-1)).toBe('203.0.113.7');
    const sameIp = new TestClient(base, transport, { 'x-forwarded-for': '203.0.113.7' });
    expect(await sameIp.connect()).toMatchObject({ error: '403:1:session_limit' });
    const otherIp = new TestClient(base, transport, { 'x-forwarded-for': '198.51.100.2' });
    expect(await otherIp.connect()).toMatchObject({ successful: true });
    for (const c of [a, sameIp, otherIp]) await c.close();
  });
});
