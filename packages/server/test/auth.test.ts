/** Token handshakes and channel permissions from createAuthHooks, over both transports. */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthHooks } from '../src/index.js';
import { type Started, startServer } from './start-server.js';
import { TestClient, type Transport } from './test-client.js';

const secret = 'integration-secret-at-least-32-chars!!';
const soon = () => Math.floor(Date.now() / 1000) + 600;

function token(claims: Record<string, unknown>, key = secret): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(key));
}

describe.each<Transport>(['websocket', 'long-polling'])('token auth over %s', (transport) => {
  let started: Started;
  beforeAll(async () => {
    const hooks = createAuthHooks({
      tokens: { secret },
      channels: { rules: [{ pattern: '/chat/*', publish: 'authenticated' }] },
    });
    started = await startServer({
      authenticate: hooks.authenticate,
      canSubscribe: hooks.canSubscribe,
      canPublish: hooks.canPublish,
    });
  });
  afterAll(() => started.server.close());

  async function handshake(ext?: Record<string, unknown>) {
    const c = new TestClient(started.base, transport);
    const reply = await c.connect(ext);
    return { c, reply };
  }

  it('refuses no token, a bad signature and an expired token with 403::handshake_denied', async () => {
    for (const ext of [
      undefined,
      { auth: { token: await token({ sub: 'ada', exp: soon() }, 'some-other-secret-of-32-characters!!') } },
      { auth: { token: await token({ sub: 'ada', exp: 1000 }) } },
      { auth: { token: 'e30.e30.' } },
    ]) {
      const { c, reply } = await handshake(ext);
      expect(reply).toMatchObject({ successful: false, error: '403::handshake_denied' });
      await c.close();
    }
    expect(started.server.bayou.sessionCount).toBe(0);
  });

  it('accepts a good token and keeps sub in session.auth; default rule: subscribe yes, publish no', async () => {
    const { c, reply } = await handshake({ auth: { token: await token({ sub: 'ada', exp: soon() }) } });
    expect(reply).toMatchObject({ successful: true });
    expect(started.server.bayou.session(c.clientId)?.auth).toMatchObject({ sub: 'ada' });
    expect(await c.subscribe('/news')).toMatchObject({ successful: true });
    expect(await c.publish('/news', 1)).toMatchObject({
      successful: false,
      error: '403:/news:publish_denied',
    });
    expect(await c.publish('/chat/lobby', 'hi')).toMatchObject({ successful: true });
    await c.close();
  });

  it('applies the channel claims: a channel outside them is denied', async () => {
    const t = await token({
      sub: 'bo',
      exp: soon(),
      bayou: { subscribe: ['/room/1/**'], publish: ['/room/1/chat'] },
    });
    const { c } = await handshake({ auth: { token: t } });
    expect(await c.subscribe('/room/1/chat')).toMatchObject({ successful: true });
    expect(await c.subscribe('/room/2/chat')).toMatchObject({
      successful: false,
      error: '403:/room/2/chat:subscribe_denied',
    });
    expect(await c.subscribe('/room/**')).toMatchObject({ error: '403:/room/**:subscribe_denied' });
    expect(await c.publish('/room/1/chat', 'x')).toMatchObject({ successful: true });
    expect(await c.publish('/room/2/chat', 'x')).toMatchObject({ error: '403:/room/2/chat:publish_denied' });
    await c.close();
  });
});
