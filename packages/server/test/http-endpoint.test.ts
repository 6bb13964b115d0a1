/**
 * The HTTP transport base (src/transports/http-endpoint.ts, body-reader.ts, http-reply.ts)
 * on its own, with two test transports instead of Bayeux: every POST's body is read by the
 * one reader and answered through an `HttpReply`, alike on the direct path and through
 * Fastify (an app hook keeps it there), including a held response written frame by frame.
 */
import { type IncomingMessage, request } from 'node:http';
import { PassThrough } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { directEndpoint, servedDirectly } from '../src/http/direct-endpoint.js';
import { createHttpEndpoint, type HttpTransport } from '../src/transports/http-endpoint.js';
import type { ResponseStream } from '../src/transports/http-reply.js';
import { OriginGuard } from '../src/transports/origin-guard.js';
import type { HttpPost } from '../src/transports/poll-request.js';
import { eventually } from './test-client.js';

const LIMIT = 1000;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

interface Echoed {
  subpath: string;
  text: string;
  ip: string | undefined;
  secure: boolean;
}

/** Echoes what it was handed: the subpath, the body text, the peer as the base saw it. */
const echo: HttpTransport = {
  accepts: () => true,
  serve(post: HttpPost) {
    const { subpath, text, ip, secure } = post;
    post.reply.send(200, JSON.stringify({ subpath, text, ip, secure }));
  },
  drain: () => undefined,
};

/** Holds a response on `/stream` and writes into it what the test pushes. */
class StreamTransport implements HttpTransport {
  readonly streams: ResponseStream[] = [];
  readonly closed: string[] = [];
  private waiting: ((s: ResponseStream) => void) | null = null;

  accepts(subpath: string): boolean {
    return subpath === '/stream';
  }

  serve(post: HttpPost): void {
    const stream = post.reply.openStream(200, { 'content-type': 'application/x-ndjson' });
    if (stream === null) throw new Error('no stream');
    post.reply.raw?.once('close', () => this.closed.push(post.text));
    stream.write(`${post.text}\n`);
    this.streams.push(stream);
    this.waiting?.(stream);
  }

  drain(): void {}

  next(): Promise<ResponseStream> {
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}

type Path = 'direct' | 'fastify';

async function start(
  path: Path,
  streams = new StreamTransport(),
  hooks: (app: FastifyInstance) => void = () => undefined,
): Promise<string> {
  const app = Fastify();
  apps.push(app);
  // Any request hook keeps the endpoint in Fastify.
  if (path === 'fastify') app.addHook('onRequest', async () => undefined);
  hooks(app);
  const options = {
    path: '/bayeux',
    allowedOrigins: [],
    maxPayloadBytes: LIMIT,
    compression: false,
    compressionThreshold: 1024,
  };
  const origins = new OriginGuard(options.allowedOrigins, app.log);
  const endpoint = createHttpEndpoint({ log: app.log }, options, [streams, echo], origins);
  await app.register(async (scope) => {
    await endpoint.routes(scope);
    directEndpoint(app, scope, { path: '/bayeux', serve: endpoint.serveDirect, closing: () => false });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  expect(servedDirectly(app)).toBe(path === 'direct');
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/bayeux`;
}

function post(
  url: string,
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const init: RequestInit & { duplex?: 'half' } = {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  };
  if (body instanceof ReadableStream) init.duplex = 'half';
  return fetch(url, init);
}

/** A body sent chunked (no Content-Length), `size` bytes in pieces. */
function chunked(size: number): ReadableStream<Uint8Array> {
  let left = size;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const n = Math.min(left, 300);
      left -= n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
}

describe.each<Path>(['direct', 'fastify'])('the HTTP transport base, %s path', (path) => {
  it('reads every body with one reader: JSON, text, a form field; the limit and the type refused alike', async () => {
    const url = await start(path);
    const read = async (r: Response) => ({ status: r.status, body: (await r.json()) as Echoed });
    expect(await read(await post(`${url}/connect?x=1`, '[1]'))).toMatchObject({
      status: 200,
      body: { subpath: '/connect', text: '[1]', ip: '127.0.0.1', secure: false },
    });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(await read(await post(url, `message=${encodeURIComponent('[2]')}&x=y`, form))).toMatchObject({
      status: 200,
      body: { subpath: '', text: '[2]' },
    });
    const text = { 'content-type': 'text/plain;charset=UTF-8' };
    expect((await read(await post(url, '[3]', text))).body.text).toBe('[3]');
    // Over the limit: declared, and found while reading a chunked body.
    for (const body of ['x'.repeat(LIMIT + 1), chunked(LIMIT * 3)]) {
      const r = await post(url, body);
      expect(r.status).toBe(413);
      expect(await r.text()).toMatch(/413:1000:message_too_large/);
    }
    // Exactly at the limit is read.
    expect((await read(await post(url, chunked(LIMIT)))).body.text).toBe(' '.repeat(LIMIT));
    const xml = await post(url, '[4]', { 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expect(await xml.text()).toMatch(/Unsupported Media Type/);
  });

  it('holds a response on a streaming transport and writes it frame by frame', async () => {
    const streams = new StreamTransport();
    const url = await start(path, streams);
    const opened = streams.next();
    const r = await post(`${url}/stream`, '[0]');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-ndjson');
    expect(r.headers.get('content-length')).toBeNull();
    const stream = await opened;
    const reader = (r.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    const until = async (text: string): Promise<void> => {
      while (!seen.endsWith(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${JSON.stringify(text)}: ${JSON.stringify(seen)}`);
        seen += value;
      }
    };
    // Each frame arrives before the next is written: nothing waits for the end.
    await until('[0]\n');
    stream.write('[1]\n');
    await until('[1]\n');
    stream.write('[2]\n');
    await until('[2]\n');
    stream.end('[3]\n');
    await until('[3]\n');
    expect((await reader.read()).done).toBe(true);
    expect(seen).toBe('[0]\n[1]\n[2]\n[3]\n');

    // The client going away is seen on the reply's response. (node:http rather than fetch:
    // undici opens a spare connection that would hold the server's close.)
    const again = streams.next();
    const held = request(`${url}/stream`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'text/plain' },
    });
    held.on('error', () => undefined);
    held.end('gone');
    const response = await new Promise<IncomingMessage>((resolve) => held.once('response', resolve));
    expect(response.statusCode).toBe(200);
    await again;
    held.destroy();
    await eventually(() => expect(streams.closed).toContain('gone'));
  });
});

describe('the HTTP transport base through Fastify', () => {
  it("reads the payload a preParsing hook hands on, not the request's own", async () => {
    const url = await start('fastify', new StreamTransport(), (app) =>
      app.addHook('preParsing', async (_req, _reply, payload) => {
        const replaced = new PassThrough();
        payload.resume();
        replaced.end('["from the hook"]');
        return replaced;
      }),
    );
    const r = await post(url, '["from the client"]');
    expect(r.status).toBe(200);
    expect(((await r.json()) as { text: string }).text).toBe('["from the hook"]');
  });
});
