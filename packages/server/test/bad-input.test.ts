/**
 * Bad input, one test each: the server answers with a Bayeux error or an HTTP 4xx /
 * WebSocket close, stays up, and a healthy client on the side keeps receiving.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { TestClient, type Transport } from './test-client.js';

describe.each<Transport>(['websocket', 'long-polling'])('bad input over %s', (transport) => {
  let s: Started;
  let healthy: TestClient;
  let bad: TestClient;
  let tick = 0;

  beforeAll(async () => {
    s = await startServer({ maxSubscriptionsPerSession: 3 });
    healthy = new TestClient(s.base, 'websocket');
    await healthy.connect();
    await healthy.subscribe('/health');
  });
  afterAll(async () => {
    await healthy.close();
    await s.server.close();
  });
  beforeEach(async () => {
    bad = new TestClient(s.base, transport);
    await bad.connect();
  });
  afterEach(async () => {
    await bad.close();
    // After every bad input the side client still gets a fresh message.
    const n = ++tick;
    s.server.bayou.publish('/health', n);
    await healthy.waitFor((m) => m.channel === '/health' && m.data === n);
  });

  /** Over WS a transport-level error comes back as an error message on the socket. */
  async function sendBroken(text: string, contentType?: string): Promise<string> {
    const r = await bad.sendRaw(text, contentType);
    if (transport === 'long-polling') {
      expect(r.status).toBe(400);
      return (JSON.parse(r.body) as { error: string }).error;
    }
    const m = await bad.waitFor((x) => x.successful === false && x.channel === undefined);
    return String(m.error);
  }

  it('answers malformed JSON with an error naming it', async () => {
    expect(await sendBroken('[{"channel": "/meta/connect",')).toMatch(/malformed JSON/);
  });

  it('answers a body that is not an array of messages', async () => {
    expect(await sendBroken('"hello"')).toMatch(/expected a JSON array/);
  });

  it('answers a message without channel with 400::channel_missing', async () => {
    const [reply] = await bad.send([{ clientId: bad.clientId, data: 1 }]);
    expect(reply).toMatchObject({ successful: false, error: '400::channel_missing' });
  });

  it('answers an unknown clientId with 402::session_unknown and handshake advice', async () => {
    const reply = await bad.request({
      channel: '/meta/connect',
      clientId: 'not-a-session',
      connectionType: transport,
    });
    expect(reply).toMatchObject({
      successful: false,
      error: '402::session_unknown',
      advice: { reconnect: 'handshake' },
    });
  });

  it('answers a connect before any handshake with 402', async () => {
    const fresh = new TestClient(s.base, transport);
    if (transport === 'websocket') await fresh.open();
    const reply = await fresh.request({ channel: '/meta/connect', connectionType: transport });
    expect(reply).toMatchObject({ successful: false, error: '402::session_unknown' });
    await fresh.close();
  });

  it('refuses a publish to /meta/** with 403 publish_denied', async () => {
    expect(await bad.publish('/meta/custom', { x: 1 })).toMatchObject({
      successful: false,
      error: '403:/meta/custom:publish_denied',
    });
  });

  it('refuses a subscription to an invalid channel name with 405', async () => {
    expect(await bad.subscribe('/chat//x')).toMatchObject({
      successful: false,
      error: '405:/chat//x:channel_invalid',
    });
    expect(await bad.subscribe('/a/**/b')).toMatchObject({
      successful: false,
      error: '405:/a/**/b:channel_invalid',
    });
    expect(await bad.subscribe('/meta/connect')).toMatchObject({
      successful: false,
      error: '403:/meta/connect:subscribe_denied',
    });
  });

  it('refuses an oversized message (WebSocket close 1009, HTTP 413)', async () => {
    const big = JSON.stringify([{ channel: '/x', clientId: bad.clientId, data: 'x'.repeat(70 * 1024) }]);
    const r = await bad.sendRaw(big);
    if (transport === 'long-polling') {
      expect(r.status).toBe(413);
    } else {
      expect(await bad.closed()).toBe(1009);
    }
  });

  it('refuses subscriptions beyond the per-session limit', async () => {
    expect(await bad.subscribe(['/s/1', '/s/2', '/s/3'])).toMatchObject({ successful: true });
    expect(await bad.subscribe('/s/4')).toMatchObject({
      successful: false,
      error: '403:3:subscription_limit',
    });
    expect(s.server.bayou.subscriberCount('/s/4')).toBe(0);
  });

  it('refuses a __proto__ key in data or ext without polluting anything', async () => {
    const text = `[{"id":"p1","channel":"/health","clientId":"${bad.clientId}","data":{"__proto__":{"polluted":true}}},{"id":"p2","channel":"/health","clientId":"${bad.clientId}","data":1,"ext":{"__proto__":{"polluted":true}}}]`;
    await bad.sendRaw(text);
    const r1 = await bad.waitFor((m) => m.id === 'p1');
    const r2 = await bad.waitFor((m) => m.id === 'p2');
    expect(r1).toMatchObject({ successful: false, error: '400:__proto__:forbidden_key' });
    expect(r2).toMatchObject({ successful: false, error: '400:__proto__:forbidden_key' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(healthy.deliveries('/health').some((m) => typeof m.data === 'object')).toBe(false);
  });

  it('refuses a wildcard publish and a wrongly typed field', async () => {
    expect(await bad.publish('/chat/*', 1)).toMatchObject({
      successful: false,
      error: '405:/chat/*:channel_invalid',
    });
    const [reply] = await bad.send([{ channel: '/x', clientId: 42 }]);
    expect(reply).toMatchObject({ successful: false, error: '400:clientId:message_invalid' });
  });
});
