import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamConnection, type StreamHandler } from './stream-connection.js';

/** What one connection heard, and a promise per response end or close. */
interface Heard {
  heads: number[];
  body: string[];
  ends: boolean[];
  closes: number;
  next: () => Promise<void>;
}

function listener(): { handler: StreamHandler<Heard>; heard: Heard } {
  let wake: (() => void) | undefined;
  const heard: Heard = {
    heads: [],
    body: [],
    ends: [],
    closes: 0,
    next: () => new Promise<void>((resolve) => (wake = resolve)),
  };
  const handler: StreamHandler<Heard> = {
    onHead: (h, status) => h.heads.push(status),
    onBody: (h, text) => h.body.push(text),
    onEnd: (h, reusable) => {
      h.ends.push(reusable);
      wake?.();
    },
    onClose: (h) => {
      h.closes++;
      wake?.();
    },
  };
  return { handler, heard };
}

let server: http.Server;
let url: URL;
const sockets = new Set<number>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    sockets.add(req.socket.remotePort ?? 0);
    if (req.url === '/chunked') {
      // A streamed body in pieces, a multi-byte character cut across two chunks.
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      const euro = Buffer.from('€');
      res.write('[1]\n');
      res.write(Buffer.concat([Buffer.from('["'), euro.subarray(0, 1)]));
      setTimeout(() => res.end(Buffer.concat([euro.subarray(1, 3), Buffer.from('"]\n')])), 20);
    } else if (req.url === '/close') {
      // As Faye's EventSource answers: no length, no chunks, the body ends with the connection.
      req.socket.write(
        'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\nretry: 5\r\n\r\n',
      );
      setTimeout(() => req.socket.end('data: [1]\r\n\r\n'), 20);
    } else if (req.url === '/cut') {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.write('[1]\n');
      setTimeout(() => req.socket.destroy(), 20);
    } else {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end('{"error":"bad"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`;

describe('StreamConnection', () => {
  it('decodes a chunked body as it comes and carries the next request on the same connection', async () => {
    const { handler, heard } = listener();
    const conn = new StreamConnection(url, undefined, handler, heard);
    sockets.clear();
    let ended = heard.next();
    conn.send(get('/chunked'));
    await ended;
    expect(heard.heads).toEqual([200]);
    expect(heard.body.join('')).toBe('[1]\n["€"]\n');
    expect(heard.ends).toEqual([true]);
    ended = heard.next();
    conn.send(get('/bad'));
    await ended;
    expect(heard.heads).toEqual([200, 400]);
    expect(heard.body.join('')).toContain('{"error":"bad"}');
    expect(sockets.size).toBe(1);
    conn.close();
  });

  it('ends a body without length at the close, and reports a cut mid-body as a close', async () => {
    const { handler, heard } = listener();
    const conn = new StreamConnection(url, undefined, handler, heard);
    let done = heard.next();
    conn.send(get('/close'));
    await done;
    expect(heard.body.join('')).toBe('retry: 5\r\n\r\ndata: [1]\r\n\r\n');
    expect(heard.ends).toEqual([false]);
    done = heard.next();
    conn.send(get('/cut'));
    await done;
    expect(heard.closes).toBe(1);
    expect(heard.ends).toEqual([false]);
    conn.close();
  });
});
