import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpConnection, type HttpResponse, readChunked } from './http-connection.js';

describe('readChunked', () => {
  it('decodes a complete chunked body and says where the next response starts', () => {
    const raw = Buffer.from('HEAD4\r\nWiki\r\n6\r\npedia!\r\n0\r\n\r\nNEXT');
    expect(readChunked(raw, 4)).toEqual({ body: 'Wikipedia!', next: raw.length - 4 });
  });

  it('waits while the body is incomplete', () => {
    expect(readChunked(Buffer.from('4\r\nWiki\r\n6\r\nped'), 0)).toBeUndefined();
    expect(readChunked(Buffer.from('4\r\nWiki\r\n0\r\n'), 0)).toBeUndefined();
  });
});

describe('HttpConnection', () => {
  let server: net.Server | undefined;
  afterEach(() => server?.close());

  /** A raw server that answers every request with the given bytes, split in small pieces. */
  async function rawServer(answer: (n: number) => string, seen: string[]): Promise<URL> {
    let n = 0;
    server = net.createServer((socket) => {
      socket.on('data', (d) => {
        seen.push(d.toString());
        const requests = d.toString().split('POST ').length - 1;
        for (let r = 0; r < requests; r++) {
          const text = answer(n++);
          for (let i = 0; i < text.length; i += 7) socket.write(text.slice(i, i + 7));
        }
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return new URL(`http://127.0.0.1:${(server!.address() as AddressInfo).port}/bayeux`);
  }

  it('pipelines requests and matches responses in order, with cookies and both body framings', async () => {
    const seen: string[] = [];
    const url = await rawServer(
      (n) =>
        n === 0
          ? 'HTTP/1.1 200 OK\r\nSet-Cookie: BAYEUX_BROWSER=abc; Path=/\r\nContent-Length: 5\r\n\r\nfirst'
          : 'HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nsec\r\n3\r\nond\r\n0\r\n\r\n',
      seen,
    );
    const conn = new HttpConnection(url, undefined);
    const got: HttpResponse[] = [];
    await new Promise<void>((resolve) => {
      const handler = (_: null, error: Error | undefined, res: HttpResponse | undefined) => {
        expect(error).toBeUndefined();
        got.push(res!);
        if (got.length === 2) resolve();
      };
      conn.request('[1]', undefined, handler, null);
      conn.request('[22]', 'BAYEUX_BROWSER=abc', handler, null);
    });
    conn.close();
    expect(got).toEqual([
      { status: 200, body: 'first', cookie: 'BAYEUX_BROWSER=abc' },
      { status: 404, body: 'second', cookie: undefined },
    ]);
    const sent = seen.join('');
    expect(sent).toContain('POST /bayeux HTTP/1.1\r\n');
    expect(sent).toContain('Cookie: BAYEUX_BROWSER=abc\r\n');
    expect(sent).toMatch(/Content-Length: 4\r\n\r\n\[22\]$/);
  });

  it('fails the requests in flight when the server closes the connection', async () => {
    server = net.createServer((socket) => socket.on('data', () => socket.destroy()));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
    const conn = new HttpConnection(url, undefined);
    const error = await new Promise<Error | undefined>((resolve) =>
      conn.request('[]', undefined, (_: null, e) => resolve(e), null),
    );
    expect(error?.message).toMatch(/closed|reset/);
  });
});
