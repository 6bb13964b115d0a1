/**
 * Transport fallback, reconnection and dead-link detection, under fake timers against the
 * in-process fake Bayeux server.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { tick, track, useFakeServer } from '../test/fake-client-harness.js';
import type { FakeBayeuxServer } from '../test/fake-server.js';
import { ErrorCodes, longPolling, websocket } from './index.js';

let server: FakeBayeuxServer;
const harness = useFakeServer();
const client = harness.client;
beforeEach(() => {
  server = harness.server();
});

describe('transport fallback', () => {
  it('falls back to long-polling at once when the WebSocket upgrade is refused', async () => {
    server.websocketMode = 'refuse';
    const c = client();
    const { transports } = track(c);
    c.connect();
    await tick(50);
    expect(c.state).toBe('connected');
    expect(transports).toEqual(['long-polling']);
  });

  it('falls back when the WebSocket does not open within wsOpenTimeout', async () => {
    server.websocketMode = 'hang';
    const c = client({ wsOpenTimeout: 5000 });
    c.connect();
    await tick(4900);
    expect(c.state).toBe('connecting');
    await tick(200);
    expect(c.transport).toBe('long-polling');
  });

  it('waits longer for a WebSocket after each open that timed out, up to connectDeadline', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    server.websocketMode = 'hang';
    const c = client({ transports: [websocket], wsOpenTimeout: 1000, connectDeadline: 4000 });
    c.connect().catch(() => undefined);
    await tick(12_000);
    const first = server.attempts[0]?.at ?? 0;
    const at = server.attempts.filter((a) => a.kind === 'websocket').map((a) => a.at - first);
    // Each attempt gives up after 1, 2, 4 s (the ceiling), then waits the backoff (500 ms, no jitter).
    // A fixed 1 s open timeout would have made 8 attempts by now.
    expect(at).toEqual([0, 1500, 4000, 8500]);
  });

  it('falls back when the WebSocket opens but delivers nothing within connectTimeout', async () => {
    server.websocketMode = 'blackhole';
    const c = client({ connectTimeout: 3000 });
    c.connect();
    await tick(2900);
    expect(c.state).toBe('connecting');
    await tick(200);
    expect(c.state).toBe('connected');
    expect(c.transport).toBe('long-polling');
  });

  it('probes WebSocket with growing delays and moves back without losing or repeating a message', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    server.websocketMode = 'refuse';
    const c = client({ minProbeDelay: 1000, maxProbeDelay: 4000 });
    const { transports } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    const got: number[] = [];
    c.subscribe('/feed', (m) => got.push(m.data as number));
    await tick(20);
    const from = server.attempts.length;
    await tick(14_000);
    const probes = server.attempts
      .slice(from)
      .filter((a) => a.kind === 'websocket')
      .map((a) => a.at);
    const gaps = probes.slice(1).map((t, i) => Math.round((t - (probes[i] as number)) / 100) * 100);
    expect(gaps.slice(0, 3)).toEqual([3000, 4000, 4000]);
    expect(c.transport).toBe('long-polling');
    // WebSocket works again; publish steadily while the client moves over.
    server.websocketMode = 'accept';
    let n = 0;
    for (let t = 0; t < 10_000; t += 5) {
      server.publish('/feed', ++n);
      await tick(5);
    }
    await tick(100);
    expect(transports).toEqual(['long-polling', 'websocket']);
    expect(got).toHaveLength(n);
    expect(new Set(got).size).toBe(n);
  });

  it('follows the multiple-clients advice: polls at the advised interval instead of holding', async () => {
    server.websocketMode = 'refuse';
    server.connectionTypes = ['long-polling'];
    server.multipleClients = true;
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const before = server.count('/meta/connect');
    await tick(10_000);
    expect(server.count('/meta/connect') - before).toBe(5);
    expect(c.state).toBe('connected');
  });

  it('keeps using WebSocket after a server outage instead of demoting it', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    server.setDown(true);
    await tick(3000);
    server.setDown(false);
    await tick(25_000);
    expect(c.state).toBe('connected');
    expect(c.transport).toBe('websocket');
  });
});

describe('reconnecting', () => {
  it('reconnects, re-handshakes on 402 and resubscribes after a server restart', async () => {
    const c = client();
    const { states } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    server.restart();
    await tick(3000);
    expect(states).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);
    expect(server.count('/meta/handshake')).toBe(2);
    server.publish('/news', 'after restart');
    await tick(20);
    expect(got).toEqual(['after restart']);
  });

  it('resubscribes after a new handshake even when the first connect of that session failed', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    // The session is lost; the re-handshake succeeds but its first connect dies with the socket.
    server.dropFirstConnect = true;
    server.restart();
    await tick(3000);
    expect(c.state).toBe('connected');
    expect(server.count('/meta/handshake')).toBe(2);
    server.publish('/news', 'after the failed connect');
    await tick(20);
    expect(got).toEqual(['after the failed connect']);
  });

  it.each([
    ['websocket', [websocket]],
    ['long-polling', [longPolling]],
  ] as const)(
    'takes a subscribe answered 402 for a lost session, not a refusal: it is live again on the next session (%s)',
    async (_, transports) => {
      const c = client({ transports: [...transports] });
      await Promise.all([c.connect(), tick(50)]);
      const errors: unknown[] = [];
      c.on('error', (e) => errors.push(e));
      const a: unknown[] = [];
      const b: unknown[] = [];
      c.subscribe('/a', (m) => a.push(m.data));
      await tick(20);
      server.forgetSessions();
      const sub = c.subscribe('/b', (m) => b.push(m.data));
      await tick(20);
      expect(server.count('/meta/handshake')).toBe(1); // the 402 came on the subscribe first
      await tick(40_000);
      expect(server.count('/meta/handshake')).toBe(2);
      expect(sub.status).toBe('live');
      server.publish('/a', 'a after');
      server.publish('/b', 'b after');
      await tick(20);
      expect({ a, b, errors }).toEqual({ a: ['a after'], b: ['b after'], errors: [] });
    },
  );

  it('sends again, alone, a long-poll request answered 502 (a balancer whose next node is dead), keeping the connection', async () => {
    let failNext = 2; // the next two requests without a connect: a subscribe, then a publish
    const fetch = server.fetch;
    const balanced = ((url: string, init: { body: string }) => {
      if (
        failNext > 0 &&
        !init.body.includes('"/meta/connect"') &&
        !init.body.includes('"/meta/handshake"')
      ) {
        failNext--;
        return Promise.resolve({ ok: false, status: 502, text: async () => 'bad gateway' });
      }
      return fetch(url, init as never);
    }) as typeof fetch;
    const c = client({ transports: [longPolling], fetch: balanced });
    const { states } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    const sub = c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    expect(sub.status).toBe('pending');
    await tick(3000);
    expect(sub.status).toBe('live');
    const published = c.publish('/news', 'once');
    await tick(3000);
    await published;
    expect({ got, failNext, states, handshakes: server.count('/meta/handshake') }).toEqual({
      got: ['once'],
      failNext: 0,
      states: ['connecting', 'connected'],
      handshakes: 1,
    });
  });

  it('sends a subscribe answered 503 (the engine away) again after a backoff, and it goes live', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const errors: unknown[] = [];
    c.on('error', (e) => errors.push(e));
    server.unavailableSubscribes = 2;
    const got: unknown[] = [];
    const sub = c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    expect(sub.status).toBe('pending');
    await tick(5000);
    expect(server.count('/meta/subscribe')).toBe(3);
    expect(sub.status).toBe('live');
    server.publish('/news', 'once back');
    await tick(20);
    expect({ got, errors }).toEqual({ got: ['once back'], errors: [] });
  });

  it('backs off with growing, jittered delays while the server is down, then reconnects', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const c = client({ minReconnectDelay: 100, maxReconnectDelay: 1600 });
    await Promise.all([c.connect(), tick(50)]);
    const cut = Date.now();
    server.setDown(true);
    const from = server.attempts.length;
    await tick(6000);
    expect(c.state).toBe('reconnecting');
    // Every attempt tries WebSocket, then long-polling; the gaps are the backoff delays, the
    // first one after the cut included (a cut link is no reason to skip the backoff).
    const starts = [
      cut,
      ...server.attempts
        .slice(from)
        .filter((a) => a.kind === 'websocket')
        .map((a) => a.at),
    ];
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number));
    expect(gaps.slice(0, 6).map((g) => Math.round(g / 10) * 10)).toEqual([200, 300, 500, 900, 1600, 1600]);
    server.setDown(false);
    await tick(2000);
    expect(c.state).toBe('connected');
    expect(c.transport).toBe('websocket');
  });

  it('queues publishes while disconnected and sends them on reconnect', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    server.setDown(true);
    await tick(10);
    expect(c.state).toBe('reconnecting');
    const p = c.publish('/q', 'while down');
    await tick(1000);
    expect(server.received.some((m) => m.channel === '/q')).toBe(false);
    server.setDown(false);
    await tick(25_000);
    await expect(p).resolves.toBeUndefined();
    expect(server.count('/q')).toBe(1);
  });

  it('rejects a publish at once when the offline queue is full', async () => {
    const c = client({ maxQueuedMessages: 2 });
    c.publish('/q', 1).catch(() => {});
    c.publish('/q', 2).catch(() => {});
    await expect(c.publish('/q', 3)).rejects.toMatchObject({ code: ErrorCodes.QUEUE_FULL });
  });

  it('detects a connection that stops answering and reconnects', async () => {
    const c = client({ connectTimeout: 2000 });
    const { states } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    // The socket stays open but nothing comes back any more.
    for (const s of server.sockets) (s as { mode: string }).mode = 'blackhole';
    await tick(server.timeout + 2000 + 100);
    expect(states).toContain('reconnecting');
    await tick(5000);
    expect(c.state).toBe('connected');
  });
});

describe('dead-link detection', () => {
  it('gives up a WebSocket that stops passing data within deadLinkTimeout, and moves on', async () => {
    const c = client();
    const { states, transports } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    const start = Date.now();
    // Every WebSocket through this path is black-holed from now on, old and new.
    for (const s of server.sockets) s.mode = 'blackhole';
    server.websocketMode = 'blackhole';
    let lostAt = 0;
    c.on('state', (state) => {
      if (state === 'reconnecting') lostAt = Date.now() - start;
    });
    await tick(17_000);
    expect(c.state).toBe('connected');
    await tick(3000);
    expect(lostAt).toBeGreaterThanOrEqual(17_000);
    expect(lostAt).toBeLessThanOrEqual(18_100);
    expect(states.slice(-2)).toEqual(['reconnecting', 'connected']);
    expect(transports).toEqual(['websocket', 'long-polling']);
  });

  it('moves on from a one-way black hole, keeping the session and resending an unanswered publish', async () => {
    const c = client();
    const { transports } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    const session = c.clientId;
    for (const s of server.sockets) s.mode = 'oneway';
    server.websocketMode = 'oneway';
    await tick(1000);
    let published = false;
    c.publish('/q', 'into the void').then(() => {
      published = true;
    });
    const before = server.count('/meta/connect');
    await tick(9500);
    // The renewal reached the server (it passes that way); its answer did not come back.
    expect(server.count('/meta/connect')).toBe(before + 1);
    expect(c.transport).toBe('websocket');
    await tick(8000);
    expect(transports).toEqual(['websocket', 'long-polling']);
    expect(c.clientId).toBe(session);
    expect(published).toBe(true);
    // The server had it already: without a reply the client cannot know, so it is sent again.
    expect(server.count('/q')).toBe(2);
  });

  it('renews an idle connect every deadLinkTimeout / 2 and keeps a healthy WebSocket', async () => {
    const c = client({ deadLinkTimeout: 8000 });
    const { states } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    const before = server.count('/meta/connect');
    await tick(60_000);
    expect(states).toEqual(['connecting', 'connected']);
    expect(c.transport).toBe('websocket');
    // Held connects last 30 s on this server; the watchdog renews each after 4 s of silence.
    expect(server.count('/meta/connect') - before).toBe(15);
  });

  it('waits the hold timeout plus connectTimeout when turned off', async () => {
    const c = client({ deadLinkTimeout: 0, connectTimeout: 2000 });
    const { states } = track(c);
    await Promise.all([c.connect(), tick(50)]);
    for (const s of server.sockets) s.mode = 'blackhole';
    await tick(25_000);
    expect(states).toEqual(['connecting', 'connected']);
    await tick(server.timeout + 2000 - 25_000 + 100);
    expect(states).toContain('reconnecting');
  });

  it('sets aside a WebSocket that answers one probe then goes silent, with growing delays', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    server.websocketMode = 'refuse';
    const c = client({ minProbeDelay: 1000, maxProbeDelay: 8000 });
    const changes: [string, number][] = [];
    c.on('transport', (t) => changes.push([t, Date.now()]));
    await Promise.all([c.connect(), tick(50)]);
    server.websocketMode = 'once';
    // Traffic throughout: long-polling answers many connects, which must not shorten the delays.
    c.subscribe('/busy', () => {});
    for (let t = 0; t < 120_000; t += 100) {
      server.publish('/busy', t);
      await tick(100);
    }
    const names = changes.map(([t]) => t);
    expect(names.slice(0, 7)).toEqual([
      'long-polling',
      'websocket',
      'long-polling',
      'websocket',
      'long-polling',
      'websocket',
      'long-polling',
    ]);
    const spans = changes.slice(1).map(([, at], i) => at - (changes[i] as [string, number])[1]);
    // Each stay on the silent WebSocket ends within the 20 s default (given up at 18 s, then
    // the first step of the reconnect backoff: 500 + 499 ms here)...
    const onWebSocket = spans.filter((_, i) => i % 2 === 1);
    for (const span of onWebSocket) expect(span).toBeLessThanOrEqual(19_100);
    // ...and each stay on long-polling before the next probe is longer than the one before.
    const onLongPolling = spans.filter((_, i) => i % 2 === 0);
    expect(onLongPolling.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < onLongPolling.length; i++) {
      expect(onLongPolling[i]).toBeGreaterThanOrEqual(onLongPolling[i - 1] as number);
    }
    expect(onLongPolling.at(-1)).toBeGreaterThan((onLongPolling[0] as number) * 2);
    expect(c.state).toBe('connected');
  });
});
