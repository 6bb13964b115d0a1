import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the bench, without declarations
import { StandardClient, StandardLpDriver } from '../bench/generators/standard-lp.mjs';

let server: http.Server | undefined;
afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server that answers `[{"n":<request count>}]`, or drops the socket when `drop` says so. */
async function serve(drop: (requestOnSocket: number) => boolean) {
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
      res.writeHead(200, { 'content-type': 'application/json' }).end(`[{"n":${requests}}]`);
    });
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const driver = new StandardLpDriver({ url: `http://127.0.0.1:${port}/bayeux`, localAddresses: [] });
  return { driver, client: new StandardClient(driver, 0) };
}

describe('the standard long-polling generator', () => {
  it('sends a request again, once, when its reused keep-alive socket was closed under it', async () => {
    const { driver, client } = await serve((n) => n === 2);
    expect(await client.post('[]')).toEqual([{ n: 1 }]);
    // The second request goes out on the kept-alive socket, which the server drops.
    expect(await client.post('[]')).toEqual([{ n: 2 }]);
    expect(driver.staleRetries).toBe(1);
    client.agent.destroy();
  });

  it('fails a request whose fresh socket was dropped, as that server did see it', async () => {
    const { driver, client } = await serve(() => true);
    await expect(client.post('[]')).rejects.toThrow();
    expect(driver.staleRetries).toBe(0);
    client.agent.destroy();
  });
});
