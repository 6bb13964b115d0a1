/**
 * The connection state machine, reconnection and transport fallback, under fake timers
 * against the in-process fake Bayeux server.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeBayeuxServer } from '../test/fake-server.js';
import {
  BayouClient,
  type BayouClientOptions,
  type BayouError,
  type ConnectionState,
  ErrorCodes,
  type GapInfo,
  type Message,
} from './index.js';

let server: FakeBayeuxServer;

function client(options: BayouClientOptions = {}): BayouClient {
  return new BayouClient('http://bayou.test/bayeux', {
    WebSocket: server.WebSocket,
    fetch: server.fetch,
    minProbeDelay: 1000,
    maxProbeDelay: 8000,
    ...options,
  });
}

function track(c: BayouClient): { states: ConnectionState[]; transports: string[] } {
  const states: ConnectionState[] = [];
  const transports: string[] = [];
  c.on('state', (s) => states.push(s));
  c.on('transport', (t) => transports.push(t));
  return { states, transports };
}

const tick = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
  server = new FakeBayeuxServer();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('connecting', () => {
  it('handshakes over WebSocket and goes connecting -> connected', async () => {
    const c = client();
    const { states, transports } = track(c);
    const done = c.connect();
    expect(c.state).toBe('connecting');
    await tick(50);
    await done;
    expect(states).toEqual(['connecting', 'connected']);
    expect(transports).toEqual(['websocket']);
    expect(c.transport).toBe('websocket');
    const hs = server.received.find((m) => m.channel === '/meta/handshake');
    expect(hs?.supportedConnectionTypes).toEqual(['websocket', 'long-polling']);
  });

  it('sends the handshake option as ext, calling a function before every handshake', async () => {
    let n = 0;
    const c = client({ handshake: () => ({ token: `t${++n}` }) });
    c.connect();
    await tick(50);
    server.restart();
    await tick(5000);
    const exts = server.received.filter((m) => m.channel === '/meta/handshake').map((m) => m.ext);
    expect(exts[0]).toEqual({
      token: 't1',
      ack: true,
      replay: true,
      bayou: { records: true, compact: true },
    });
    expect(exts.at(-1)).toMatchObject({ token: `t${exts.length}` });
    expect(exts.length).toBeGreaterThan(1);
  });

  it('sends the token option as ext.auth.token, asking an async token function again at every handshake', async () => {
    let n = 0;
    const c = client({ token: async () => `jwt-${++n}`, handshake: { app: 1 } });
    c.connect();
    await tick(50);
    server.restart();
    await tick(5000);
    const exts = server.received.filter((m) => m.channel === '/meta/handshake').map((m) => m.ext);
    expect(exts[0]).toMatchObject({ app: 1, auth: { token: 'jwt-1' } });
    expect(exts.length).toBeGreaterThan(1);
    expect(exts.at(-1)).toMatchObject({ auth: { token: `jwt-${exts.length}` } });
  });

  it('uses long-polling when the server does not offer WebSocket', async () => {
    server.websocketMode = 'refuse';
    server.connectionTypes = ['long-polling'];
    const c = client();
    c.connect();
    await tick(50);
    expect(c.state).toBe('connected');
    expect(c.transport).toBe('long-polling');
    await tick(60_000);
    // Nothing to probe: the server offers no WebSocket.
    expect(c.transport).toBe('long-polling');
  });
});

describe('subscribe, publish, request, batch', () => {
  it('delivers messages to exact and wildcard subscriptions, settles ready and publish', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const exact: unknown[] = [];
    const wild: unknown[] = [];
    const deep: unknown[] = [];
    const a = c.subscribe('/chat/room', (m) => exact.push(m.data));
    const b = c.subscribe('/chat/*', (m) => wild.push(m.data));
    const d = c.subscribe('/chat/**', (m) => deep.push(m.data));
    await Promise.all([a.ready, b.ready, d.ready, tick(20)]);
    await Promise.all([c.publish('/chat/room', 1), tick(20)]);
    server.publish('/chat/room/deep', 2);
    await tick(20);
    expect(exact).toEqual([1]);
    expect(wild).toEqual([1]);
    expect(deep).toEqual([1, 2]);
  });

  it('shares one server subscription between handlers and unsubscribes with the last', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const one = c.subscribe('/a', () => {});
    const two = c.subscribe('/a', () => {});
    await tick(20);
    expect(server.count('/meta/subscribe')).toBe(1);
    one.unsubscribe();
    await tick(20);
    expect(server.count('/meta/unsubscribe')).toBe(0);
    two.unsubscribe();
    await tick(20);
    expect(server.count('/meta/unsubscribe')).toBe(1);
  });

  it('rejects a refused publish with a BayouError carrying the Bayeux error', async () => {
    server.services.set('/service/fail', () => {
      throw new Error('403:/service/fail:publish_denied');
    });
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const p = c.request('/service/fail', {});
    const caught = p.then(
      () => null,
      (e: unknown) => e as BayouError,
    );
    await tick(20);
    const err = await caught;
    expect(err?.code).toBe(ErrorCodes.REJECTED);
    expect(err?.bayeux).toEqual({ code: 403, args: ['/service/fail'], message: 'publish_denied' });
  });

  it('resolves request() with the data of the reply', async () => {
    server.services.set('/service/echo', (data) => ({ echoed: data }));
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const p = c.request('/service/echo', 42);
    await tick(20);
    await expect(p).resolves.toEqual({ echoed: 42 });
  });

  it('resolves request() with the answer that follows the publish acknowledgement', async () => {
    server.services.set('/service/echo', (data) => ({ echoed: data }));
    server.serviceStyle = 'separate';
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const p = c.request('/service/echo', 7);
    await tick(20);
    await expect(p).resolves.toEqual({ echoed: 7 });
  });

  it('resolves request() with undefined when a server only acknowledges it', async () => {
    server.serviceStyle = 'ack-only';
    const c = client({ connectTimeout: 3000 });
    await Promise.all([c.connect(), tick(50)]);
    let result: unknown = 'pending';
    c.request('/service/none', 1).then((r) => {
      result = r;
    });
    await tick(2000);
    expect(result).toBe('pending');
    await tick(1100);
    expect(result).toBeUndefined();
    expect(c.state).toBe('connected');
  });

  it('sends everything inside batch() as one frame', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const frames: Message[][] = [];
    const original = server.process.bind(server);
    server.process = (messages, socket, respond) => {
      frames.push(messages);
      original(messages, socket, respond);
    };
    c.batch(() => {
      c.subscribe('/x', () => {});
      c.publish('/x', 1);
      c.publish('/x', 2);
    });
    await tick(20);
    const batch = frames.find((f) => f.some((m) => m.channel === '/x'));
    expect(batch?.map((m) => m.channel)).toEqual(['/meta/subscribe', '/x', '/x']);
  });

  it('runs extensions on outgoing and incoming messages', async () => {
    const c = client();
    const incoming: string[] = [];
    c.use({
      outgoing: (m) => ({ ...m, ext: { ...m.ext, stamp: 1 } }),
      incoming: (m) => {
        incoming.push(m.channel);
        return m;
      },
    });
    await Promise.all([c.connect(), tick(50)]);
    expect(server.received.every((m) => (m.ext as { stamp?: number })?.stamp === 1)).toBe(true);
    expect(incoming).toContain('/meta/handshake');
  });

  it('throws a TypeError for channels that cannot be used', () => {
    const c = client();
    expect(() => c.publish('/a/*', 1)).toThrow(TypeError);
    expect(() => c.publish('/meta/connect', 1)).toThrow(TypeError);
    expect(() => c.subscribe('no-slash', () => {})).toThrow(TypeError);
    expect(() => c.request('/not/service', 1)).toThrow(TypeError);
  });
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

  it('backs off with growing, jittered delays while the server is down, then reconnects', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const c = client({ minReconnectDelay: 100, maxReconnectDelay: 1600 });
    await Promise.all([c.connect(), tick(50)]);
    server.setDown(true);
    const from = server.attempts.length;
    await tick(6000);
    expect(c.state).toBe('reconnecting');
    // Every attempt tries WebSocket, then long-polling; the gaps are the backoff delays.
    const starts = server.attempts
      .slice(from)
      .filter((a) => a.kind === 'websocket')
      .map((a) => a.at);
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

describe('recovery (replay extension)', () => {
  function setup(options: BayouClientOptions = {}) {
    server.replay = true;
    const c = client({ minReconnectDelay: 100, maxReconnectDelay: 200, ...options });
    const gaps: GapInfo[] = [];
    const statuses: string[] = [];
    c.on('gap', (g) => gaps.push(g));
    c.on('subscription', (channel, status) => statuses.push(`${channel} ${status}`));
    return { c, gaps, statuses };
  }
  const outage = async (during: () => void) => {
    server.setDown(true);
    await tick(10);
    during();
    server.setDown(false);
    await tick(1000);
  };

  it('recovers what a subscription missed while its session was gone, in order, once', async () => {
    const { c, gaps, statuses } = setup();
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    const sub = c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    expect(sub.status).toBe('live');
    server.publish('/news', 1);
    server.publish('/news', 2);
    await tick(20);
    await outage(() => {
      server.publish('/news', 3);
      server.publish('/news', 4);
    });
    expect(c.state).toBe('connected');
    server.publish('/news', 5);
    await tick(20);
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(gaps).toEqual([]);
    expect(statuses).toEqual(['/news live', '/news recovering', '/news live']);
    const resubscribe = server.received.filter((m) => m.channel === '/meta/subscribe').at(-1);
    expect(resubscribe?.ext?.replay).toEqual({ '/news': { offset: 2, epoch: 'e0-/news' } });
  });

  it('drops a message it has seen by its position, and accepts a new epoch', async () => {
    const { c } = setup();
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    server.publish('/news', 1);
    server.publish('/news', 2);
    await tick(20);
    const [first, second] = (server.history.get('/news')?.messages ?? []).map((e) => e.message);
    for (const socket of server.sockets) socket.deliver([first as Message, second as Message]);
    await tick(20);
    expect(got).toEqual([1, 2]);
    server.forgetHistory();
    server.publish('/news', 3);
    await tick(20);
    expect(got).toEqual([1, 2, 3]);
  });

  it('emits gap with the range and marks the subscription when history cannot cover it', async () => {
    const { c, gaps } = setup();
    server.historySize = 2;
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    const sub = c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    server.publish('/news', 1);
    await tick(20);
    await outage(() => {
      for (let n = 2; n <= 5; n++) server.publish('/news', n);
    });
    expect(gaps).toEqual([
      { channel: '/news', from: { offset: 1, epoch: 'e0-/news' }, to: { offset: 5, epoch: 'e0-/news' } },
    ]);
    expect(sub.status).toBe('gap');
    server.publish('/news', 6);
    await tick(20);
    expect(got).toEqual([1, 6]);
  });

  it('reports a gap, not silence, when a restart lost the history, and follows the new epoch', async () => {
    const { c, gaps } = setup();
    await Promise.all([c.connect(), tick(50)]);
    const got: unknown[] = [];
    c.subscribe('/news', (m) => got.push(m.data));
    await tick(20);
    server.publish('/news', 1);
    server.publish('/news', 2);
    await tick(20);
    await outage(() => server.forgetHistory());
    expect(gaps).toEqual([
      { channel: '/news', from: { offset: 2, epoch: 'e0-/news' }, to: { offset: 0, epoch: 'e1-/news' } },
    ]);
    server.publish('/news', 'new epoch');
    await tick(20);
    expect(got).toEqual([1, 2, 'new epoch']);
  });

  it('sends no position for a wildcard, and starts afresh after an unsubscribe', async () => {
    const { c } = setup();
    await Promise.all([c.connect(), tick(50)]);
    const wild = c.subscribe('/chat/*', () => {});
    const room = c.subscribe('/chat/room', () => {});
    await tick(20);
    server.publish('/chat/room', 1);
    await tick(20);
    room.unsubscribe();
    await tick(20);
    c.subscribe('/chat/room', () => {});
    await tick(20);
    await outage(() => {});
    const subs = server.received.filter((m) => m.channel === '/meta/subscribe');
    const extOf = (name: string) => subs.filter((m) => m.subscription === name).map((m) => m.ext?.replay);
    expect(extOf('/chat/*')).toEqual([undefined, undefined]);
    // After the unsubscribe the position was forgotten; the next subscribe learnt offset 1 again.
    expect(extOf('/chat/room')).toEqual([
      undefined,
      undefined,
      { '/chat/room': { offset: 1, epoch: 'e0-/chat/room' } },
    ]);
    expect(wild.status).toBe('live');
  });

  it('works as a plain client against a server without the extension, or with recover: false', async () => {
    for (const [replay, recover] of [
      [false, true],
      [true, false],
    ] as const) {
      server = new FakeBayeuxServer();
      const { c, gaps, statuses } = setup({ recover });
      server.replay = replay;
      await Promise.all([c.connect(), tick(50)]);
      const got: unknown[] = [];
      c.subscribe('/news', (m) => got.push(m.data));
      await tick(20);
      await outage(() => server.publish('/news', 'missed'));
      server.publish('/news', 'live');
      await tick(20);
      expect(got).toEqual(['live']);
      expect(gaps).toEqual([]);
      expect(statuses).toEqual(['/news live', '/news recovering', '/news live']);
      const sent = (channel: string) =>
        server.received.filter((m) => m.channel === channel).some((m) => m.ext?.replay !== undefined);
      expect(sent('/meta/subscribe')).toBe(false);
      expect(sent('/meta/handshake')).toBe(recover);
      await Promise.all([c.disconnect(), tick(50)]);
    }
  });
});

describe('record options', () => {
  const recordExts = () =>
    server.received.filter((m) => m.channel === '/meta/subscribe').map((m) => m.ext?.record ?? null);

  it('subscribes with the merge of the open listeners options, again whenever the merge changes', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const a = c.record('/fx/A', { fields: ['bid'], maxFrequency: 1 }, () => {});
    await tick(20);
    const b = c.record('/fx/A', { fields: ['ask', 'bid'], maxFrequency: 5 }, () => {});
    await tick(20);
    const same = c.record('/fx/A', { fields: ['bid'], maxFrequency: 1 }, () => {});
    await tick(20);
    b.close();
    await tick(20);
    expect(recordExts()).toEqual([
      { fields: ['bid'], maxFrequency: 1 },
      { fields: ['ask', 'bid'], maxFrequency: 5 },
      { fields: ['bid'], maxFrequency: 1 },
    ]);
    expect(server.count('/meta/unsubscribe')).toBe(2);
    expect(same.store).toBe(a.store);
    expect(b.store).not.toBe(a.store);
    const all = c.record('/fx/A', { maxFrequency: 2 }, () => {});
    await tick(20);
    expect(recordExts().at(-1)).toEqual({ maxFrequency: 2 });
    a.close();
    same.close();
    all.close();
    await tick(20);
    expect(server.count('/meta/unsubscribe')).toBe(4);
  });

  it('never applies a delta to an empty image, nor to the image of a former session', async () => {
    const c = client({ minReconnectDelay: 100, maxReconnectDelay: 200 });
    await Promise.all([c.connect(), tick(50)]);
    const handle = c.record('/fx/A', {}, () => {});
    await tick(20);
    const send = (data: object, r: 's' | 'd') => {
      for (const socket of server.sockets) socket.deliver([{ channel: '/fx/A', data, ext: { r } }]);
    };
    send({ bid: 1 }, 'd');
    await tick(20);
    expect(handle.store.getSnapshot()).toBeNull();
    send({ bid: 1, ask: 2 }, 's');
    send({ bid: 3 }, 'd');
    await tick(20);
    expect(handle.store.getSnapshot()).toEqual({ bid: 3, ask: 2 });
    server.restart();
    await tick(1000);
    expect(c.state).toBe('connected');
    send({ bid: 9 }, 'd');
    await tick(20);
    expect(handle.store.getSnapshot()).toEqual({ bid: 3, ask: 2 });
    send({ bid: 4, ask: 5 }, 's');
    await tick(20);
    expect(handle.store.getSnapshot()).toEqual({ bid: 4, ask: 5 });
    handle.close();
  });

  it('rejects record options of the wrong type', () => {
    const c = client();
    expect(() => c.record('/fx/A', { fields: 'bid' as never }, () => {})).toThrow(TypeError);
    expect(() => c.record('/fx/A', { maxFrequency: 0 }, () => {})).toThrow(TypeError);
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
    // Each stay on the silent WebSocket ends within the 20 s default...
    const onWebSocket = spans.filter((_, i) => i % 2 === 1);
    for (const span of onWebSocket) expect(span).toBeLessThanOrEqual(18_100);
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

describe('stopping', () => {
  it('stops on 403::handshake_denied without retrying and rejects everything pending', async () => {
    server.denyHandshake = true;
    const c = client();
    const errors: string[] = [];
    c.on('error', (e) => errors.push(e.code));
    const sub = c.subscribe('/a', () => {});
    const queued = c.publish('/a', 1);
    const done = c.connect();
    const results = Promise.allSettled([done, sub.ready, queued]);
    await tick(60_000);
    const [connect, ready, publish] = await results;
    expect(connect).toMatchObject({ status: 'rejected', reason: { code: ErrorCodes.HANDSHAKE_DENIED } });
    expect(ready.status).toBe('rejected');
    expect(publish.status).toBe('rejected');
    expect(server.count('/meta/handshake')).toBe(1);
    expect(c.state).toBe('disconnected');
    expect(errors).toEqual([ErrorCodes.HANDSHAKE_DENIED]);
    await expect(c.publish('/a', 2)).rejects.toMatchObject({ code: ErrorCodes.HANDSHAKE_DENIED });
  });

  it('stops on reconnect: none and rejects a publish made afterwards promptly', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    const { states } = track(c);
    // The session is lost; the client re-handshakes and its next connect is told "none".
    server.refuseNextConnect = true;
    server.restart();
    await tick(5000);
    expect(states.at(-1)).toBe('disconnected');
    await expect(c.publish('/a', 1)).rejects.toMatchObject({ code: ErrorCodes.RECONNECT_NONE });
    const handshakes = server.count('/meta/handshake');
    await tick(60_000);
    expect(server.count('/meta/handshake')).toBe(handshakes);
  });

  it('disconnect() says goodbye and rejects what is pending', async () => {
    const c = client();
    await Promise.all([c.connect(), tick(50)]);
    server.setDown(true);
    await tick(10);
    const queued = c.publish('/a', 1).catch((e) => e);
    const done = c.disconnect();
    await tick(10);
    await done;
    expect(await queued).toMatchObject({ code: ErrorCodes.DISCONNECTED });
    expect(c.state).toBe('disconnected');
  });
});
