/**
 * The auth extension over both transports: handshake denials with their advice, token
 * refresh on `/meta/connect`, sessions ended when their token expires, and long-polls
 * bound to the `BAYEUX_BROWSER` cookie of their session.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BayouServer } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { type Msg, TestClient, type Transport } from './test-client.js';

const secret = 'auth-extension-secret-of-32-chars!!';
const inSeconds = (s: number) => Math.ceil(Date.now() / 1000) + s;

function token(claims: Record<string, unknown>, key = secret): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(key));
}

function removedWith(server: BayouServer, clientId: string): Promise<string> {
  return new Promise((resolve) => {
    const on = (session: { id: string }, reason: string) => {
      if (session.id !== clientId) return;
      server.bayou.off('session:removed', on);
      resolve(reason);
    };
    server.bayou.on('session:removed', on);
  });
}

describe.each<Transport>(['websocket', 'long-polling'])('auth extension over %s', (transport) => {
  let started: Started;
  beforeAll(async () => {
    started = await startServer({
      auth: { tokens: { secret, clockTolerance: 0 } },
      sweepInterval: 50,
    });
  });
  afterAll(() => started.server.close());

  it('advises reconnect: handshake for an expired token and none for a bad one', async () => {
    const expired = new TestClient(started.base, transport);
    expect(await expired.connect({ auth: { token: await token({ sub: 'ada', exp: 1000 }) } })).toMatchObject({
      successful: false,
      error: '403::handshake_denied',
      advice: { reconnect: 'handshake' },
    });
    const bad = new TestClient(started.base, transport);
    const forged = await token({ sub: 'ada', exp: inSeconds(600) }, 'not-the-secret-but-32-chars-long!!!');
    expect(await bad.connect({ auth: { token: forged } })).toMatchObject({
      successful: false,
      error: '403::handshake_denied',
      advice: { reconnect: 'none' },
    });
    const none = new TestClient(started.base, transport);
    expect(await none.connect()).toMatchObject({ advice: { reconnect: 'none' } });
    await Promise.all([expired.close(), bad.close(), none.close()]);
  });

  it('refreshes the token on a /meta/connect carrying ext.auth.token, and refuses another sub', async () => {
    const c = new TestClient(started.base, transport);
    await c.connect({ auth: { token: await token({ sub: 'ada', exp: inSeconds(60) }) } });
    const later = inSeconds(3600);
    // A connect of its own, answered at once (advice.timeout 0), carrying the new token.
    const refreshed = await c.request({
      channel: '/meta/connect',
      clientId: c.clientId,
      connectionType: transport,
      advice: { timeout: 0 },
      ext: { auth: { token: await token({ sub: 'ada', exp: later, bayou: { publish: ['/chat/*'] } }) } },
    });
    expect(refreshed).toMatchObject({ successful: true });
    expect(started.server.bayou.session(c.clientId)?.auth).toMatchObject({ sub: 'ada', exp: later });
    // The refreshed claims apply at once.
    expect(await c.publish('/chat/lobby', 'hi')).toMatchObject({ successful: true });

    const other = await c.request({
      channel: '/meta/connect',
      clientId: c.clientId,
      connectionType: transport,
      advice: { timeout: 0 },
      ext: { auth: { token: await token({ sub: 'eve', exp: later }) } },
    });
    expect(other).toMatchObject({
      successful: false,
      error: '403::handshake_denied',
      advice: { reconnect: 'none' },
    });
    expect(started.server.bayou.session(c.clientId)?.auth).toMatchObject({ sub: 'ada', exp: later });
    await c.close();
  });

  it('ends a session whose token expires while connected, advising a new handshake', async () => {
    const c = new TestClient(started.base, transport);
    const hs = await c.connect({ auth: { token: await token({ sub: 'ada', exp: inSeconds(1) }) } });
    expect(hs).toMatchObject({ successful: true });
    const removed = removedWith(started.server, c.clientId);
    const told = await c.waitFor(
      (m: Msg) =>
        m.channel === '/meta/connect' &&
        (m.advice as { reconnect?: string } | undefined)?.reconnect === 'handshake',
    );
    expect(told.clientId).toBe(c.clientId);
    expect(await removed).toBe('token-expired');
    expect(started.server.bayou.session(c.clientId)).toBeUndefined();
    await c.close();
  });

  it('keeps a session whose token was refreshed before it expired', async () => {
    const c = new TestClient(started.base, transport);
    await c.connect({ auth: { token: await token({ sub: 'bo', exp: inSeconds(1) }) } });
    const first = await c.request({
      channel: '/meta/connect',
      clientId: c.clientId,
      connectionType: transport,
      advice: { timeout: 0 },
      ext: { auth: { token: await token({ sub: 'bo', exp: inSeconds(600) }) } },
    });
    expect(first).toMatchObject({ successful: true });
    // A second session with the short token is the clock: once it is gone, the first's old token has expired too.
    const clock = new TestClient(started.base, transport);
    await clock.connect({ auth: { token: await token({ sub: 'clock', exp: inSeconds(1) }) } });
    await removedWith(started.server, clock.clientId);
    expect(started.server.bayou.session(c.clientId)?.state).not.toBe('removed');
    expect(started.server.bayou.session(c.clientId)).toBeDefined();
    await Promise.all([c.close(), clock.close()]);
  });
});

describe('long-polls bound to their browser cookie (trustClientSession)', () => {
  let locked: Started;
  let trusting: Started;
  beforeAll(async () => {
    locked = await startServer({ auth: { tokens: { secret } } });
    trusting = await startServer({ auth: { tokens: { secret } }, trustClientSession: true });
  });
  afterAll(async () => {
    await locked.server.close();
    await trusting.server.close();
  });

  async function session(base: string): Promise<TestClient> {
    const c = new TestClient(base, 'long-polling');
    await c.connect({ auth: { token: await token({ sub: 'ada', exp: inSeconds(600) }) } });
    return c;
  }

  it('answers a long-poll without the session cookie as for an unknown session, with tokens on', async () => {
    const owner = await session(locked.base);
    expect(owner.cookie).toMatch(/^BAYEUX_BROWSER=/);
    expect(await owner.publish('/anything', 1)).toMatchObject({ error: '403:/anything:publish_denied' });
    // Someone else with the clientId (from a log, say) but not the cookie.
    const thief = new TestClient(locked.base, 'long-polling');
    thief.clientId = owner.clientId;
    expect(await thief.subscribe('/private')).toMatchObject({
      successful: false,
      error: '402::session_unknown',
      advice: { reconnect: 'handshake' },
    });
    const other = new TestClient(locked.base, 'long-polling', { cookie: 'BAYEUX_BROWSER=forged' });
    other.clientId = owner.clientId;
    expect(await other.subscribe('/private')).toMatchObject({ error: '402::session_unknown' });
    expect(locked.server.bayou.session(owner.clientId)?.subscriptions.size).toBe(0);
    // The owner, with its cookie, goes on.
    expect(await owner.subscribe('/private')).toMatchObject({ successful: true });
    await owner.close();
  });

  it('lets the clientId alone do with trustClientSession: true', async () => {
    const owner = await session(trusting.base);
    const cookieless = new TestClient(trusting.base, 'long-polling');
    cookieless.clientId = owner.clientId;
    expect(await cookieless.subscribe('/private')).toMatchObject({ successful: true });
    await owner.close();
  });
});

describe.each<Transport>(['websocket', 'long-polling'])('tokens from a JWKS URL over %s', (transport) => {
  let keys: Server;
  let started: Started;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    keys = createHttpServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => keys.listen(0, '127.0.0.1', r));
    const jwksUrl = `http://127.0.0.1:${(keys.address() as AddressInfo).port}/jwks.json`;
    started = await startServer({ auth: { tokens: { jwksUrl } } });
  });
  afterAll(async () => {
    await started.server.close();
    await new Promise((r) => keys.close(r));
  });

  it('accepts a token signed by a key of the set and refuses one signed by another key', async () => {
    const good = await new SignJWT({ sub: 'ada', exp: inSeconds(600) })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey);
    const c = new TestClient(started.base, transport);
    expect(await c.connect({ auth: { token: good } })).toMatchObject({ successful: true });
    expect(started.server.bayou.session(c.clientId)?.auth).toMatchObject({ sub: 'ada' });
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const bad = await new SignJWT({ sub: 'ada', exp: inSeconds(600) })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(stranger);
    const d = new TestClient(started.base, transport);
    expect(await d.connect({ auth: { token: bad } })).toMatchObject({
      successful: false,
      error: '403::handshake_denied',
      advice: { reconnect: 'none' },
    });
    await Promise.all([c.close(), d.close()]);
  });
});
