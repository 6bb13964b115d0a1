/**
 * The extension pipeline runs in declared stages — guards, then the protocol's extensions,
 * then the application's — and a message refused at any stage changes no session. The
 * attack this guards against: with long-polls bound to their browser's cookie, a stranger
 * who learnt a victim's clientId sends `/meta/connect` with `ext.ack` and no cookie. It is
 * refused (402), and must not acknowledge — and so drop — what the victim never received.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';

type Msg = Record<string, unknown> & { channel: string };

const secret = 'pipeline-order-secret-of-32-chars!!';
const token = (ttl = 600) =>
  new SignJWT({ sub: 'victim', exp: Math.ceil(Date.now() / 1000) + ttl })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));

/** A long-polling wire that sends exactly what the test says, with or without a cookie. */
function poster(base: string) {
  let cookie: string | null = null;
  return {
    get cookie() {
      return cookie;
    },
    async send(messages: Msg[], withCookie = true): Promise<{ status: number; body: Msg[] }> {
      const r = await fetch(`${base}/bayeux`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(withCookie && cookie !== null ? { cookie } : {}),
        },
        body: JSON.stringify(messages),
      });
      // A stranger's request gets a cookie of its own: the victim keeps its own.
      const set = r.headers.get('set-cookie');
      if (set !== null && withCookie) cookie = set.split(';')[0] as string;
      return { status: r.status, body: (await r.json()) as Msg[] };
    },
  };
}

describe('the extension pipeline in stages', () => {
  let started: Started;
  beforeAll(async () => {
    // Tokens on: long-polls are bound to their browser's cookie (trustClientSession: false).
    started = await startServer({ auth: { tokens: { secret } }, timeout: 300 });
  });
  afterAll(() => started.server.close());

  async function victim() {
    const wire = poster(started.base);
    const hs = await wire.send([
      {
        channel: '/meta/handshake',
        version: '1.0',
        supportedConnectionTypes: ['long-polling'],
        ext: { ack: true, auth: { token: await token() } },
      },
    ]);
    const clientId = hs.body[0]?.clientId as string;
    expect(clientId).toEqual(expect.any(String));
    expect(wire.cookie).toMatch(/^BAYEUX_BROWSER=/);
    const connect = (ack: number): Msg => ({
      channel: '/meta/connect',
      clientId,
      connectionType: 'long-polling',
      ext: { ack },
    });
    await wire.send([connect(0)]);
    await wire.send([{ channel: '/meta/subscribe', clientId, subscription: '/prices' }]);
    return { wire, clientId, connect };
  }

  it('runs guards first, then the protocol extensions, then the application', () => {
    started.server.bayou.addExtension({ name: 'audit', incoming: () => undefined });
    const order = started.server.bayou.extensionOrder;
    const stageOf = (name: string) => order.findIndex((e) => e.endsWith(`:${name}`));
    expect(stageOf('auth')).toBeGreaterThanOrEqual(0);
    expect(stageOf('auth')).toBeLessThan(stageOf('ack'));
    expect(stageOf('limits')).toBeLessThan(stageOf('ack'));
    // The browser binding before the per-session rate: a stranger spends nothing of the victim's.
    expect(stageOf('auth')).toBeLessThan(stageOf('limits'));
    expect(stageOf('ack')).toBeLessThan(stageOf('audit'));
    expect(order.at(-1)).toBe('app:audit');
  });

  it("refuses a stranger's connect without the cookie and lets it acknowledge nothing", async () => {
    const { wire, clientId, connect } = await victim();
    started.server.bayou.publish('/prices', 1);
    started.server.bayou.publish('/prices', 2);
    const first = await wire.send([connect(0)]);
    expect(first.body.map((m) => m.data ?? m.ext)).toEqual([1, 2, { ack: 1 }]);
    // The victim loses that reply. A stranger, who has the clientId but not the cookie:
    const stranger = await wire.send([connect(1)], false);
    expect(stranger.body[0]).toMatchObject({ successful: false, error: '402::session_unknown' });
    // The victim acknowledges batch 0 only: batch 1 comes again.
    const again = await wire.send([connect(0)]);
    expect(again.body.map((m) => m.data ?? m.ext)).toEqual([1, 2, { ack: 2 }]);
    expect(started.server.bayou.session(clientId)).toBeDefined();
  });

  it('lets no stage change a session for a message a later stage refuses', async () => {
    const { wire, connect } = await victim();
    // An application extension that refuses a connect after the protocol stage looked at it.
    let refuse = true;
    started.server.bayou.addExtension({
      name: 'gate',
      incoming: (m) => (refuse && m.channel === '/meta/connect' ? '403::closed_for_now' : undefined),
    });
    started.server.bayou.publish('/prices', 'a');
    const refused = await wire.send([connect(0)]);
    expect(refused.body.at(-1)).toMatchObject({ successful: false, error: '403::closed_for_now' });
    refuse = false;
    const delivered = await wire.send([connect(0)]);
    const batch = Number((delivered.body.at(-1)?.ext as { ack?: unknown } | undefined)?.ack);
    expect(delivered.body.map((m) => m.data).filter((d) => d !== undefined)).toEqual(['a']);
    // Refused with a higher ack: the batch is still unacknowledged and comes again.
    refuse = true;
    await wire.send([connect(batch)]);
    refuse = false;
    const again = await wire.send([connect(batch - 1)]);
    expect(again.body.map((m) => m.data).filter((d) => d !== undefined)).toEqual(['a']);
  });
  it('applies a refreshed token only with a connect no stage refused', async () => {
    const { wire, clientId } = await victim();
    const exp = () => started.server.bayou.session(clientId)?.auth?.exp as number;
    const before = exp();
    let refuse = true;
    started.server.bayou.addExtension({
      name: 'refresh-gate',
      incoming: (m) => (refuse && m.channel === '/meta/connect' ? '403::closed_for_now' : undefined),
    });
    const refreshing = async (): Promise<Msg> => ({
      channel: '/meta/connect',
      clientId,
      connectionType: 'long-polling',
      advice: { timeout: 0 },
      ext: { ack: 0, auth: { token: await token(1200) } },
    });
    const refused = await wire.send([await refreshing()]);
    expect(refused.body.at(-1)).toMatchObject({ successful: false, error: '403::closed_for_now' });
    expect(exp()).toBe(before);
    refuse = false;
    const accepted = await wire.send([await refreshing()]);
    expect(accepted.body.at(-1)).toMatchObject({ successful: true });
    expect(exp()).toBeGreaterThan(before + 500);
  });
});

describe('resends on an immediate connect', () => {
  it('carries what was not acknowledged in a connect answered at once (advice.timeout 0)', async () => {
    const { server, base } = await startServer({ timeout: 5000 });
    try {
      const wire = poster(base);
      const hs = await wire.send([
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['long-polling'],
          ext: { ack: true },
        },
      ]);
      const clientId = hs.body[0]?.clientId as string;
      const connect = (ack: number, timeout?: number): Msg => ({
        channel: '/meta/connect',
        clientId,
        connectionType: 'long-polling',
        ext: { ack },
        ...(timeout === undefined ? {} : { advice: { timeout } }),
      });
      await wire.send([connect(0)]);
      await wire.send([{ channel: '/meta/subscribe', clientId, subscription: '/prices' }]);
      server.bayou.publish('/prices', 'x');
      const held = await wire.send([connect(0)]);
      expect(held.body.map((m) => m.data ?? m.ext)).toEqual(['x', { ack: 1 }]);
      // That reply was lost; the client asks at once (a reconnect) and acknowledges batch 0.
      const immediate = await wire.send([connect(0, 0)]);
      expect(immediate.body.map((m) => m.data ?? m.ext)).toEqual(['x', { ack: 2 }]);
    } finally {
      await server.close();
    }
  });
});

describe("a refused stranger spends nothing of the victim's", () => {
  it("leaves the victim's publish budget whole (the browser binding before the per-session rate)", async () => {
    const { server, base } = await startServer({
      auth: { tokens: { secret } },
      limits: { publishRate: 1, publishBurst: 2 },
    });
    try {
      const wire = poster(base);
      const publisher = await new SignJWT({
        sub: 'victim',
        exp: Math.ceil(Date.now() / 1000) + 600,
        bayou: { publish: ['/chat'] },
      })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(secret));
      const hs = await wire.send([
        {
          channel: '/meta/handshake',
          version: '1.0',
          supportedConnectionTypes: ['long-polling'],
          ext: { auth: { token: publisher } },
        },
      ]);
      const clientId = hs.body[0]?.clientId as string;
      const publish = (data: string): Msg => ({ channel: '/chat', clientId, data });
      // A stranger with the clientId and no cookie, three times: refused as unknown each time.
      for (const i of [1, 2, 3]) {
        const stranger = await wire.send([publish(`spam ${i}`)], false);
        expect(stranger.body[0]).toMatchObject({ successful: false, error: '402::session_unknown' });
      }
      // The victim's own publish still has its burst.
      const own = await wire.send([publish('hello')]);
      expect(own.body.find((m) => m.channel === '/chat')).toMatchObject({ successful: true });
    } finally {
      await server.close();
    }
  });
});
