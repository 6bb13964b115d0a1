/** The per-address connection cap of `ConnectionGuard`, on a real `node:http` server. */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { ConnectionGuard } from './connection-guard.js';

let server: Server | null = null;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = null;
});

/** A connection from `localAddress` that says nothing; resolves with whether the server kept it open. */
function open(port: number, localAddress: string): Promise<{ socket: Socket; kept: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    sockets.push(socket);
    socket.once('error', reject);
    // A closed-at-accept socket ends without a byte; a kept one answers a request.
    socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.once('data', () => resolve({ socket, kept: true }));
    socket.once('close', () => resolve({ socket, kept: false }));
  });
}

it('closes at once a connection past maxConnectionsPerIp, counts other addresses apart, and forgets an address with its last connection', async () => {
  server = createServer((_req, res) => res.end('ok'));
  const guard = new ConnectionGuard(
    server,
    { maxConnections: 0, handshakeTimeout: 0, maxConnectionsPerIp: 2 },
    false,
  );
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  const a1 = await open(port, '127.0.0.2');
  const a2 = await open(port, '127.0.0.2');
  expect([a1.kept, a2.kept]).toEqual([true, true]);
  expect((await open(port, '127.0.0.2')).kept).toBe(false);
  expect((await open(port, '127.0.0.3')).kept).toBe(true);
  expect(guard.stats).toMatchObject({ refused: 1, refusedPerIp: 1 });
  expect(guard.peers).toBe(2);

  // One of the address's connections goes: it may open one again.
  a1.socket.destroy();
  await new Promise((r) => a1.socket.once('close', r));
  await expect.poll(() => guard.stats.open).toBe(2);
  expect((await open(port, '127.0.0.2')).kept).toBe(true);

  // Every connection gone: no address is remembered.
  for (const s of sockets) s.destroy();
  await expect.poll(() => guard.stats.open).toBe(0);
  expect(guard.peers).toBe(0);
  guard.close();
});

it('destroys on close the connections that have sent nothing, so the server can close', async () => {
  server = createServer((_req, res) => res.end('ok'));
  const guard = new ConnectionGuard(server, { maxConnections: 0, handshakeTimeout: 60_000 }, false);
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const silent = connect({ port, host: '127.0.0.1' });
  sockets.push(silent);
  await new Promise((r) => silent.once('connect', r));
  await expect.poll(() => guard.stats.open).toBe(1);
  const served = await open(port, '127.0.0.2');
  expect(served.kept).toBe(true);

  const ended = new Promise((r) => silent.once('close', r));
  guard.close();
  await ended;
  // The connection that sent a request is the server's to close, not the guard's.
  expect(served.socket.destroyed).toBe(false);
});

it('keeps one plain close listener per accepted connection (no `once` wrapper) and counts its close once', async () => {
  server = createServer((_req, res) => res.end('ok'));
  const guard = new ConnectionGuard(server, { maxConnections: 0, handshakeTimeout: 0 }, false);
  const accepted: Socket[] = [];
  server.on('connection', (socket) => accepted.push(socket));
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const a = await open(port, '127.0.0.1');
  expect(a.kept).toBe(true);
  const serverSide = accepted[0] as Socket;
  // A `once` listener is kept as a wrapper that names the listener it wraps.
  const wrapped = serverSide.rawListeners('close').filter((l) => 'listener' in l);
  expect(wrapped).toEqual([]);
  expect(guard.stats.open).toBe(1);
  a.socket.destroy();
  await expect.poll(() => guard.stats.open).toBe(0);
  serverSide.emit('close', false);
  expect(guard.stats.open).toBe(0);
  guard.close();
});
