/**
 * HTTP/2 on the standalone server: with TLS, HTTP/2 by ALPN beside HTTP/1.1 and WebSocket
 * on one port; without TLS (`http2: true`), h2c beside HTTP/1.1 and WebSocket, told apart
 * by the preface; `bayou start` with TLS turns it on. Over HTTP/2 a browser's long-polls
 * share one connection, so no `multiple-clients` advice: two held at once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildServer } from '../src/config/build-server.js';
import { type Started, startServer } from './start-server.js';
import { eventually } from './test-client.js';

const dir = mkdtempSync(join(tmpdir(), 'bayou-h2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const keyFile = join(dir, 'key.pem');
const certFile = join(dir, 'cert.pem');
// A self-signed certificate for 127.0.0.1, made for this run.
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ],
  { stdio: 'ignore' },
);
const tls = { key: readFileSync(keyFile), cert: readFileSync(certFile) };

interface Reply {
  status: number;
  cookie: string | null;
  body: Record<string, unknown>[];
}

/** POSTs a Bayeux batch on an HTTP/2 session. */
function h2post(
  session: http2.ClientHttp2Session,
  messages: object[],
  cookie?: string,
  origin?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = session.request({
      ':method': 'POST',
      ':path': '/bayeux',
      'content-type': 'application/json',
      ...(cookie ? { cookie } : {}),
      ...(origin ? { origin } : {}),
    });
    let status = 0;
    let setCookie: string | null = null;
    let text = '';
    req.on('response', (headers) => {
      status = Number(headers[':status']);
      const c = headers['set-cookie'];
      setCookie = c === undefined ? null : (String(Array.isArray(c) ? c[0] : c).split(';')[0] ?? null);
    });
    req.setEncoding('utf8');
    req.on('data', (d) => {
      text += d;
    });
    req.on('end', () => resolve({ status, cookie: setCookie, body: JSON.parse(text) }));
    req.on('error', reject);
    req.end(JSON.stringify(messages));
  });
}

const handshake = { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] };
const connect = (clientId: string) => ({
  channel: '/meta/connect',
  clientId,
  connectionType: 'long-polling',
});

/** Handshakes and makes the first connect (answered at once); returns the clientId. */
async function session(
  h2: http2.ClientHttp2Session,
  cookie?: string,
): Promise<{ id: string; cookie: string }> {
  const r = await h2post(h2, [handshake], cookie);
  const id = r.body[0]?.clientId as string;
  const c = cookie ?? (r.cookie as string);
  await h2post(h2, [connect(id)], c);
  return { id, cookie: c };
}

function http1Get(url: string): Promise<string> {
  const get = url.startsWith('https') ? https.get : http.get;
  return new Promise((resolve, reject) => {
    get(url, { rejectUnauthorized: false }, (res) => {
      resolve(`HTTP/${res.httpVersion} ${res.statusCode}`);
      res.resume();
    }).on('error', reject);
  });
}

async function websocketWorks(url: string): Promise<boolean> {
  const ws = new WebSocket(url, { rejectUnauthorized: false });
  const reply = await new Promise<unknown>((resolve, reject) => {
    ws.on('open', () => ws.send(JSON.stringify([{ ...handshake, supportedConnectionTypes: ['websocket'] }])));
    ws.on('message', (m) => resolve(JSON.parse(String(m))));
    ws.on('error', reject);
  });
  ws.close();
  return (reply as { successful?: boolean }[])[0]?.successful === true;
}

async function metric(server: Started['server'], name: string): Promise<number> {
  const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (line === null) throw new Error(`no metric ${name}`);
  return Number(line[1]);
}

describe('HTTP/2 on the standalone server', () => {
  let s: Started | null = null;
  afterAll(async () => {
    await s?.server.close();
  });

  it('with TLS: HTTP/2 by ALPN, HTTP/1.1 and WebSocket on the same port; two long-polls of one browser held at once', async () => {
    s = await startServer({ https: tls, http2: true, timeout: 3000, maxSessionsPerBrowser: 1 });
    const { server, base } = s;
    expect(base).toMatch(/^https:/);
    const h2 = http2.connect(base, { rejectUnauthorized: false });
    try {
      expect(h2.alpnProtocol).toBe(undefined); // not negotiated until connected
      const a = await session(h2);
      expect(h2.alpnProtocol).toBe('h2');
      // A page of the server's own origin: HTTP/2 names the host in :authority, not Host.
      const own = await h2post(h2, [handshake], undefined, base);
      expect(own.body[0]?.successful).toBe(true);
      expect(a.cookie).toMatch(/^BAYEUX_BROWSER=/);
      const b = await session(h2, a.cookie);
      await h2post(h2, [{ channel: '/meta/subscribe', clientId: a.id, subscription: '/h2' }], a.cookie);
      await h2post(h2, [{ channel: '/meta/subscribe', clientId: b.id, subscription: '/h2' }], a.cookie);
      const first = h2post(h2, [connect(a.id)], a.cookie);
      const second = h2post(h2, [connect(b.id)], a.cookie);
      // Over HTTP/1.1 the second would be answered at once with multiple-clients advice.
      await eventually(() => server.bayou.stats().heldLongPolls === 2);
      server.bayou.publish('/h2', 'both');
      for (const reply of [await first, await second]) {
        expect(reply.body.some((m) => m.channel === '/h2' && m.data === 'both')).toBe(true);
        const advice = reply.body.find((m) => m.channel === '/meta/connect')?.advice as Record<
          string,
          unknown
        >;
        expect(advice['multiple-clients']).toBeUndefined();
      }
    } finally {
      h2.close();
    }
    expect(await http1Get(`${base}/healthz`)).toBe('HTTP/1.1 200');
    expect(await websocketWorks(`${base.replace('https', 'wss')}/bayeux`)).toBe(true);
    await server.close();
    s = null;
  });

  it('without TLS, http2: h2c beside HTTP/1.1 and WebSocket', async () => {
    s = await startServer({ http2: true });
    const { server, base } = s;
    const h2 = http2.connect(base);
    try {
      const a = await session(h2);
      expect(a.id).toMatch(/\./);
    } finally {
      h2.close();
    }
    expect(await http1Get(`${base}/healthz`)).toBe('HTTP/1.1 200');
    expect(await websocketWorks(`${base.replace('http', 'ws')}/bayeux`)).toBe(true);
    await server.close();
    s = null;
  });

  it('long-polling, streaming and EventSource of one browser on one HTTP/2 connection, all held at once', async () => {
    s = await startServer({ https: tls, http2: true, timeout: 3000 });
    const { server, base } = s;
    const h2 = http2.connect(base, { rejectUnauthorized: false });
    /** A request left open: its body so far, as text. */
    const open = (headers: http2.OutgoingHttpHeaders, body?: object[]) => {
      const req = h2.request(headers, { endStream: body === undefined });
      const got = { text: '', status: 0 };
      req.on('response', (h) => {
        got.status = Number(h[':status']);
      });
      req.setEncoding('utf8');
      req.on('data', (d) => {
        got.text += d;
      });
      req.on('error', () => {});
      if (body !== undefined) req.end(JSON.stringify(body));
      return got;
    };
    try {
      const polling = await session(h2);
      const cookie = polling.cookie;
      const hello = (type: string) => ({ ...handshake, supportedConnectionTypes: [type, 'long-polling'] });
      const streaming = (await h2post(h2, [hello('streaming')], cookie)).body[0]?.clientId as string;
      const es = (await h2post(h2, [hello('eventsource')], cookie)).body[0]?.clientId as string;
      for (const id of [polling.id, streaming, es])
        await h2post(h2, [{ channel: '/meta/subscribe', clientId: id, subscription: '/all' }], cookie);
      const post = { ':method': 'POST', 'content-type': 'application/json', cookie };
      const held = open({ ...post, ':path': '/bayeux' }, [connect(polling.id)]);
      const stream = open({ ...post, ':path': '/bayeux/stream' }, [
        { channel: '/meta/connect', clientId: streaming, connectionType: 'streaming' },
      ]);
      const events = open({ ':path': `/bayeux/${es}`, accept: 'text/event-stream', cookie });
      await eventually(() => events.status === 200);
      await h2post(h2, [{ channel: '/meta/connect', clientId: es, connectionType: 'eventsource' }], cookie);
      await eventually(() => server.bayou.stats().heldLongPolls === 1 && stream.status === 200);
      server.bayou.publish('/all', 'one connection');
      for (const got of [held, stream, events])
        await eventually(() => got.text.includes('"data":"one connection"'));
      expect(h2.alpnProtocol).toBe('h2');
      expect(server.bayou.sessionCount).toBe(3);
      expect(await new Promise((r) => server.app.server.getConnections((_e, n) => r(n)))).toBe(1);
    } finally {
      h2.close();
    }
    await server.close();
    s = null;
  });

  it('the connection guard counts TCP connections over HTTP/2 (TLS and h2c): many sessions on one, the next connection past maxConnections refused', async () => {
    const warnings: string[] = [];
    const warned = (w: Error) => warnings.push(w.message);
    process.on('warning', warned);
    for (const options of [{ https: tls }, {}]) {
      s = await startServer({ ...options, http2: true, maxConnections: 1, handshakeTimeout: 0 });
      const { server, base } = s;
      const h2 = http2.connect(base, { rejectUnauthorized: false });
      try {
        const ids = [];
        for (let i = 0; i < 4; i++) ids.push((await session(h2)).id);
        expect(new Set(ids).size).toBe(4);
        expect(await metric(server, 'bayou_connections_open')).toBe(1);
        const other = http2.connect(base, { rejectUnauthorized: false });
        other.on('error', () => {});
        // Over TLS nothing can be said before the handshake: the socket is closed. Over h2c
        // the request is answered 503, as an HTTP/1.1 one would be.
        const refused = await h2post(other, [handshake]).then(
          (r) => r.status,
          () => 'closed',
        );
        other.destroy();
        expect(refused).toBe(options.https ? 'closed' : 503);
        expect(await metric(server, 'bayou_connections_refused_total')).toBe(1);
        expect((await h2post(h2, [handshake])).body[0]?.successful).toBe(true);
      } finally {
        h2.close();
      }
      await server.close();
      s = null;
    }
    process.off('warning', warned);
    // The 503 over h2c is made without HTTP/1.1's Connection header (Node warned of it).
    expect(warnings.filter((w) => /connection header/i.test(w))).toEqual([]);
  });

  it('bayou start with TLS serves HTTP/2 unless --http2=false', async () => {
    for (const [http2Option, expected] of [
      [undefined, true],
      [false, false],
    ] as const) {
      const built = await buildServer(
        {
          host: '127.0.0.1',
          port: 0,
          tls: { key: keyFile, cert: certFile },
          http2: http2Option,
          logger: false,
        },
        false,
      );
      expect((built.server.app.initialConfig as { http2?: boolean }).http2 === true).toBe(expected);
      await built.server.close();
    }
  });
});
