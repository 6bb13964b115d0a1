import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the bench, without declarations
import { StandardClient, StandardLpDriver } from '../bench/generators/standard-lp.mjs';
// @ts-expect-error: a plain ES module of the bench, without declarations
import { UndiciClient, UndiciLpDriver } from '../bench/generators/undici-lp.mjs';

const CLIENTS = [
  { name: 'node:http', Driver: StandardLpDriver, Client: StandardClient },
  { name: 'undici', Driver: UndiciLpDriver, Client: UndiciClient },
];

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
  const driver = new kind.Driver({ url: `http://127.0.0.1:${port}/bayeux`, localAddresses: [] });
  return { driver, client: new kind.Client(driver, 0) };
}

describe.each(CLIENTS)('the standard long-polling generator on $name', (kind) => {
  it('keeps the cookie it was given and sends it back', async () => {
    const { client } = await serve(kind, () => false);
    expect(await client.post('[]')).toEqual([{ n: 1, cookie: null }]);
    expect(await client.post('[]')).toEqual([{ n: 2, cookie: 'seen=1' }]);
    await client.agent.destroy();
  });

  it('sends a request again, once, when its reused keep-alive socket was closed under it', async () => {
    const { driver, client } = await serve(kind, (n) => n === 2);
    expect(await client.post('[]')).toEqual([{ n: 1, cookie: null }]);
    // Idle for a moment, as between a tab's publishes: the pool then reuses that connection.
    await new Promise((r) => setTimeout(r, 20));
    // The second request goes out on the kept-alive socket, which the server drops.
    expect(await client.post('[]')).toEqual([{ n: 2, cookie: 'seen=1' }]);
    expect(driver.staleRetries).toBe(1);
    await client.agent.destroy();
  });

  it('fails a request whose fresh socket was dropped, as that server did see it', async () => {
    const { driver, client } = await serve(kind, () => true);
    await expect(client.post('[]')).rejects.toThrow();
    expect(driver.staleRetries).toBe(0);
    await client.agent.destroy();
  });
});
