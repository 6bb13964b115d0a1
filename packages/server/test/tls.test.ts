/**
 * https and wss end to end, with a certificate made for the test by `openssl` (required:
 * the test fails, never skips, without it), through `createServer({ https })` and through
 * `bayou start --tls-key --tls-cert`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BayouServer, createServer } from '../src/index.js';

type Msg = Record<string, unknown>;
const dir = mkdtempSync(join(tmpdir(), 'bayou-tls-'));
const keyFile = join(dir, 'key.pem');
const certFile = join(dir, 'cert.pem');
let key: Buffer;
let cert: Buffer;

beforeAll(() => {
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
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'pipe' },
  );
  key = readFileSync(keyFile);
  cert = readFileSync(certFile);
});

/** POSTs a Bayeux batch over https, trusting only the test certificate. */
function post(base: string, messages: Msg[]): Promise<Msg[]> {
  return new Promise((resolvePost, reject) => {
    const req = request(
      `${base}/bayeux`,
      { method: 'POST', ca: cert, headers: { 'content-type': 'application/json' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
        });
        res.on('end', () => resolvePost(JSON.parse(body) as Msg[]));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(messages));
  });
}

const handshake = (type: string): Msg => ({
  channel: '/meta/handshake',
  version: '1.0',
  supportedConnectionTypes: [type],
});

describe('TLS', () => {
  let server: BayouServer;
  let base: string;
  beforeAll(async () => {
    server = await createServer({ host: '127.0.0.1', port: 0, https: { key, cert }, timeout: 5000 });
    base = await server.listen();
  });
  afterAll(() => server.close());

  it('serves long-polling over https', async () => {
    expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const [hs] = await post(base, [handshake('long-polling')]);
    expect(hs).toMatchObject({ successful: true });
    const clientId = hs?.clientId;
    await post(base, [{ channel: '/meta/connect', clientId, connectionType: 'long-polling' }]);
    expect(
      (await post(base, [{ channel: '/meta/subscribe', clientId, subscription: '/tls' }]))[0],
    ).toMatchObject({
      successful: true,
    });
    const held = post(base, [{ channel: '/meta/connect', clientId, connectionType: 'long-polling' }]);
    server.bayou.publish('/tls', 'over https');
    expect(await held).toContainEqual({ channel: '/tls', data: 'over https' });
  });

  it('serves WebSocket over wss, and refuses a client that does not trust the certificate', async () => {
    const ws = new WebSocket(`${base.replace('https', 'wss')}/bayeux`, { ca: cert });
    const inbox: Msg[] = [];
    const next = (pred: (m: Msg) => boolean) =>
      new Promise<Msg>((r) => {
        const seen = inbox.find(pred);
        if (seen) return r(seen);
        ws.on('message', function on() {
          const m = inbox.find(pred);
          if (m) {
            ws.off('message', on);
            r(m);
          }
        });
      });
    ws.on('message', (d) => inbox.push(...(JSON.parse(d.toString()) as Msg[])));
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    ws.send(JSON.stringify([handshake('websocket')]));
    const hs = await next((m) => m.channel === '/meta/handshake');
    const clientId = hs.clientId;
    ws.send(
      JSON.stringify([
        { channel: '/meta/connect', clientId, connectionType: 'websocket' },
        { channel: '/meta/subscribe', clientId, subscription: '/tls/ws' },
      ]),
    );
    await next((m) => m.channel === '/meta/subscribe' && m.successful === true);
    server.bayou.publish('/tls/ws', 'over wss');
    expect(await next((m) => m.channel === '/tls/ws')).toEqual({ channel: '/tls/ws', data: 'over wss' });
    ws.close();
    const untrusting = new WebSocket(`${base.replace('https', 'wss')}/bayeux`);
    const err = await new Promise<Error>((r) => untrusting.once('error', r));
    expect(err.message).toMatch(/self[- ]signed|certificate/i);
  });

  it('runs `bayou start --tls-key --tls-cert` on https', async () => {
    const cli = resolve(import.meta.dirname, '../dist/cli.js');
    const child = spawn('node', [cli, 'start', '--port', '0', '--tls-key', keyFile, '--tls-cert', certFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((r, j) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (https:\/\/\S+)/.exec(out);
        if (m) r((m[1] as string).replace('localhost', '127.0.0.1'));
      });
      child.on('exit', () => j(new Error(out)));
    });
    expect((await post(url, [handshake('long-polling')]))[0]).toMatchObject({ successful: true });
    child.kill('SIGTERM');
    expect(await new Promise((r) => child.on('exit', r))).toBe(0);
  });
});

describe('TLS and the connection limits', () => {
  it('closes a connection past maxConnections at once (nothing can be said before TLS), and a silent one after handshakeTimeout', async () => {
    const server = await createServer({
      host: '127.0.0.1',
      port: 0,
      https: { key, cert },
      maxConnections: 1,
      handshakeTimeout: 1000,
      sweepInterval: 20,
    });
    const base = await server.listen();
    const { port } = new URL(base);
    try {
      // The first connection is silent: accepted, then closed by the timeout.
      const silent = connect({ host: '127.0.0.1', port: Number(port) });
      await new Promise((r) => silent.once('connect', r));
      // A second one while the first is open: past the cap, closed before any TLS.
      const refused = await new Promise<string>((r) => {
        const s = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: cert });
        s.once('secureConnect', () => r('secure'));
        s.once('error', (err: NodeJS.ErrnoException) => r(err.code ?? err.message));
      });
      expect(refused).not.toBe('secure');
      await new Promise((r) => (silent.destroyed ? r(null) : silent.once('close', r)));
      // Its slot is free again: a client gets in.
      expect((await post(base, [handshake('long-polling')]))[0]).toMatchObject({ successful: true });
    } finally {
      await server.close();
    }
  });
});
