/**
 * Connection hardening against real sockets: the handshake timeout (a connection that
 * sends nothing, a WebSocket that never completes a Bayeux handshake), the cap on open
 * connections with its 503 refusal, and a scaled-down flood of idle WebSockets from
 * several loopback addresses while a real client keeps being served. The full-size flood
 * (20,000 sockets) is `packages/server/bench/idle-flood.mjs`.
 */
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { BayouServer } from '../src/index.js';
import { eventually } from './cluster-helpers.js';
import { type Started, startServer } from './start-server.js';
import { TestClient } from './test-client.js';

let started: Started | null = null;
const clients: TestClient[] = [];
const sockets: (Socket | WebSocket)[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of sockets.splice(0)) s instanceof WebSocket ? s.terminate() : s.destroy();
  await started?.server.close();
  started = null;
});

const portOf = (base: string): number => Number(new URL(base).port);
const wsUrl = (base: string): string => `${base.replace(/^http/, 'ws')}/bayeux`;

/** A TCP connection that sends nothing. */
function silentSocket(base: string, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port: portOf(base), host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    sockets.push(s);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** How a WebSocket that never sends a Bayeux message ended: closed with a code, or refused with a status. */
type Ending = { closed: number; reason: string } | { refused: number; retryAfter: string | undefined };

function idleWebSocket(
  base: string,
  localAddress?: string,
): { opened: Promise<boolean>; ended: Promise<Ending> } {
  const ws = new WebSocket(wsUrl(base), localAddress ? { localAddress } : {});
  sockets.push(ws);
  let settle: (open: boolean) => void = () => undefined;
  const opened = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  const ended = new Promise<Ending>((resolve) => {
    ws.once('open', () => settle(true));
    ws.once('close', (code, reason) => resolve({ closed: code, reason: reason.toString() }));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      settle(false);
      res.resume();
      resolve({ refused: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] });
      ws.terminate();
    });
    ws.on('error', () => settle(false));
  });
  return { opened, ended };
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

function openConnections(server: BayouServer): Promise<number> {
  return new Promise((resolve, reject) =>
    server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
  );
}

async function metric(server: BayouServer, name: string): Promise<number> {
  const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (line === null) throw new Error(`no metric ${name}`);
  return Number(line[1]);
}

async function realClient(base: string, channel: string): Promise<TestClient> {
  const c = new TestClient(base, 'websocket');
  clients.push(c);
  expect((await c.connect()).successful).toBe(true);
  await c.subscribe(channel);
  return c;
}

describe('handshakeTimeout', () => {
  it('closes a silent connection and a WebSocket without a Bayeux handshake (1008); a handshaken one stays', async () => {
    // Long enough for a loaded machine to send an upgrade request within it.
    started = await startServer({ handshakeTimeout: 1000, sweepInterval: 20 });
    const { server, base } = started;
    const real = await realClient(base, '/kept');
    const silent = await silentSocket(base);
    const idle = idleWebSocket(base);
    expect(await idle.opened).toBe(true);

    expect(await idle.ended).toEqual({ closed: 1008, reason: 'bayeux handshake timeout' });
    await closed(silent);
    expect(await metric(server, 'bayou_connections_timed_out_total')).toBe(2);
    // The handshaken socket outlived both: a publication after them reaches it.
    server.bayou.publish('/kept', 'still here');
    expect((await real.waitFor((m) => m.channel === '/kept')).data).toBe('still here');
    expect(real.closedWith).toBeNull();
  });
});

describe('handshakeTimeout after a session ends', () => {
  it('closes a WebSocket whose session ended and that handshook no other, and keeps one whose session lives', async () => {
    started = await startServer({ handshakeTimeout: 1000, sweepInterval: 20 });
    const { server, base } = started;
    const keeper = await realClient(base, '/stay');
    const quitter = await realClient(base, '/stay');
    expect(await quitter.request({ channel: '/meta/disconnect', clientId: quitter.clientId })).toMatchObject({
      successful: true,
    });
    // Its socket stays open, with no session on it: within two timeouts it is closed.
    await eventually(() => expect(quitter.closedWith).toBe(1008), 5000);
    expect(await metric(server, 'bayou_connections_timed_out_total')).toBe(1);
    // The keeper, opened first and looked at since, still gets what is published.
    server.bayou.publish('/stay', 'kept');
    expect((await keeper.waitFor((m) => m.channel === '/stay')).data).toBe('kept');
    expect(keeper.closedWith).toBeNull();
  });
});

/** Writes `text` on a new connection and resolves with everything the server sent until it closed. */
async function sendAndWait(base: string, text: string): Promise<string> {
  const socket = await silentSocket(base);
  let got = '';
  socket.on('data', (d: Buffer) => {
    got += d.toString('latin1');
  });
  socket.write(text);
  await closed(socket);
  return got;
}

describe('handshakeTimeout for requests (createServer)', () => {
  it('answers 408 and closes a long-poll whose body or headers never finish arriving', async () => {
    started = await startServer({ handshakeTimeout: 1000, sweepInterval: 20 });
    const { base } = started;
    const partialBody =
      'POST /bayeux HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{';
    expect(await sendAndWait(base, partialBody)).toMatch(/^HTTP\/1\.1 408 /);
    expect(await sendAndWait(base, 'POST /bayeux HTTP/1.1\r\nHost: x\r\n')).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("leaves a held long-poll alone: its request arrived whole, the wait is the server's", async () => {
    started = await startServer({ handshakeTimeout: 1000, sweepInterval: 20, timeout: 3000 });
    const c = new TestClient(started.base, 'long-polling');
    await c.handshake();
    const connect = { channel: '/meta/connect', clientId: c.clientId, connectionType: 'long-polling' };
    await c.request(connect);
    const since = Date.now();
    const held = await c.request(connect);
    expect(held).toMatchObject({ channel: '/meta/connect', successful: true });
    // Held for the connect timeout (3 s), three times the handshake timeout.
    expect(Date.now() - since).toBeGreaterThanOrEqual(2500);
  });
});

describe('maxConnections', () => {
  it('answers 503 with Retry-After to an upgrade and a long-poll past the cap, serves the held clients, and takes a freed slot', async () => {
    started = await startServer({ maxConnections: 3, handshakeTimeout: 0 });
    const { server, base } = started;
    const a = await realClient(base, '/cap');
    const b = await realClient(base, '/cap');
    const hold = await silentSocket(base);
    expect(await openConnections(server)).toBe(3);

    const upgrade = idleWebSocket(base);
    expect(await upgrade.ended).toEqual({ refused: 503, retryAfter: '5' });
    const poll = await fetch(`${base}/bayeux`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
      ]),
    });
    expect(poll.status).toBe(503);
    expect(poll.headers.get('retry-after')).toBe('5');
    expect(((await poll.json()) as { error: string }).error).toMatch(/connection limit \(maxConnections 3\)/);
    expect(await metric(server, 'bayou_connections_refused_total')).toBe(2);
    expect(await metric(server, 'bayou_connections_open')).toBe(3);

    // The clients it holds are served as before.
    await b.publish('/cap', 'to a');
    expect((await a.waitFor((m) => m.channel === '/cap' && m.successful === undefined)).data).toBe('to a');

    // A connection that goes frees its slot.
    hold.destroy();
    await eventually(async () => expect(await openConnections(server)).toBe(2));
    const c = await realClient(base, '/cap');
    expect(c.clientId).not.toBe('');
  });
});

describe('a flood of idle WebSockets (scaled down)', () => {
  it('refuses what passes the cap, times out the rest, and keeps serving a real client', async () => {
    const cap = 150;
    started = await startServer({ maxConnections: cap, handshakeTimeout: 2500, sweepInterval: 50 });
    const { server, base } = started;
    const real = await realClient(base, '/live');
    const flood = Array.from({ length: 300 }, (_, i) => idleWebSocket(base, `127.0.0.${2 + (i % 3)}`));
    const endings = await Promise.all(flood.map((f) => f.ended));

    const refused = endings.filter((e) => 'refused' in e && e.refused === 503).length;
    const timedOut = endings.filter((e) => 'closed' in e && e.closed === 1008).length;
    // Every flood socket was either refused or closed by the timeout, nothing else.
    expect(refused + timedOut).toBe(300);
    expect(refused).toBeGreaterThan(0);
    expect(timedOut).toBeLessThanOrEqual(cap - 1);
    expect(await metric(server, 'bayou_connections_refused_total')).toBe(refused);
    // The real client still gets what is published, and only its connection is left.
    server.bayou.publish('/live', 'after the flood');
    expect((await real.waitFor((m) => m.channel === '/live')).data).toBe('after the flood');
    await eventually(async () => expect(await metric(server, 'bayou_connections_open')).toBe(1));
  });
});
