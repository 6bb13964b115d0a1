import http from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error faye ships no type declarations
import faye from 'faye';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../scripts/eventually.mjs';
import { runWithGenerator } from '../bench/generators/run-generator.mjs';
import { UndiciTab } from '../bench/generators/undici-lp.mjs';
import { BrowserTab } from '../src/browser-tab.js';

const CLIENTS = [
  { name: 'node:http', Tab: BrowserTab, generator: 'standard' },
  { name: 'undici', Tab: UndiciTab, generator: 'undici' },
];

/** Idle keep-alive connections in a tab's pool: node's `Agent.freeSockets`, undici's `Pool.stats.free`. */
function idleConnections(tab: object): number {
  const agent = (tab as { agent: { freeSockets?: Record<string, unknown[]>; stats?: { free: number } } })
    .agent;
  if (agent.freeSockets !== undefined) return Object.values(agent.freeSockets).flat().length;
  if (agent.stats !== undefined) return agent.stats.free;
  throw new Error('a pool with neither freeSockets nor stats');
}

let server: http.Server | undefined;
afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server that answers `[{"n":<request count>}]`, or drops the socket when `drop` says so. */
async function serve(kind: (typeof CLIENTS)[number], drop: (requestOnSocket: number) => boolean) {
  const seen = new WeakMap<object, number>();
  let requests = 0;
  server = http.createServer((req, res) => {
    const n = (seen.get(req.socket) ?? 0) + 1;
    seen.set(req.socket, n);
    req.resume();
    req.on('end', () => {
      // As a server closing an idle keep-alive socket just as a request arrives.
      if (drop(n)) return req.socket.destroy();
      requests++;
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'set-cookie': `seen=${requests}; Path=/bayeux`,
        })
        .end(`[{"n":${requests},"cookie":${JSON.stringify(req.headers.cookie ?? null)}}]`);
    });
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const url = new URL(`http://127.0.0.1:${port}/bayeux`);
  return new kind.Tab(url, undefined, {});
}

describe.each(CLIENTS)('the standard long-polling generator on $name', (kind) => {
  it('keeps the cookie it was given and sends it back', async () => {
    const tab = await serve(kind, () => false);
    expect(await tab.post('[]')).toEqual([{ n: 1, cookie: null }]);
    expect(await tab.post('[]')).toEqual([{ n: 2, cookie: 'seen=1' }]);
    tab.close();
  });

  it('sends a request again, once, when its reused keep-alive socket was closed under it', async () => {
    const tab = await serve(kind, (n) => n === 2);
    expect(await tab.post('[]')).toEqual([{ n: 1, cookie: null }]);
    // Idle, as between a tab's publishes: once the connection is back in the pool, it is reused.
    await eventually(() => idleConnections(tab) === 1, 5000, 'the connection back in the pool');
    // The second request goes out on the kept-alive socket, which the server drops.
    expect(await tab.post('[]')).toEqual([{ n: 2, cookie: 'seen=1' }]);
    expect(tab.staleRetries).toBe(1);
    tab.close();
  });

  it('fails a request whose fresh socket was dropped, as that server did see it', async () => {
    const tab = await serve(kind, () => true);
    await expect(tab.post('[]')).rejects.toThrow();
    expect(tab.staleRetries).toBe(0);
    tab.close();
  });

  it('runs the chat scenario through the shared long-polling conversation (src), with zero loss', async () => {
    server = http.createServer();
    new faye.NodeAdapter({ mount: '/bayeux', timeout: 25 }).attach(server);
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const r = await runWithGenerator(kind.generator, 'chat', {
      url: `http://127.0.0.1:${port}/bayeux`,
      transport: 'long-polling',
      clients: 20,
      rooms: 4,
      roomsPerClient: 2,
      batches: 10,
      batchSize: 5,
      pause: 5,
      drain: 5000,
    });
    expect(r.sessions.connected).toBe(20);
    expect(r.messages.sent).toBe(50);
    expect(r.messages.received).toBe(r.messages.expected);
    expect(r.messages.expected).toBeGreaterThan(50 * 5);
    expect({
      lost: r.messages.lost,
      duplicated: r.messages.duplicated,
      sessionsLost: r.sessions.lost,
    }).toEqual({
      lost: 0,
      duplicated: 0,
      sessionsLost: 0,
    });
    server.closeAllConnections();
  });
});
