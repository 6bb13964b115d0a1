/**
 * Token refresh against a real `bayou start --jwt-secret` process (clock tolerance 0, so
 * a session ends when its token does) and a real token issuer: an HTTP endpoint signing
 * HS256 tokens that live 2 s. Over each transport a client keeps its session (same
 * clientId, one handshake) and receives a numbered stream, in order and complete, across
 * several expiries, the server counting the refreshes it accepted. The controls: a fixed
 * token is cut at its expiry; and when the issuer fails at refresh time, the server ends
 * the session at expiry with handshake advice and the client handshakes again with the
 * next token the issuer gives.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  BayouClient,
  type BayouClientOptions,
  type FetchFunction,
  longPolling,
  type Message,
  streaming,
  type TransportFactory,
  websocket,
} from '../src/index.js';
import { waitFor } from './helpers.js';

const SECRET = 'token-refresh-test-secret-0123456789abcdef';
const API_KEY = 'token-refresh-test-api-key';
const LIFETIME_S = 2;
const bin = fileURLToPath(new URL('../node_modules/@bayou/server/bin/bayou.js', import.meta.url));

/** The issuer: `GET /token` signs a token for `alice` living LIFETIME_S; it can be made to fail. */
const issuer = { issued: 0, failing: false, server: null as http.Server | null, url: '' };

function sign(payload: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

let child: ChildProcess | null = null;
let endpoint = '';
let base = '';

beforeAll(async () => {
  issuer.server = http.createServer((_req, res) => {
    if (issuer.failing) {
      res.writeHead(503).end();
      return;
    }
    issuer.issued++;
    const now = Math.floor(Date.now() / 1000);
    res.end(sign({ sub: 'alice', iat: now, exp: now + LIFETIME_S }));
  });
  await new Promise<void>((r) => issuer.server?.listen(0, '127.0.0.1', r));
  issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}/token`;

  const dir = mkdtempSync(join(tmpdir(), 'bayou-token-'));
  writeFileSync(join(dir, 'bayou.json'), JSON.stringify({ tokens: { clockTolerance: 0 } }));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BAYOU_') && k !== 'PORT') env[k] = v;
  const args = ['start', '--config', join(dir, 'bayou.json'), '--jwt-secret', SECRET, '--api-key', API_KEY];
  child = spawn('node', [bin, ...args, '--host', '127.0.0.1', '--port', '0', '--log-level', 'warn'], { env });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  await waitFor(() => /listening on (http:\/\/[^ ]+)/.test(out), 20_000, `bayou to listen: ${out}`);
  base = (/listening on (http:\/\/[^ ]+)/.exec(out) as RegExpExecArray)[1] as string;
  endpoint = `${base}/bayeux`;
}, 30_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await new Promise((r) => issuer.server?.close(r));
});

/** `fetch` with the cookie jar a browser has: long-polls carry the server's browser cookie. */
function browserFetch(): FetchFunction {
  let cookie: string | null = null;
  return (async (url: string, init: RequestInit) => {
    const headers = { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) };
    const r = await fetch(url, { ...init, headers });
    const set = r.headers.get('set-cookie');
    if (set !== null) cookie = set.split(';')[0] as string;
    return r;
  }) as unknown as FetchFunction;
}

const fetchToken = async (): Promise<string> => {
  const r = await fetch(issuer.url);
  if (!r.ok) throw new Error(`issuer answered ${r.status}`);
  return r.text();
};

async function publish(n: number): Promise<void> {
  const r = await fetch(`${base}/api/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ channel: '/ticks', data: { n } }),
  });
  expect(r.status).toBe(200);
}

async function refreshesCounted(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^bayou_token_refreshes_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

interface Watched {
  client: BayouClient;
  handshakes: string[];
  received: number[];
  /** What happened on the wire, in order: `connect <clientId>` sent, `advised handshake <clientId>`. */
  wire: string[];
}

function watched(transport: TransportFactory, token: BayouClientOptions['token']): Watched {
  const client = new BayouClient(endpoint, {
    transports: [transport],
    WebSocket: WebSocket as never,
    fetch: browserFetch(),
    token,
    tokenRefreshMargin: 1000,
    minReconnectDelay: 50,
    maxReconnectDelay: 200,
  });
  const w: Watched = { client, handshakes: [], received: [], wire: [] };
  client.use({
    incoming(m: Message) {
      if (m.channel === '/meta/handshake' && m.successful === true) w.handshakes.push(String(m.clientId));
      if (m.channel === '/meta/connect' && m.advice?.reconnect === 'handshake')
        w.wire.push(`${m.successful === true ? 'advised' : 'refused'} handshake ${m.clientId}`);
      return m;
    },
    outgoing(m: Message) {
      if (m.channel === '/meta/connect') w.wire.push(`connect ${m.clientId}`);
      return m;
    },
  });
  return w;
}

describe.each([
  ['websocket', websocket],
  ['streaming', streaming],
  ['long-polling', longPolling],
] as const)('token refresh on /meta/connect over %s', (name, transport) => {
  it('keeps one session and the whole stream across several 2 s token expiries', async () => {
    const w = watched(transport, fetchToken);
    const sub = w.client.subscribe('/ticks', (m) => w.received.push((m.data as { n: number }).n));
    await w.client.connect();
    await sub.ready;
    const firstId = w.client.clientId;
    const refreshesBefore = await refreshesCounted();
    const issuedBefore = issuer.issued;
    // 7 s of a tick every 100 ms: three and a half token lifetimes.
    const until = Date.now() + 7_000;
    let n = 0;
    while (Date.now() < until) {
      await publish(n++);
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(() => w.received.length >= n, 5_000, 'the last ticks');
    expect(w.received).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(w.client.clientId).toBe(firstId);
    expect(w.handshakes).toEqual([firstId]);
    expect(w.client.state).toBe('connected');
    // A refresh about every second: the server took at least one per lifetime.
    expect(issuer.issued - issuedBefore).toBeGreaterThanOrEqual(4);
    expect((await refreshesCounted()) - refreshesBefore).toBeGreaterThanOrEqual(4);
    await w.client.disconnect();
  }, 30_000);

  it('a fixed token is cut at its expiry (the control)', async () => {
    const w = watched(transport, await fetchToken());
    const errors: unknown[] = [];
    w.client.on('error', (e) => errors.push(e));
    await w.client.connect();
    // The session ends at expiry; the handshake again with the same, expired token is denied.
    await waitFor(() => w.client.state === 'disconnected', 10_000, 'the session to end');
    expect(w.handshakes).toHaveLength(1);
  }, 20_000);

  it('handshakes again with a new token when the refresh failed and the server ended the session', async () => {
    const w = watched(transport, fetchToken);
    const sub = w.client.subscribe('/ticks', (m) => w.received.push((m.data as { n: number }).n));
    await w.client.connect();
    await sub.ready;
    const firstId = w.client.clientId;
    issuer.failing = true;
    try {
      // The refresh fails; at expiry the server answers the held connect with handshake advice.
      await waitFor(() => w.client.clientId !== firstId, 8_000, 'the session to end');
    } finally {
      issuer.failing = false;
    }
    await waitFor(() => w.handshakes.length >= 2 && w.client.state === 'connected', 8_000, 'a new session');
    // The server's advice was followed at once: no connect of the ended session after it.
    // A stream is ended with its session, without a last frame: the client learns of the
    // end from the next stream's refusal (402, handshake advice).
    const advised =
      name === 'streaming'
        ? w.wire.findIndex((e) => e.startsWith('refused handshake')) // a 402 names no clientId
        : w.wire.indexOf(`advised handshake ${firstId}`);
    expect(advised).toBeGreaterThanOrEqual(0);
    expect(w.wire.slice(advised + 1)).not.toContain(`connect ${firstId}`);
    await sub.ready;
    await publish(-1);
    await waitFor(() => w.received.includes(-1), 5_000, 'a tick on the new session');
    await w.client.disconnect();
  }, 30_000);
});
