/**
 * Against the real `@bayou/server`, over both transports: the everyday API, a server
 * restart (reconnect, re-handshake, resubscribe), publishes made while it is down, a
 * denied handshake, and the move from streaming or long-polling back to WebSocket through a proxy.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BayouClient, ErrorCodes, longPolling, streaming, websocket } from '../src/index.js';
import { startBayou, TestProxy, waitFor } from './helpers.js';

type Started = Awaited<ReturnType<typeof startBayou>>;
const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function bayou(options: Parameters<typeof startBayou>[0] = {}): Promise<Started> {
  const s = await startBayou(options);
  cleanup.push(() => s.close());
  return s;
}

function port(s: Started): number {
  return (s.app.server.address() as AddressInfo).port;
}

describe.each([
  ['websocket', websocket],
  ['streaming', streaming],
  ['long-polling', longPolling],
] as const)('against @bayou/server over %s', (name, transport) => {
  const open = (url: string, extra = {}) => {
    const c = new BayouClient(url, { WebSocket, transports: [transport], minReconnectDelay: 100, ...extra });
    cleanup.push(() => c.disconnect());
    return c;
  };

  it('subscribes, publishes and receives, from clients and from the server', async () => {
    const s = await bayou();
    const a = open(s.url);
    const b = open(s.url);
    await Promise.all([a.connect(), b.connect()]);
    expect(a.transport).toBe(name);
    const got: unknown[] = [];
    await a.subscribe('/chat/*', (m) => got.push(m.data)).ready;
    await b.publish('/chat/lobby', { from: 'b' });
    s.bayou.publish('/chat/news', 'from server');
    await waitFor(() => got.length === 2, 5000, 'two messages');
    expect(got).toEqual([{ from: 'b' }, 'from server']);
  });

  it('answers request() from a /service handler', async () => {
    const s = await bayou();
    s.bayou.service('/service/add', (data) => (data as number[]).reduce((x, y) => x + y, 0));
    const c = open(s.url);
    await c.connect();
    await expect(c.request('/service/add', [1, 2, 3])).resolves.toBe(6);
  });

  it('reconnects, re-handshakes and resubscribes after a restart, and delivers what was published while down', async () => {
    const first = await bayou();
    const p = port(first);
    const c = open(first.url);
    await c.connect();
    const got: unknown[] = [];
    await c.subscribe('/news', (m) => got.push(m.data)).ready;
    const oldId = c.clientId;
    await first.close();
    await waitFor(() => c.state === 'reconnecting', 5000, 'reconnecting');
    const whileDown = c.publish('/news', 'published while down');
    const second = await bayou({ port: p });
    await whileDown;
    await waitFor(() => c.state === 'connected', 10_000, 'connected again');
    expect(c.clientId).not.toBe(oldId);
    second.bayou.publish('/news', 'after restart');
    await waitFor(() => got.includes('after restart'), 5000, 'the message after the restart');
    expect(got).toContain('published while down');
  });

  it('stops at once when the handshake is denied, rejecting pending promises', async () => {
    let calls = 0;
    const s = await bayou({
      authenticate: () => {
        calls++;
        return false;
      },
    });
    const c = open(s.url);
    const queued = c.publish('/x', 1);
    await expect(c.connect()).rejects.toMatchObject({ code: ErrorCodes.HANDSHAKE_DENIED });
    await expect(queued).rejects.toMatchObject({ code: ErrorCodes.HANDSHAKE_DENIED });
    // timed on purpose: a retry would come from the client's own timer (minReconnectDelay 100 ms),
    // and nothing else travels that path after a denial to stand as a barrier.
    await new Promise((r) => setTimeout(r, 500));
    expect(calls).toBe(1);
    expect(c.state).toBe('disconnected');
  });
});

describe('moving between transports against @bayou/server', () => {
  it.each([
    ['streaming', [websocket, streaming, longPolling]],
    ['long-polling', [websocket, longPolling]],
  ] as const)(
    'falls back to %s when a proxy refuses WebSocket and moves back without loss or duplicates when it allows it',
    async (fallback, configured) => {
      const s = await bayou();
      const proxy = new TestProxy(`127.0.0.1:${port(s)}`, 'refuse-upgrade');
      const base = await proxy.listen();
      cleanup.push(() => proxy.close());
      const c = new BayouClient(`${base}/bayeux`, {
        WebSocket,
        transports: configured,
        minProbeDelay: 300,
        maxProbeDelay: 600,
      });
      cleanup.push(() => c.disconnect());
      const transports: string[] = [];
      c.on('transport', (t) => transports.push(t));
      await c.connect();
      expect(c.transport).toBe(fallback);
      const got: number[] = [];
      await c.subscribe('/feed', (m) => got.push(m.data as number)).ready;
      proxy.mode = 'pass';
      let n = 0;
      const until = Date.now() + 3000;
      while (Date.now() < until) {
        s.bayou.publish('/feed', ++n);
        await new Promise((r) => setTimeout(r, 5));
      }
      await waitFor(() => transports.length === 2, 5000, 'the move to WebSocket');
      // One more on the same path, after the move: once it is in, a late copy would be too.
      s.bayou.publish('/feed', ++n);
      await waitFor(() => got.includes(n), 5000, 'the last message');
      expect(transports).toEqual([fallback, 'websocket']);
      // Every message once; order may interleave at the moment of the switch.
      expect(new Set(got).size).toBe(got.length);
      expect([...got].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    },
  );
});
