/**
 * Proxy hooks over HTTP, decided by a backend written in Python (`fixtures/proxy-backend.py`)
 * and driven by the official CometD client: connect with user and permissions, subscribe,
 * a rewritten publish, an RPC; and a backend too slow or broken gets the client a Bayeux
 * error in bounded time.
 */
import type { CometD, Message } from 'cometd';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BayouServer, createServer, type ProxyOptions } from '../src/index.js';
import { cometdOver, disconnect, handshake, publish, REPLY_MS, subscribe } from './cometd-helpers.js';
import { Inbox, TRANSPORTS, within } from './interop-helpers.js';
import { PythonBackend } from './proxy-backend.js';

let backend: PythonBackend;
let server: BayouServer | null = null;
const clients: CometD[] = [];

beforeAll(async () => {
  backend = await PythonBackend.start();
});
afterAll(async () => {
  await backend?.stop();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await disconnect(c);
  await server?.close();
  server = null;
});

async function start(proxy: ProxyOptions): Promise<string> {
  server = await createServer({ host: '127.0.0.1', port: 0, timeout: 2000, proxy });
  return `${await server.listen()}/bayeux`;
}

function client(transport: (typeof TRANSPORTS)[number], url: string): CometD {
  const c = cometdOver(transport, url);
  clients.push(c);
  return c;
}

function remoteCall(cometd: CometD, target: string, data: unknown): Promise<Message> {
  return within(
    new Promise<Message>((resolve) => cometd.remoteCall(target, data, REPLY_MS, resolve)),
    REPLY_MS + 1000,
    'remoteCall reply',
  );
}

const ADA = { ext: { auth: { user: 'ada', password: 'open-sesame' } } };

describe.each(TRANSPORTS)('proxy hooks with a Python backend, CometD over %s', (transport) => {
  it('authorizes connect and subscribe, rewrites a publish and answers an RPC', async () => {
    const url = await start({
      connect: { url: backend.url('/connect'), headers: { 'X-Backend-Token': 'b4ckend' } },
      subscribe: backend.url('/subscribe'),
      publish: backend.url('/publish'),
      rpc: backend.url('/rpc'),
      timeout: 2000,
    });
    const cometd = client(transport, url);
    const hello = await handshake(cometd, ADA);
    expect(hello.successful).toBe(true);
    const clientId = cometd.getClientId() as string;
    expect(server?.bayou.session(clientId)?.auth).toMatchObject({ sub: 'ada', info: { role: 'tester' } });

    const inbox = new Inbox<Message>();
    expect((await subscribe(cometd, '/rewrite/room', inbox.push)).reply.successful).toBe(true);
    const secret = (await subscribe(cometd, '/allowed/secret', () => undefined)).reply;
    expect(secret).toMatchObject({ successful: false, error: '403:/allowed/secret:not_for_you' });
    // Outside the permissions the connect gave: refused here, the backend is not asked.
    const outside = (await subscribe(cometd, '/elsewhere/x', () => undefined)).reply;
    expect(outside).toMatchObject({ successful: false, error: '403:/elsewhere/x:subscribe_denied' });

    expect((await publish(cometd, '/rewrite/room', { text: 'hello' })).successful).toBe(true);
    const [delivered] = await inbox.waitFor(1);
    expect(delivered?.data).toEqual({ text: 'HELLO', by: 'ada' });

    const sum = await remoteCall(cometd, '/add', { a: 2, b: 40 });
    expect(sum).toMatchObject({ successful: true, data: { sum: 42, for: 'ada' } });
    const unknown = await remoteCall(cometd, '/nope', {});
    expect(unknown).toMatchObject({ successful: false, error: '404:/service/nope:no_such_call' });

    // What the backend was sent: the handshake ext and the configured header; the caller's identity.
    const connects = (await backend.requests('/connect')).filter((r) => r.body.ext !== undefined);
    expect(connects.at(-1)).toMatchObject({ token: 'b4ckend', body: { transport, ext: ADA.ext } });
    const subs = (await backend.requests('/subscribe')).filter((r) => r.body.clientId === clientId);
    expect(subs.map((r) => r.body.channel)).toEqual(['/rewrite/room', '/allowed/secret']);
    expect(subs[0]?.body).toMatchObject({ user: 'ada' });
  });

  it('refuses a handshake the backend denies, with its Bayeux error', async () => {
    const url = await start({ connect: backend.url('/connect') });
    const cometd = client(transport, url);
    const reply = await handshake(cometd, { ext: { auth: { user: 'eve', password: 'guess' } } });
    expect(reply).toMatchObject({ successful: false, error: '403::bad_password' });
  });

  it('answers a Bayeux error in bounded time when the backend sleeps past the timeout or fails', async () => {
    const url = await start({
      subscribe: backend.url('/slow'),
      publish: backend.url('/broken'),
      rpc: backend.url('/slow'),
      timeout: 500,
    });
    const cometd = client(transport, url);
    expect((await handshake(cometd)).successful).toBe(true);
    let started = Date.now();
    const slow = (await subscribe(cometd, '/any/channel', () => undefined)).reply;
    expect(slow).toMatchObject({ successful: false, error: '504:subscribe:backend_timeout' });
    expect(Date.now() - started).toBeLessThan(2500);
    const broken = await publish(cometd, '/any/channel', { text: 'x' });
    expect(broken).toMatchObject({ successful: false, error: '502:publish:backend_failed' });
    started = Date.now();
    const call = await remoteCall(cometd, '/add', { a: 1, b: 1 });
    expect(call).toMatchObject({ successful: false, error: '504:rpc:backend_timeout' });
    expect(Date.now() - started).toBeLessThan(2500);
    // The session and the server carry on: the server still answers a handshake.
    expect((await handshake(client(transport, url))).successful).toBe(true);
  });
});

describe('proxy hooks with the backend unreachable', () => {
  it('fails a handshake with 502 and retry advice instead of hanging', async () => {
    // A port nothing listens on: the backend's own, after it is closed, is not safe to
    // reuse; port 1 on loopback refuses at once.
    const url = await start({ connect: 'http://127.0.0.1:1/connect', timeout: 1000 });
    const cometd = client('long-polling', url);
    const reply = await handshake(cometd);
    expect(reply).toMatchObject({ successful: false, error: '502:connect:backend_failed' });
    expect(reply.advice).toMatchObject({ reconnect: 'handshake' });
  });
});
