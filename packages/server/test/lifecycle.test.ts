/** Connect holding, session expiry, the browser cookie, slow consumers and shutdown. */
import { describe, expect, it } from 'vitest';
import { WINDOW_MS } from '../src/session/load-gauge.js';
import { startServer } from './start-server.js';
import { eventually, TestClient } from './test-client.js';

async function post(base: string, messages: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${base}/bayeux`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(messages),
  });
  return { status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown>[] };
}

/** A long-polling session's clientId: the test then speaks for it with `post`. */
async function handshake(base: string, headers: Record<string, string> = {}): Promise<string> {
  const c = new TestClient(base, 'long-polling', headers);
  expect((await c.handshake()).successful).toBe(true);
  return c.clientId;
}

const connect = (clientId: string) => ({
  channel: '/meta/connect',
  clientId,
  connectionType: 'long-polling',
});

describe('long-poll connects', () => {
  it('answers the first connect at once, holds the next until timeout, and answers early when a message comes', async () => {
    // Wide margins: the first answer comes in milliseconds, the held one after 2.5 s.
    const { server, base } = await startServer({ timeout: 2500 });
    const id = await handshake(base);
    let t = Date.now();
    await post(base, [connect(id)]);
    expect(Date.now() - t).toBeLessThan(1500);
    t = Date.now();
    const held = await post(base, [connect(id)]);
    expect(Date.now() - t).toBeGreaterThanOrEqual(2400);
    expect(held.body).toMatchObject([{ channel: '/meta/connect', successful: true }]);
    await post(base, [{ channel: '/meta/subscribe', clientId: id, subscription: '/q' }]);
    const pending = post(base, [connect(id)]);
    await eventually(() => server.bayou.stats().heldLongPolls === 1);
    server.bayou.publish('/q', 'now');
    const early = await pending;
    expect(early.body.map((m) => m.channel)).toEqual(['/q', '/meta/connect']);
    await server.close();
  });

  it('keeps one outstanding connect per session: a new connect answers the held one', async () => {
    const { server, base } = await startServer({ timeout: 5000 });
    const id = await handshake(base);
    await post(base, [connect(id)]);
    const first = post(base, [connect(id)]);
    await eventually(() => server.bayou.stats().heldLongPolls === 1);
    const second = post(base, [connect(id)]);
    const t = Date.now();
    expect((await first).body[0]).toMatchObject({ channel: '/meta/connect', successful: true });
    expect(Date.now() - t).toBeLessThan(3000); // long before the 5 s hold
    await server.close();
    await second;
  });

  it('advises multiple-clients when one browser holds more long-polls than allowed', async () => {
    const { server, base } = await startServer({ timeout: 3000, maxSessionsPerBrowser: 1 });
    const first = new TestClient(base, 'long-polling');
    await first.handshake();
    const cookie = String(first.cookie);
    expect(cookie).toMatch(/^BAYEUX_BROWSER=/);
    expect(first.lastSetCookie).toMatch(/HttpOnly/);
    const tab1 = first.clientId;
    const tab2 = await handshake(base, { cookie });
    await post(base, [connect(tab1)], { cookie });
    await post(base, [connect(tab2)], { cookie });
    const held = post(base, [connect(tab1)], { cookie });
    await eventually(() => server.bayou.stats().heldLongPolls === 1);
    const t = Date.now();
    const extra = await post(base, [connect(tab2)], { cookie });
    expect(Date.now() - t).toBeLessThan(2000); // not held for the 3 s timeout
    expect(extra.body[0]).toMatchObject({
      successful: true,
      advice: { 'multiple-clients': true, reconnect: 'retry', interval: 2000 },
    });
    await server.close();
    await held;
  });
});

describe('longPollDelay', () => {
  const nextTurn = () => new Promise((r) => setImmediate(r));
  /** Keeps this process's event loop busy, as a saturated server's is. */
  const saturate = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // busy on purpose
    }
  };

  it('answers at the end of the turn while the event loop is not saturated, and gathers for the delay once it is', async () => {
    const { server, base } = await startServer({ timeout: 5000, longPollDelay: 300 });
    const id = await handshake(base);
    await post(base, [connect(id)]);
    await post(base, [{ channel: '/meta/subscribe', clientId: id, subscription: '/d' }]);
    const held = async () => {
      const pending = post(base, [connect(id)]);
      await eventually(() => server.bayou.stats().heldLongPolls === 1);
      // Wrapped: an async function returning the promise itself would wait for the answer.
      return { pending };
    };

    // An idle loop: the delay is not worth its latency, the first message goes at once.
    // The gauge reads utilization over windows of WINDOW_MS; two idle windows first, so the
    // handshake's work (or a loaded machine's test worker) is not what it reads.
    let { pending } = await held();
    // timed on purpose: idle time is what the gauge reads; no event stands for it.
    await new Promise((r) => setTimeout(r, 2 * WINDOW_MS + 20));
    await server.bayou.publish('/d', 1);
    // The next turn: the reply that carries 1 has gone at the end of this one.
    await nextTurn();
    server.bayou.publish('/d', 2);
    expect((await pending).body.map((m) => m.data ?? m.channel)).toEqual([1, '/meta/connect']);
    // The second waited in the queue and answers the next connect at once.
    expect((await post(base, [connect(id)])).body.map((m) => m.data ?? m.channel)).toEqual([
      2,
      '/meta/connect',
    ]);

    // A saturated loop: what arrives within the delay shares one response.
    ({ pending } = await held());
    saturate(500);
    await server.bayou.publish('/d', 3);
    await nextTurn(); // a later turn, well inside the 300 ms delay
    server.bayou.publish('/d', 4);
    expect((await pending).body.map((m) => m.data ?? m.channel)).toEqual([3, 4, '/meta/connect']);
    await server.close();
  });
});

describe('session expiry', () => {
  it('expires a session maxInterval after its last connect ended, and emits session:removed', async () => {
    const { server, base } = await startServer({ maxInterval: 300, sweepInterval: 50 });
    const removed: string[] = [];
    server.bayou.on('session:removed', (_s, reason) => removed.push(reason));
    const id = await handshake(base);
    await post(base, [connect(id)]);
    await post(base, [{ channel: '/meta/subscribe', clientId: id, subscription: '/e' }]);
    expect(server.bayou.sessionCount).toBe(1);
    await eventually(() => server.bayou.sessionCount === 0, 2000);
    expect(removed).toEqual(['timeout']);
    expect(server.bayou.subscriberCount('/e')).toBe(0);
    const late = await post(base, [connect(id)]);
    expect(late.body[0]).toMatchObject({ error: '402::session_unknown', advice: { reconnect: 'handshake' } });
    await server.close();
  });

  it('says at warn level, once, that a session expired with its WebSocket open (no connect after the reply)', async () => {
    const lines: Record<string, unknown>[] = [];
    const stream = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
    const { server, base } = await startServer({
      maxInterval: 300,
      sweepInterval: 50,
      logger: { level: 'warn', stream },
    });
    const quiet = async () => {
      const c = new TestClient(base, 'websocket');
      await c.handshake();
      // Answered at once; the test then sends no next connect on the open socket.
      await c.request({
        channel: '/meta/connect',
        clientId: c.clientId,
        connectionType: 'websocket',
        advice: { timeout: 0 },
      });
      return c;
    };
    const [a, b] = [await quiet(), await quiet()];
    await eventually(() => server.bayou.sessionCount === 0, 3000);
    const said = lines.filter((l) => String(l.msg).startsWith('session expired with its connection open'));
    // Two such expiries, said once (at most once a minute, with the count since).
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ carrier: 'websocket', expiredOnOpenCarrier: 1 });
    expect(said[0]?.sinceReplyMs).toBeGreaterThanOrEqual(300);
    // Its next connect on that socket is refused as for any unknown session.
    const late = await a.request({
      channel: '/meta/connect',
      clientId: a.clientId,
      connectionType: 'websocket',
    });
    expect(late).toMatchObject({ successful: false, error: '402::session_unknown' });
    await a.close();
    await b.close();
    await server.close();
  });

  it('keeps a WebSocket session alive while it keeps connecting', async () => {
    const { server, base } = await startServer({ maxInterval: 300, timeout: 200, sweepInterval: 50 });
    const c = new TestClient(base, 'websocket');
    await c.connect();
    // Five connects held for the 200 ms timeout each: past three maxIntervals.
    await eventually(() => c.received.filter((m) => m.channel === '/meta/connect').length >= 5);
    expect(server.bayou.session(c.clientId)).toBeDefined();
    await c.close();
    await eventually(() => server.bayou.sessionCount === 0, 2000);
    await server.close();
  });
});

describe('slow consumers', () => {
  it('drops a session whose queue passes the limit and counts it, without hurting others', async () => {
    const { server, base } = await startServer({ maxQueuedMessages: 50 });
    const id = await handshake(base);
    await post(base, [connect(id)]);
    await post(base, [{ channel: '/meta/subscribe', clientId: id, subscription: '/flood' }]);
    const good = new TestClient(base, 'websocket');
    await good.connect();
    await good.subscribe('/flood');
    // The long-poller never comes back for its messages.
    for (let i = 0; i < 100; i++) server.bayou.publish('/flood', i);
    await good.waitFor((m) => m.data === 99);
    expect(server.bayou.session(id)).toBeUndefined();
    expect(server.bayou.stats().slowConsumers).toBe(1);
    expect(good.deliveries('/flood')).toHaveLength(100);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^bayou_slow_consumer_disconnects_total 1$/m);
    await good.close();
    await server.close();
  });
});

describe('slow consumers by bytes (maxQueuedBytes)', () => {
  it('drops a long-polling session whose queue passes the byte cap long before the message cap; a WebSocket session flushes early', async () => {
    const { server, base } = await startServer({ maxQueuedBytes: 64 * 1024 });
    const id = await handshake(base);
    await post(base, [connect(id)]);
    await post(base, [{ channel: '/meta/subscribe', clientId: id, subscription: '/big' }]);
    const good = new TestClient(base, 'websocket');
    await good.connect();
    await good.subscribe('/big');
    const removed: string[] = [];
    server.bayou.on('session:removed', (s, reason) =>
      removed.push(`${s.id === id ? 'poller' : 'other'}:${reason}`),
    );
    // 20 messages of 16 KiB in one turn: 320 KiB, 20 messages (the message cap is 10,000).
    const chunk = 'y'.repeat(16 * 1024);
    for (let i = 0; i < 20; i++) server.bayou.publish('/big', { i, chunk });
    await good.waitFor((m) => (m.data as { i?: number } | undefined)?.i === 19);
    expect(removed).toEqual(['poller:slow-consumer']);
    expect(server.bayou.session(id)).toBeUndefined();
    expect(server.bayou.session(good.clientId)).toBeDefined();
    expect(good.deliveries('/big')).toHaveLength(20);
    expect(server.bayou.stats().slowConsumers).toBe(1);
    await good.close();
    await server.close();
  });
});

describe('slow WebSocket readers', () => {
  it('drops a session whose socket buffers more than maxBufferedBytes, closing it with 1008', async () => {
    const { server, base } = await startServer({ maxBufferedBytes: 256 * 1024 });
    const slow = new TestClient(base, 'websocket');
    await slow.connect();
    await slow.subscribe('/bulk');
    // Stop reading: the kernel buffers fill, then the server-side socket buffer grows.
    (slow as unknown as { ws: { _socket: { pause(): void } } }).ws._socket.pause();
    const removed: string[] = [];
    server.bayou.on('session:removed', (_s, reason) => removed.push(reason));
    const chunk = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 2000 && removed.length === 0; i++) {
      server.bayou.publish('/bulk', { i, chunk });
      if (i % 20 === 19) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => removed.length > 0, 10_000);
    expect(removed).toEqual(['slow-consumer']);
    expect(server.bayou.stats().slowConsumers).toBe(1);
    expect(server.bayou.sessionCount).toBe(0);
    await slow.close();
    await server.close();
  });
});

describe('graceful shutdown', () => {
  it('ends every session: held connects get 402 with handshake advice, sockets close with 1001', async () => {
    const { server, base } = await startServer({ timeout: 10_000 });
    const removed: string[] = [];
    server.bayou.on('session:removed', (_s, reason) => removed.push(reason));
    const id = await handshake(base);
    await post(base, [connect(id)]);
    const held = post(base, [connect(id)]);
    const ws = new TestClient(base, 'websocket');
    await ws.connect();
    await eventually(() => server.bayou.stats().heldLongPolls === 1);
    await server.close();
    expect((await held).body[0]).toMatchObject({
      channel: '/meta/connect',
      successful: false,
      error: '402::session_unknown',
      advice: { reconnect: 'handshake', interval: 0 },
    });
    await eventually(() => ws.closedWith !== null);
    expect(ws.closedWith).toBe(1001);
    expect(removed).toEqual(['shutdown', 'shutdown']);
  });
  it('sends a WebSocket what was queued before the 402, in order', async () => {
    const { server, base } = await startServer({ timeout: 10_000 });
    const ws = new TestClient(base, 'websocket');
    await ws.connect();
    // The loop's second connect went out with the first reply: once the subscribe (sent
    // after it on the same socket) is answered, that connect is held.
    await ws.waitFor((m) => m.channel === '/meta/connect');
    await ws.subscribe('/news');
    // Published in the same turn as the close: still in the session's queue when it ends.
    for (let n = 0; n < 5; n++) server.bayou.publish('/news', { n });
    await server.close();
    const refused = await ws.waitFor((m) => m.channel === '/meta/connect' && m.successful === false);
    expect(refused).toMatchObject({ error: '402::session_unknown', advice: { reconnect: 'handshake' } });
    const after = ws.received.indexOf(refused);
    const news = ws.received.filter((m) => m.channel === '/news');
    expect(news.map((m) => (m.data as { n: number }).n)).toEqual([0, 1, 2, 3, 4]);
    for (const m of news) expect(ws.received.indexOf(m)).toBeLessThan(after);
  });
});

describe('long-polling bodies', () => {
  it('accepts application/x-www-form-urlencoded message= bodies', async () => {
    const { server, base } = await startServer();
    const body = new URLSearchParams({
      message: JSON.stringify([
        { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
      ]),
    });
    const r = await fetch(`${base}/bayeux`, { method: 'POST', body });
    expect(r.status).toBe(200);
    expect(((await r.json()) as Record<string, unknown>[])[0]).toMatchObject({ successful: true });
    await server.close();
  });
});
