import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { eventually, TestClient, type Transport } from './test-client.js';

describe.each<Transport>(['websocket', 'long-polling'])('Bayeux core over %s', (transport) => {
  let s: Started;
  const clients: TestClient[] = [];
  const client = async (): Promise<TestClient> => {
    const c = new TestClient(s.base, transport);
    clients.push(c);
    const reply = await c.connect();
    expect(reply.successful).toBe(true);
    return c;
  };

  beforeEach(async () => {
    s = await startServer();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.server.close();
  });

  it('handshakes with an unguessable clientId and both connection types', async () => {
    const c = new TestClient(s.base, transport);
    clients.push(c);
    const reply = await c.connect();
    expect(reply).toMatchObject({
      channel: '/meta/handshake',
      successful: true,
      version: '1.0',
      supportedConnectionTypes: ['websocket', 'streaming', 'eventsource', 'long-polling'],
      advice: { reconnect: 'retry', interval: 0, timeout: 2000 },
    });
    // ≥ 128 bits of base64url.
    // <node id>.<144 random bits>: the owning node, then 24 base64url characters.
    expect(String(reply.clientId)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{24}$/);
    expect(s.server.bayou.session(String(reply.clientId))?.transport).toBe(transport);
  });

  it('delivers a publish to every subscriber, once each, including wildcard subscribers', async () => {
    const [a, b, c] = [await client(), await client(), await client()];
    expect((await a.subscribe('/chat/room')).successful).toBe(true);
    expect((await b.subscribe(['/chat/*', '/chat/**'])).successful).toBe(true);
    expect((await c.subscribe('/**')).successful).toBe(true);
    const reply = await a.publish('/chat/room', { text: 'hello' });
    expect(reply).toMatchObject({ channel: '/chat/room', successful: true });
    for (const x of [a, b, c]) await x.waitFor((m) => m.channel === '/chat/room');
    for (const x of [a, b, c]) await x.drained((ch, d) => s.server.bayou.publish(ch, d));
    for (const x of [a, b, c])
      expect(x.deliveries('/chat')).toEqual([{ channel: '/chat/room', data: { text: 'hello' } }]);
  });

  it('does not deliver /a/* matches deeper than one segment, but /a/** does', async () => {
    const one = await client();
    const deep = await client();
    await one.subscribe('/a/*');
    await deep.subscribe('/a/**');
    s.server.bayou.publish('/a/b/c', 1);
    s.server.bayou.publish('/a/b', 2);
    await deep.waitFor((m) => m.channel === '/a/b');
    await one.waitFor((m) => m.channel === '/a/b');
    expect(deep.deliveries('/a').map((m) => m.data)).toEqual([1, 2]);
    expect(one.deliveries('/a').map((m) => m.data)).toEqual([2]);
  });

  it('stops delivering after unsubscribe', async () => {
    const a = await client();
    await a.subscribe('/news');
    s.server.bayou.publish('/news', 1);
    await a.waitFor((m) => m.data === 1);
    expect((await a.unsubscribe('/news')).successful).toBe(true);
    expect(s.server.bayou.subscriberCount('/news')).toBe(0);
    s.server.bayou.publish('/news', 2);
    const b = await client();
    await b.subscribe('/news');
    s.server.bayou.publish('/news', 3);
    await b.waitFor((m) => m.data === 3);
    await a.drained((ch, d) => s.server.bayou.publish(ch, d));
    expect(a.deliveries('/news').map((m) => m.data)).toEqual([1]);
  });

  it('answers a /service request to the caller only and never broadcasts it', async () => {
    s.server.bayou.service('/service/echo', (data, ctx) => ({ echo: data, from: ctx.session.id }));
    const a = await client();
    const other = await client();
    await other.subscribe('/service/echo');
    const [reply] = await a.send([
      { id: 'svc-1', channel: '/service/echo', clientId: a.clientId, data: 'ping' },
    ]);
    expect(reply).toEqual({ id: 'svc-1', channel: '/service/echo', successful: true });
    const answer = await a.waitFor((m) => m.channel === '/service/echo' && m.data !== undefined);
    expect(answer).toEqual({
      id: 'svc-1',
      channel: '/service/echo',
      successful: true,
      data: { echo: 'ping', from: a.clientId },
    });
    for (const x of [a, other]) await x.drained((ch, d) => s.server.bayou.publish(ch, d));
    expect(a.received.filter((m) => m.channel === '/service/echo')).toHaveLength(2);
    expect(other.deliveries('/service')).toEqual([]);
  });

  it('answers a service without a handler with 404 and a failing handler with 500', async () => {
    s.server.bayou.service('/service/boom', () => {
      throw new Error('boom');
    });
    const a = await client();
    expect(await a.publish('/service/nothing', 1)).toMatchObject({
      successful: false,
      error: '404:/service/nothing:service_unknown',
    });
    expect(await a.publish('/service/boom', 1)).toMatchObject({
      successful: false,
      error: '500:/service/boom:service_failed',
    });
  });

  it('removes the session on disconnect', async () => {
    const a = await client();
    await a.subscribe('/x');
    expect(s.server.bayou.sessionCount).toBe(1);
    expect(await a.request({ channel: '/meta/disconnect', clientId: a.clientId })).toMatchObject({
      successful: true,
    });
    await eventually(() => s.server.bayou.sessionCount === 0);
    expect(s.server.bayou.subscriberCount('/x')).toBe(0);
  });
});

describe('batching', () => {
  it('sends everything queued for a WebSocket session in one turn as one frame', async () => {
    const s = await startServer();
    const c = new TestClient(s.base, 'websocket');
    await c.connect();
    await c.subscribe('/batch');
    const before = c.received.length;
    for (let i = 0; i < 10; i++) s.server.bayou.publish('/batch', i);
    await c.waitFor((m) => m.data === 9);
    expect(c.deliveries('/batch').map((m) => m.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const frames = s.server.bayou.stats().frames;
    s.server.bayou.publish('/batch', 'a');
    s.server.bayou.publish('/batch', 'b');
    await c.waitFor((m) => m.data === 'b');
    expect(s.server.bayou.stats().frames - frames).toBe(1);
    expect(c.received.length - before).toBe(12);
    await c.close();
    await s.server.close();
  });
});
