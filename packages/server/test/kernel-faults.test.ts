/**
 * Application code that fails (hooks, services, providers, listeners) gives the message
 * it was handling a Bayeux error reply and never reaches the socket handler or the
 * process; other clients keep being served. Plus the kernel bugs the reshape fixed.
 */
import { formatError } from '@bayou/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { BayeuxReplyError, type CreateServerOptions } from '../src/index.js';
import { connectionGauge } from './interop-helpers.js';
import { type Started, startServer } from './start-server.js';
import { eventually, TestClient, type Transport } from './test-client.js';

const boom = () => {
  throw new Error('application bug');
};
const rejecting = async () => {
  throw new Error('application bug, async');
};

describe.each<Transport>(['websocket', 'long-polling'])('failing application code over %s', (transport) => {
  let s: Started;
  const clients: TestClient[] = [];
  async function client(options?: { handshake?: boolean }): Promise<TestClient> {
    const c = new TestClient(s.base, transport);
    clients.push(c);
    if (options?.handshake !== false) expect((await c.connect()).successful).toBe(true);
    return c;
  }
  async function start(options: CreateServerOptions): Promise<void> {
    s = await startServer(options);
  }
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await s.server.close();
  });

  /** A healthy client still publishes and receives after the failure. */
  async function stillServes(): Promise<void> {
    const c = await client();
    expect((await c.subscribe('/alive')).successful).toBe(true);
    await s.server.bayou.publish('/alive', { ok: 1 });
    const m = await c.waitFor((x) => x.channel === '/alive' && x.successful === undefined);
    expect(m.data).toEqual({ ok: 1 });
  }

  for (const [name, hook] of [
    ['throws', boom],
    ['rejects', rejecting],
  ] as const) {
    it(`answers 500 when canSubscribe ${name}`, async () => {
      await start({ canSubscribe: (_s, channel) => (channel === '/bad' ? hook() : true) });
      const c = await client();
      const reply = await c.subscribe('/bad');
      expect(reply).toMatchObject({ successful: false, error: formatError('internalError') });
      await stillServes();
    });

    it(`answers 500 when canPublish ${name}`, async () => {
      await start({ canPublish: (_s, channel) => (channel === '/bad' ? hook() : true) });
      const c = await client();
      expect(await c.publish('/bad', 1)).toMatchObject({
        successful: false,
        error: formatError('internalError'),
      });
      await stillServes();
    });

    it(`refuses the handshake with 500 and retry advice when authenticate ${name}`, async () => {
      await start({ authenticate: (m) => (m.ext?.bad ? hook() : true) });
      const c = await client({ handshake: false });
      const reply = await c.connect({ bad: true });
      expect(reply).toMatchObject({
        successful: false,
        error: formatError('internalError'),
        advice: { reconnect: 'handshake' },
      });
      await stillServes();
    });

    it(`answers service_failed when a service ${name}`, async () => {
      await start({});
      s.server.bayou.service('/service/bad', hook);
      const c = await client();
      expect(await c.publish('/service/bad', 1)).toMatchObject({
        successful: false,
        error: formatError('serviceFailed', ['/service/bad']),
      });
      await stillServes();
    });
  }

  it('answers the error a hook throws as a BayeuxReplyError, as its doc comment says', async () => {
    await start({
      canPublish: () => {
        throw new BayeuxReplyError('403:/muted:muted');
      },
      canSubscribe: async () => {
        throw new BayeuxReplyError('403:/closed:room_closed');
      },
    });
    const c = await client();
    expect(await c.publish('/muted', 1)).toMatchObject({ successful: false, error: '403:/muted:muted' });
    expect(await c.subscribe('/closed')).toMatchObject({
      successful: false,
      error: '403:/closed:room_closed',
    });
  });

  it("refuses a record subscription whose provider's onRequest throws, and serves the next", async () => {
    await start({ records: [{ pattern: '/fx/*' }] });
    s.server.bayou.provide('/fx/*', { onRequest: (subject) => (subject === '/fx/BAD' ? boom() : undefined) });
    const c = await client();
    expect(await c.subscribe('/fx/BAD')).toMatchObject({
      successful: false,
      error: formatError('internalError'),
    });
    expect(s.server.bayou.subscriberCount('/fx/BAD')).toBe(0);
    expect((await c.subscribe('/fx/GOOD')).successful).toBe(true);
    await stillServes();
  });

  it('refuses a subscription whose subscribe listener throws, and a handshake whose session listener throws', async () => {
    await start({});
    s.server.bayou.on('subscribe', (_session, channel) => {
      if (channel === '/bad') throw new Error('listener bug');
    });
    const c = await client();
    expect(await c.subscribe('/bad')).toMatchObject({
      successful: false,
      error: formatError('internalError'),
    });
    expect(s.server.bayou.subscriberCount('/bad')).toBe(0);
    await stillServes();
    s.server.bayou.on('session', (session) => {
      if (session.auth === null && clients.length > 2) throw new Error('listener bug');
    });
    const d = await client({ handshake: false });
    expect(await d.connect()).toMatchObject({ successful: false, error: formatError('internalError') });
  });
});

describe.each<Transport>(['websocket', 'long-polling'])('records over %s', (transport) => {
  let s: Started;
  afterEach(async () => s.server.close());

  it('sends the snapshot again to a repeated subscribe in the same session', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*' }] });
    await s.server.bayou.updateRecord('/fx/EURUSD', { bid: 1 });
    const c = new TestClient(s.base, transport);
    await c.connect();
    const snapshots = () => c.deliveries('/fx/EURUSD');
    expect((await c.subscribe('/fx/EURUSD')).successful).toBe(true);
    await c.waitFor((m) => m.channel === '/fx/EURUSD' && m.successful === undefined);
    expect((await c.subscribe('/fx/EURUSD')).successful).toBe(true);
    await eventually(() => snapshots().length >= 2, 5000, 'the second snapshot');
    expect(snapshots().map((m) => m.data)).toEqual([{ bid: 1 }, { bid: 1 }]);
    expect(s.server.bayou.subscriberCount('/fx/EURUSD')).toBe(1);
    await c.close();
  });

  it('treats a wildcard equal to a record pattern as a plain wildcard: no record, no provider call', async () => {
    s = await startServer({ records: [{ pattern: '/fx/*' }] });
    const requested: string[] = [];
    s.server.bayou.provide('/fx/*', { onRequest: (subject) => requested.push(subject) });
    const c = new TestClient(s.base, transport);
    await c.connect();
    expect((await c.subscribe('/fx/*')).successful).toBe(true);
    expect((await c.subscribe('/fx/USDJPY')).successful).toBe(true);
    expect(requested).toEqual(['/fx/USDJPY']);
    expect(s.server.bayou.recordImage('/fx/*')).toBeNull();
    await c.close();
  });
});

describe('a WebSocket connect without ack and without advice.timeout 0 (Faye)', () => {
  it('gets what was queued while the socket was away at once, not after the hold', async () => {
    const s = await startServer({ timeout: 20_000 });
    // Faye's connect: no ack, no advice. Sent raw, as the test client's own loop would not.
    const connect = (c: TestClient) =>
      c.sendRaw(
        JSON.stringify([{ channel: '/meta/connect', clientId: c.clientId, connectionType: 'websocket' }]),
      );
    const first = new TestClient(s.base, 'websocket');
    expect((await first.handshake()).successful).toBe(true);
    await connect(first);
    expect((await first.subscribe('/q')).successful).toBe(true);
    await first.close();
    // The server saw the socket go: what follows is queued for a session without one.
    await eventually(async () => (await connectionGauge(s.base, 'websocket')) === 0);
    await s.server.bayou.publish('/q', 'while away');
    const second = new TestClient(s.base, 'websocket');
    second.clientId = first.clientId;
    await second.open();
    const sentAt = Date.now();
    await connect(second);
    const m = await second.waitFor((x) => x.channel === '/q');
    expect(m.data).toBe('while away');
    // Well inside the 20 s hold: it did not wait for the connect to time out.
    expect(Date.now() - sentAt).toBeLessThan(5000);
    await second.close();
    await s.server.close();
  });
});
