/**
 * Safe defaults at the transports: same-origin only unless listed (CORS for long-polling,
 * the Origin check on WebSocket upgrades), no credentialed grant for a foreign origin,
 * non-browser clients unaffected; the `BAYEUX_BROWSER` cookie `Secure` under TLS; a
 * readable 413 for an oversized body; and embedding (prefix, metrics registry, log level).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bayou, createServer } from '../src/index.js';
import { type Started, startServer } from './start-server.js';

const handshake = JSON.stringify([
  { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling', 'websocket'] },
]);

function post(base: string, headers: Record<string, string>, body = handshake) {
  return fetch(`${base}/bayeux`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

function upgradeStatus(base: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/bayeux`, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => undefined);
  });
}

describe('origins by default (allowedOrigins: [])', () => {
  let s: Started;
  let self: string;
  beforeAll(async () => {
    s = await startServer();
    self = s.base;
  });
  afterAll(() => s.server.close());

  it('serves requests without an Origin and same-origin pages, without CORS headers', async () => {
    for (const headers of [{}, { origin: self }] as Record<string, string>[]) {
      const r = await post(s.base, headers);
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect(await upgradeStatus(s.base, {})).toBe(101);
    expect(await upgradeStatus(s.base, { origin: self })).toBe(101);
  });

  it('gives a credentialed request from a foreign origin no CORS grant, and refuses its upgrade', async () => {
    const r = await post(s.base, { origin: 'https://evil.example', cookie: 'BAYEUX_BROWSER=victim' });
    expect(r.status).toBe(403);
    // The page may read that it is refused (without credentials: a browser hides it from a credentialed fetch).
    expect(await r.json()).toEqual({ error: 'origin not allowed' });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    const preflight = await fetch(`${s.base}/bayeux`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(await upgradeStatus(s.base, { origin: 'https://evil.example' })).toBe(403);
  });
});

describe('listed origins and the wildcard', () => {
  it('grants credentials to a listed origin only, and "*" without credentials', async () => {
    const listed = await startServer({ allowedOrigins: ['https://*.example.com'] });
    const ok = await post(listed.base, { origin: 'https://app.example.com' });
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect((await post(listed.base, { origin: 'https://example.com.evil.org' })).status).toBe(403);
    expect(await upgradeStatus(listed.base, { origin: 'https://app.example.com' })).toBe(101);
    await listed.server.close();

    const any = await startServer({ allowedOrigins: ['*'] });
    const star = await post(any.base, { origin: 'https://evil.example', cookie: 'BAYEUX_BROWSER=x' });
    expect(star.status).toBe(200);
    expect(star.headers.get('access-control-allow-origin')).toBe('*');
    expect(star.headers.get('access-control-allow-credentials')).toBeNull();
    await any.server.close();
  });

  it('refuses a malformed allowedOrigins entry at start-up, naming it', async () => {
    await expect(createServer({ allowedOrigins: ['example.com'] })).rejects.toThrow(
      /allowedOrigins.*"example.com" is not an origin/,
    );
  });
});

describe('the BAYEUX_BROWSER cookie', () => {
  it('is HttpOnly, SameSite=Lax and not Secure over plain http', async () => {
    const s = await startServer();
    const cookie = String((await post(s.base, {})).headers.get('set-cookie'));
    expect(cookie).toMatch(/^BAYEUX_BROWSER=[A-Za-z0-9_-]{16}; Path=\/; HttpOnly; SameSite=Lax$/);
    await s.server.close();
  });

  it('is Secure under TLS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bayou-cookie-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'pipe' },
    );
    const cert = readFileSync(join(dir, 'cert.pem'));
    const server = await createServer({
      host: '127.0.0.1',
      port: 0,
      https: { key: readFileSync(join(dir, 'key.pem')), cert },
    });
    const base = await server.listen();
    const setCookie = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        `${base}/bayeux`,
        { method: 'POST', ca: cert, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(String(res.headers['set-cookie']));
        },
      );
      req.on('error', reject);
      req.end(handshake);
    });
    expect(setCookie).toMatch(/; Secure/);
    await server.close();
  });
});

describe('an oversized body', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({ maxPayloadBytes: 64 * 1024 });
  });
  afterAll(() => s.server.close());

  it('gets a readable 413 with a JSON body, also while the client is still sending', async () => {
    const body = JSON.stringify([{ channel: '/x', data: 'x'.repeat(512 * 1024) }]);
    const r = await post(s.base, {}, body);
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ error: '413:65536:message_too_large' });

    // A chunked upload with no Content-Length: refused once past the limit, the 413 read before any reset.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${s.base}/bayeux`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => {
            text += d.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const write = (): void => {
        while (sent < 12) {
          sent++;
          if (!req.write(chunk)) {
            req.once('drain', write);
            return;
          }
        }
        req.end();
      };
      write();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: '413:65536:message_too_large' });
    // The server goes on serving.
    expect((await post(s.base, {})).status).toBe(200);
  });
});

describe('embedding in an application', () => {
  it('refuses a Fastify prefix with a clear error', async () => {
    const app = Fastify();
    await expect(app.register(bayou, { prefix: '/push' } as never).ready()).rejects.toThrow(
      /does not take Fastify's "prefix".*"path"/,
    );
    await app.close();
  });

  it("adds its metrics to the app's registry and serves no /metrics of its own", async () => {
    const registry = new Registry();
    const app = Fastify();
    await app.register(bayou, { metricsRegistry: registry });
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    const text = await registry.metrics();
    expect(text).toMatch(/^bayou_sessions 0$/m);
    expect(text).toMatch(/bayou_limit_refusals_total\{limit="publish"\} 0/);
    expect(text).not.toMatch(/process_cpu/);
    await app.close();
  });

  it('logs its routes at warn: no per-request lines among the app’s own', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = Fastify({ logger: { level: 'info', stream } });
    app.get('/hello', async () => 'hi');
    await app.register(bayou, { healthPath: '/healthz' });
    await app.ready();
    await app.inject({
      method: 'POST',
      url: '/bayeux',
      payload: handshake,
      headers: { 'content-type': 'application/json' },
    });
    await app.inject({ method: 'GET', url: '/healthz' });
    await app.inject({ method: 'GET', url: '/hello' });
    const urls = lines.map((l) => (JSON.parse(l) as { req?: { url?: string } }).req?.url).filter(Boolean);
    expect(urls).toContain('/hello');
    expect(urls).not.toContain('/bayeux');
    expect(urls).not.toContain('/healthz');
    await app.close();
  });
});

describe('malformed WebSocket frames', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.server.close());

  function open(): Promise<WebSocket> {
    const ws = new WebSocket(`${s.base.replace(/^http/, 'ws')}/bayeux`);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  }
  const closed = (ws: WebSocket) =>
    new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));

  it('answers a binary frame with a Bayeux error', async () => {
    const ws = await open();
    const reply = new Promise<string>((resolve) => ws.once('message', (d) => resolve(String(d))));
    ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(JSON.parse(await reply)[0]).toMatchObject({
      successful: false,
      error: expect.stringMatching(/^400:/),
    });
    ws.terminate();
  });

  it('closes with 1002 on a protocol violation and 1007 on invalid UTF-8, and goes on serving', async () => {
    const unmasked = await open();
    const code1 = closed(unmasked);
    // A client frame without the mask bit: a protocol error.
    (unmasked as unknown as { _socket: { write(b: Buffer): void } })._socket.write(
      Buffer.from([0x81, 0x02, 0x68, 0x69]),
    );
    expect(await code1).toBe(1002);
    const badText = await open();
    const code2 = closed(badText);
    // A masked text frame (mask 0) whose payload is not UTF-8.
    (badText as unknown as { _socket: { write(b: Buffer): void } })._socket.write(
      Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]),
    );
    expect(await code2).toBe(1007);
    expect((await post(s.base, {})).status).toBe(200);
  });
});
