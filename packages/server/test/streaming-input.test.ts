/**
 * Stream requests on both ways into the endpoint — the direct path, and Fastify when an app
 * hook must see them — and what each does with bad input: a clear 4xx, never a crash.
 */

import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEnv, parseFlags } from '../src/config/flags.js';
import { resolveCli } from '../src/config/index.js';
import { servedDirectly } from '../src/http/direct-endpoint.js';
import { type BayouOptions, bayou, resolveOptions } from '../src/index.js';
import { cookieOf, openStream, type StreamReader, streamConnect, streamingClient } from './stream-client.js';
import { eventually } from './test-client.js';

const apps: FastifyInstance[] = [];
const streams: StreamReader[] = [];
afterEach(async () => {
  for (const r of streams.splice(0)) r.cut();
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

type Way = 'direct' | 'fastify';

async function start(way: Way, options: BayouOptions = {}): Promise<{ app: FastifyInstance; base: string }> {
  const app = Fastify();
  apps.push(app);
  const hooked: string[] = [];
  if (way === 'fastify') app.addHook('onRequest', async (req) => void hooked.push(req.url));
  await app.register(bayou, { timeout: 2000, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  expect(servedDirectly(app)).toBe(way === 'direct');
  const address = app.server.address();
  return { app, base: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

const post = (base: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}/bayeux/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

describe.each<Way>(['direct', 'fastify'])('stream requests on the %s path', (way) => {
  it('stream deliveries', async () => {
    const { app, base } = await start(way);
    const client = await streamingClient(base);
    await client.subscribe('/w');
    const reader = await openStream(base, streamConnect(client), cookieOf(client));
    streams.push(reader);
    await reader.waitFor((m) => m.channel === '/meta/connect');
    expect(reader.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    app.bayou.publish('/w', way);
    expect((await reader.waitFor((m) => m.channel === '/w')).data).toBe(way);
  });

  it('refuse bodies that are not one streaming connect with a 400 and a JSON error', async () => {
    const { app, base } = await start(way);
    const client = await streamingClient(base);
    const connect = streamConnect(client);
    const bad = [
      'not json',
      '[]',
      JSON.stringify([connect, connect]),
      JSON.stringify([{ ...connect, connectionType: 'long-polling' }]),
      JSON.stringify([{ channel: '/meta/subscribe', clientId: client.clientId, subscription: '/a' }]),
      JSON.stringify([42]),
    ];
    for (const body of bad) {
      const r = await post(base, body);
      expect(r.status, body).toBe(400);
      expect(typeof ((await r.json()) as { error?: unknown }).error).toBe('string');
    }
    // The server lives on and the session too.
    expect(app.bayou.session(client.clientId)).toBeDefined();
  });

  it('refuse an oversized body with 413 and an unknown content type with 415', async () => {
    const { base } = await start(way, { maxPayloadBytes: 1024 });
    expect((await post(base, JSON.stringify(['x'.repeat(4096)]))).status).toBe(413);
    expect((await post(base, '[]', { 'content-type': 'image/png' })).status).toBe(415);
  });

  it('refuse a page of a foreign origin with 403', async () => {
    const { base } = await start(way);
    const client = await streamingClient(base);
    const r = await post(base, JSON.stringify([streamConnect(client)]), { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
  });

  it('refuse a stream to a session acknowledged CometD-style (ack without numbered frames)', async () => {
    const { base } = await start(way);
    const client = await streamingClient(base, 'streaming', { ack: true });
    const reader = await openStream(base, streamConnect(client), cookieOf(client));
    streams.push(reader);
    await reader.ended;
    expect(reader.frames).toEqual([
      [
        expect.objectContaining({
          channel: '/meta/connect',
          successful: false,
          error: expect.stringMatching(/^400:streaming,/),
        }),
      ],
    ]);
  });
});

describe('--transports', () => {
  it('offers only the types listed, and refuses unknown or repeated names', async () => {
    const { base } = await start('direct', { transports: ['eventsource', 'long-polling'] });
    const client = await streamingClient(base, 'eventsource');
    const reply = await client.request({
      channel: '/meta/handshake',
      version: '1.0',
      supportedConnectionTypes: ['eventsource'],
    });
    expect(reply.supportedConnectionTypes).toEqual(['eventsource', 'long-polling']);
    const app = Fastify();
    apps.push(app);
    await expect(app.register(bayou, { transports: ['streaming', 'sse'] as never })).rejects.toThrow(
      /option "transports" must be a non-empty array of distinct names among "websocket", "streaming", "eventsource", "long-polling"/,
    );
  });
});

describe('stream limits as options and flags', () => {
  it('reads --transports, --stream-max-bytes and --stream-max-age (and BAYOU_*) into config keys', () => {
    const p = parseFlags([
      'start',
      '--transports',
      'streaming,long-polling',
      '--stream-max-bytes',
      '65536',
      '--stream-max-age=5000',
    ]);
    expect(p.layer).toEqual({
      transports: ['streaming', 'long-polling'],
      streamMaxBytes: 65536,
      streamMaxAge: 5000,
    });
    expect(parseEnv({ BAYOU_STREAM_MAX_BYTES: '8192', BAYOU_STREAM_MAX_AGE: '2000' }).layer).toEqual({
      streamMaxBytes: 8192,
      streamMaxAge: 2000,
    });
    expect(() => parseFlags(['--stream-max-age', '-1'])).toThrow(/--stream-max-age/);
  });

  it('takes them from a config file under the flags and the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bayou-streams-'));
    const file = join(dir, 'bayou.json');
    writeFileSync(
      file,
      JSON.stringify({ transports: ['streaming', 'long-polling'], streamMaxBytes: 8192, streamMaxAge: 9000 }),
    );
    const r = await resolveCli(['start', '--config', file, '--stream-max-age', '7000'], {
      BAYOU_STREAM_MAX_BYTES: '16384',
    });
    expect(r.config).toMatchObject({
      transports: ['streaming', 'long-polling'],
      streamMaxBytes: 16384,
      streamMaxAge: 7000,
    });
    const app = Fastify();
    apps.push(app);
    await app.register(bayou, {
      transports: r.config.transports as never,
      streamMaxBytes: 16384,
      streamMaxAge: 7000,
    });
  });

  it('refuses limits too small to carry a frame or to be worth a request, naming the option', () => {
    expect(() => resolveOptions({ streamMaxBytes: 100 })).toThrow(
      'option "streamMaxBytes" must be at least 4096 (bytes)',
    );
    expect(() => resolveOptions({ streamMaxAge: 10 })).toThrow(
      'option "streamMaxAge" must be at least 1000 (ms)',
    );
    expect(() => resolveOptions({ transports: ['streaming', 'streaming'] })).toThrow(/option "transports"/);
    expect(resolveOptions({}).transports).toEqual(['websocket', 'streaming', 'eventsource', 'long-polling']);
  });
});

/** Sends a raw stream request and collects the raw response bytes until `until` holds or the end. */
async function rawStream(
  base: string,
  version: '1.0' | '1.1',
  body: string,
  cookie: string | null,
  until: (text: string) => boolean,
): Promise<string> {
  const { port } = new URL(base);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(
    `POST /bayeux/stream HTTP/${version}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${cookie === null ? '' : `Cookie: ${cookie}\r\n`}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  let text = '';
  await new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (until(text)) resolve();
    });
    socket.on('close', () => resolve());
  });
  socket.destroy();
  return text;
}

describe.each<Way>(['direct', 'fastify'])('the wire of a stream on the %s path', (way) => {
  it('is chunked, one chunk per flush however many messages', async () => {
    const { app, base } = await start(way);
    const client = await streamingClient(base);
    await client.subscribe('/wire');
    const seen = rawStream(base, '1.1', JSON.stringify([streamConnect(client)]), client.cookie, (t) =>
      t.includes('"data":4'),
    );
    await eventually(() => app.bayou.session(client.clientId)?.state === 'carried');
    for (let i = 0; i < 5; i++) app.bayou.publish('/wire', i);
    const text = await seen;
    const [head, body] = text.split('\r\n\r\n', 2) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
    // The chunks: padding, the connect reply, the five publications in one.
    const chunks: string[] = [];
    let rest = text.slice(head.length + 4);
    while (rest.length > 0) {
      const eol = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, eol), 16);
      chunks.push(rest.slice(eol + 2, eol + 2 + size));
      rest = rest.slice(eol + 2 + size + 2);
    }
    expect(chunks[0]).toBe(`${' '.repeat(2048)}\n`);
    expect(JSON.parse(chunks[1] as string)[0]).toMatchObject({ channel: '/meta/connect', successful: true });
    expect(JSON.parse(chunks[2] as string)).toEqual(
      [0, 1, 2, 3, 4].map((data) => ({ channel: '/wire', data })),
    );
    expect(chunks[2]?.endsWith('\n')).toBe(true);
    expect(body.length).toBeGreaterThan(0);
  });
});

describe('an HTTP/1.0 stream request', () => {
  it('gets the same lines, unchunked, until the connection closes', async () => {
    const { app, base } = await start('direct');
    const client = await streamingClient(base);
    await client.subscribe('/old');
    const seen = rawStream(base, '1.0', JSON.stringify([streamConnect(client)]), client.cookie, (t) =>
      t.includes('"data":"x"'),
    );
    await eventually(() => app.bayou.session(client.clientId)?.state === 'carried');
    app.bayou.publish('/old', 'x');
    const text = await seen;
    const body = text.slice(text.indexOf('\r\n\r\n') + 4);
    const lines = body.split('\n');
    expect(lines[0]).toBe(' '.repeat(2048));
    expect(JSON.parse(lines[1] as string)[0]).toMatchObject({ channel: '/meta/connect', successful: true });
    expect(JSON.parse(lines[2] as string)).toEqual([{ channel: '/old', data: 'x' }]);
  });
});
