/**
 * Ordered long-polling (on with any engine but the in-process one) changes a session's
 * delivery on a `/meta/connect`. With long-polls bound to their browser's cookie, a stranger
 * who learnt a victim's clientId and sends a connect naming another connection type, without
 * the cookie, is refused (402) — and must not have switched the victim's delivery: before the
 * pipeline ran its guards first, the extension had already moved the victim's long-polling
 * session off connect-reply delivery (the order guarantee behind a balancer gone).
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, redisPerFile, requireRedis } from './cluster-helpers.js';
import { type Started, startServer } from './start-server.js';

type Msg = Record<string, unknown> & { channel: string };
const secret = 'pipeline-ordered-secret-of-32-chars!!';

requireRedis('a refused connect switches no delivery');

describe.runIf(redisAvailable)('a refused connect switches no delivery (ordered long-polling)', () => {
  const redis = redisPerFile();
  let started: Started;
  beforeAll(async () => {
    started = await startServer({
      redis: redis().url,
      redisEngine: { keyPrefix: `ordered${process.pid}:` },
      auth: { tokens: { secret } },
      timeout: 300,
    });
  });
  afterAll(() => started.server.close());

  async function post(
    messages: Msg[],
    cookie: string | null,
  ): Promise<{ body: Msg[]; cookie: string | null }> {
    const r = await fetch(`${started.base}/bayeux`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie === null ? {} : { cookie }) },
      body: JSON.stringify(messages),
    });
    const set = r.headers.get('set-cookie');
    return { body: (await r.json()) as Msg[], cookie: set === null ? cookie : (set.split(';')[0] as string) };
  }

  it('runs ordered long-polling after the guards', () => {
    const order = started.server.bayou.extensionOrder;
    expect(order.indexOf('guard:auth')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('guard:auth')).toBeLessThan(order.indexOf('protocol:ordered-long-polling'));
  });

  it("keeps the victim's connect-reply delivery after a stranger's refused websocket connect", async () => {
    const token = await new SignJWT({ sub: 'victim', exp: Math.ceil(Date.now() / 1000) + 600 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(secret));
    const hs = await post(
      [
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['long-polling', 'websocket'],
          ext: { auth: { token } },
        },
      ],
      null,
    );
    const clientId = hs.body[0]?.clientId as string;
    const cookie = hs.cookie;
    expect(cookie).toMatch(/^BAYEUX_BROWSER=/);
    await post([{ channel: '/meta/connect', clientId, connectionType: 'long-polling' }], cookie);
    const session = started.server.bayou.session(clientId);
    expect(session?.deliveryMode).toBe('connect-reply');

    const stranger = await post([{ channel: '/meta/connect', clientId, connectionType: 'websocket' }], null);
    expect(stranger.body[0]).toMatchObject({ successful: false, error: '402::session_unknown' });
    expect(started.server.bayou.session(clientId)?.deliveryMode).toBe('connect-reply');

    // The victim's own connect naming a WebSocket (its cookie) still switches it: the guard
    // refused the stranger, not the switch.
    await post([{ channel: '/meta/connect', clientId, connectionType: 'websocket' }], cookie);
    expect(started.server.bayou.session(clientId)?.deliveryMode).toBe('push');
  });
});
