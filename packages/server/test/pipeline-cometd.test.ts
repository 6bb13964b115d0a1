/**
 * The attack on the ack extension, with the victim being the official CometD client and its
 * `AckExtension` over long-polling (own file: `adapt()` installs globals). Browser binding on
 * (tokens configured, so `trustClientSession: false`). The victim's connect reply carrying
 * batch 1 is lost on the way (a proxy cuts it); a stranger who learnt the clientId sends
 * `/meta/connect` with `ext.ack` of that batch and no `BAYEUX_BROWSER` cookie: refused 402,
 * and it must have acknowledged nothing — the victim's retry, acknowledging batch 0 only,
 * gets batch 1 again. Before the pipeline ran its guards first, the ack extension had already
 * taken the stranger's acknowledgement and dropped the batch: the victim never got it.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AckExtension, CometD, type Message } from 'cometd';
import { adapt } from 'cometd-nodejs-client';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disconnect, handshake, subscribe } from './cometd-helpers.js';
import { eventually } from './interop-helpers.js';
import { type Started, startServer } from './start-server.js';

adapt();

const secret = 'pipeline-cometd-secret-of-32-chars!!';
const token = () =>
  new SignJWT({ sub: 'victim', exp: Math.ceil(Date.now() / 1000) + 600 })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(secret));

function bodyOf(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

/**
 * A loopback proxy in front of the server that, once armed, cuts the first connect reply
 * carrying data (keeping what it said) and holds the victim's next connects until released.
 */
function lossyProxy(target: string) {
  let armed = false;
  let lost: Array<Record<string, unknown>> | null = null;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server: Server = createHttpServer(async (req, res) => {
    const body = await bodyOf(req);
    const isConnect = body.includes('/meta/connect');
    if (isConnect && lost !== null) await released;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (req.headers.cookie !== undefined) headers.cookie = req.headers.cookie;
    const r = await fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, body });
    const text = await r.text();
    const replies = JSON.parse(text) as Array<Record<string, unknown>>;
    if (armed && isConnect && lost === null && replies.some((m) => m.data !== undefined)) {
      lost = replies;
      req.socket.destroy();
      return;
    }
    const out: Record<string, string | string[]> = { 'content-type': 'application/json' };
    const setCookie = r.headers.getSetCookie();
    if (setCookie.length > 0) out['set-cookie'] = setCookie;
    res.writeHead(r.status, out).end(text);
  });
  return {
    server,
    arm: () => {
      armed = true;
    },
    get lost() {
      return lost;
    },
    release: () => release(),
  };
}

describe('a refused stranger acknowledges nothing of a CometD ack client (long-polling)', () => {
  let started: Started;
  let proxy: ReturnType<typeof lossyProxy>;
  let proxyBase: string;
  beforeAll(async () => {
    started = await startServer({ auth: { tokens: { secret } }, timeout: 500 });
    proxy = lossyProxy(started.base);
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    proxyBase = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxy.server.closeAllConnections();
    await new Promise((resolve) => proxy.server.close(resolve));
    await started.server.close();
  });

  it("gets batch 1 again after a stranger's refused connect acknowledged it", async () => {
    const victim = new CometD();
    for (const type of victim.getTransportTypes())
      if (type !== 'long-polling') victim.unregisterTransport(type);
    victim.registerExtension('ack', new AckExtension());
    victim.configure({ url: `${proxyBase}/bayeux`, logLevel: 'warn', backoffIncrement: 50 });
    const received: unknown[] = [];
    try {
      const hs = await handshake(victim, { ext: { auth: { token: await token() } } });
      expect(hs.successful).toBe(true);
      await subscribe(victim, '/prices', (m: Message) => received.push(m.data));
      const clientId = victim.getClientId() as string;
      expect(started.server.bayou.session(clientId)?.deliveryMode).toBe('connect-reply');

      proxy.arm();
      started.server.bayou.publish('/prices', 1);
      started.server.bayou.publish('/prices', 2);
      // The reply carrying batch 1 is cut before the victim reads it.
      const lost = await eventually(() => proxy.lost ?? false, 5000, 'the lost connect reply');
      expect(lost.filter((m) => m.data !== undefined).map((m) => m.data)).toEqual([1, 2]);
      const reply = lost.find((m) => m.channel === '/meta/connect');
      const batch = (reply?.ext as { ack?: number } | undefined)?.ack;
      expect(batch).toEqual(expect.any(Number));

      // The stranger: the victim's clientId and that batch's number, no cookie.
      const stranger = await fetch(`${started.base}/bayeux`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          { channel: '/meta/connect', clientId, connectionType: 'long-polling', ext: { ack: batch } },
        ]),
      });
      expect(((await stranger.json()) as Message[])[0]).toMatchObject({
        successful: false,
        error: '402::session_unknown',
      });

      // The victim's retry acknowledges batch 0 only: batch 1 comes again.
      proxy.release();
      await eventually(() => expect(received).toEqual([1, 2]), 5000, 'batch 1 again');
      expect(started.server.bayou.session(clientId)).toBeDefined();
    } finally {
      await disconnect(victim);
    }
  });
});
