/**
 * gzip on the HTTP transports (the `compression` option), read by raw `node:http` clients
 * that decode the bytes themselves: long-polling replies past the threshold are gzipped
 * for a request that accepts it (and only then), and a stream (`streaming`, `eventsource`)
 * is one gzip body whose every frame can be decoded as soon as it arrives, and whose end
 * checks out (CRC-32 and length).
 */
import { type IncomingHttpHeaders, request } from 'node:http';
import { createGunzip, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type Started, startServer } from './start-server.js';
import { cookieOf, streamConnect, streamingClient } from './stream-client.js';
import { type Msg, TestClient } from './test-client.js';

let started: Started | null = null;
afterEach(async () => {
  await started?.server.close();
  started = null;
});

const BIG = {
  rows: Array.from({ length: 40 }, (_, i) => ({ symbol: `SYM${i}`, bid: 100 + i, ask: 101 + i })),
};

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One POST to the endpoint, its body read whole and left as it came. */
function post(path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(`${started?.base}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** A long-polling session subscribed to `/feed`, with `BIG` queued for it. */
async function queuedBig(): Promise<TestClient> {
  const client = new TestClient(started?.base as string, 'long-polling');
  await client.handshake();
  await client.subscribe('/feed');
  started?.server.bayou.publish('/feed', BIG);
  return client;
}

const connectOf = (client: TestClient): Msg[] => [
  { channel: '/meta/connect', clientId: client.clientId, connectionType: 'long-polling' },
];

describe('gzip on long-polling replies', () => {
  it('gzips a reply past the threshold for a request that accepts gzip', async () => {
    started = await startServer({ compression: true });
    const client = await queuedBig();
    const r = await post('/bayeux', connectOf(client), {
      'accept-encoding': 'gzip, deflate',
      ...cookieOf(client),
    });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers.vary).toBe('accept-encoding');
    const text = gunzipSync(r.body).toString();
    expect((JSON.parse(text) as Msg[]).find((m) => m.channel === '/feed')?.data).toEqual(BIG);
    expect(r.body.length).toBeLessThan(text.length / 3);
  });

  it('leaves a small reply, a request without Accept-Encoding and a server without compression alone', async () => {
    started = await startServer({ compression: true });
    const small = await post(
      '/bayeux',
      [{ channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] }],
      {
        'accept-encoding': 'gzip',
      },
    );
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.body.toString())).toMatchObject([{ successful: true }]);
    const client = await queuedBig();
    const plain = await post('/bayeux', connectOf(client), cookieOf(client));
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toContain('SYM39');
    await started.server.close();
    started = await startServer();
    const off = await queuedBig();
    const r = await post('/bayeux', connectOf(off), { 'accept-encoding': 'gzip', ...cookieOf(off) });
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body.toString()).toContain('SYM39');
  });

  it('does not gzip for gzip;q=0', async () => {
    started = await startServer({ compression: true });
    const client = await queuedBig();
    const r = await post('/bayeux', connectOf(client), {
      'accept-encoding': 'gzip;q=0, identity',
      ...cookieOf(client),
    });
    expect(r.headers['content-encoding']).toBeUndefined();
  });
});

/** A gzipped stream read through `createGunzip`, frame by frame as its bytes arrive. */
class GunzipReader {
  text = '';
  wire = 0;
  headers: IncomingHttpHeaders = {};
  readonly ended: Promise<void>;
  private waiters: { check: () => boolean; resolve: () => void }[] = [];

  constructor(open: (onResponse: (res: import('node:http').IncomingMessage) => void) => void) {
    this.ended = new Promise((resolve, reject) =>
      open((res) => {
        this.headers = res.headers;
        const gunzip = createGunzip();
        res.on('data', (c: Buffer) => {
          this.wire += c.length;
        });
        res.pipe(gunzip);
        gunzip.on('data', (c: Buffer) => {
          this.text += c.toString();
          const ready = this.waiters.filter((w) => w.check());
          this.waiters = this.waiters.filter((w) => !ready.includes(w));
          for (const w of ready) w.resolve();
        });
        gunzip.on('end', () => resolve());
        gunzip.on('error', reject);
      }),
    );
  }

  /** Resolves once the decoded text contains `needle`. */
  until(needle: string): Promise<void> {
    const check = () => this.text.includes(needle);
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }
}

describe.each(['streaming', 'eventsource'] as const)('a gzipped %s stream', (kind) => {
  it('can be decoded frame by frame while open, and ends with a valid gzip trailer', async () => {
    started = await startServer({ compression: true });
    const base = started.base;
    const client = await streamingClient(base, kind);
    await client.subscribe('/feed');
    const reader = new GunzipReader((onResponse) => {
      const headers = { 'accept-encoding': 'gzip', ...cookieOf(client) };
      const req =
        kind === 'streaming'
          ? request(`${base}/bayeux/stream`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
            })
          : request(`${base}/bayeux/${client.clientId}`, {
              headers: { ...headers, accept: 'text/event-stream' },
            });
      req.on('response', onResponse);
      req.end(kind === 'streaming' ? JSON.stringify([streamConnect(client)]) : undefined);
    });
    // The padding, written at once: the stream is open.
    await reader.until('\n');
    expect(reader.headers['content-encoding']).toBe('gzip');
    const before = reader.wire;
    started.server.bayou.publish('/feed', BIG);
    await reader.until('SYM39');
    expect(reader.wire - before).toBeLessThan(JSON.stringify(BIG).length / 3);
    // Under the threshold: stored, not deflated, and still there at once.
    started.server.bayou.publish('/feed', { small: 1 });
    await reader.until('{"small":1}');
    await client.request({ channel: '/meta/disconnect', clientId: client.clientId });
    await reader.ended;
  });
});
