/**
 * Connecting, subscribing, publishing and stopping, under fake timers against the
 * in-process fake Bayeux server.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { tick, track, useFakeServer } from '../test/fake-client-harness.js';
import type { FakeBayeuxServer } from '../test/fake-server.js';
import { type BayouError, ErrorCodes, type Message } from './index.js';

let server: FakeBayeuxServer;
const harness = useFakeServer();
const client = harness.client;
beforeEach(() => {
  server = harness.server();
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
    expect(hs?.supportedConnectionTypes).toEqual(['websocket', 'streaming', 'long-polling']);
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
      bayou: { ackFrames: true, records: true, compact: true, heartbeat: true },
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
