/**
 * Servers for the integration and browser tests: a Faye server, the real Bayou server,
 * and a small HTTP proxy that can refuse WebSocket upgrades or black-hole their frames, hold
 * HTTP responses until they end (a buffering proxy) and cut open streams, and that also serves the test page and the IIFE bundle (so page and endpoint share an
 * origin, as in a real deployment behind a proxy).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { type BayouServer, type CreateServerOptions, createServer } from '@bayou/server';
import faye from 'faye';
import WebSocket from 'ws';
import type { WebSocketConstructor } from '../src/index.js';

export const dist = (file: string): string => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

// The repository's one polling wait, under the name these tests use: (check, timeout, what).
export { eventually as waitFor } from '../../../scripts/eventually.mjs';

export interface FayeServer {
  url: string;
  publish(channel: string, data: unknown): Promise<void>;
  close(): Promise<void>;
}

export async function startFaye(): Promise<FayeServer> {
  const server = http.createServer();
  const adapter = new faye.NodeAdapter({ mount: '/bayeux', timeout: 10 });
  adapter.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return {
    url: `http://127.0.0.1:${port}/bayeux`,
    publish: (channel, data) => adapter.getClient().publish(channel, data) as Promise<void>,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export async function startBayou(options: CreateServerOptions = {}): Promise<BayouServer & { url: string }> {
  const server = await createServer({ host: '127.0.0.1', port: 0, ...options });
  const base = await server.listen();
  return Object.assign(server, { url: `${base}/bayeux` });
}

/**
 * What the proxy does with WebSocket traffic. A change applies at once to every open
 * WebSocket too (so a session can be cut mid-way), except `refuse-upgrade`, which only
 * refuses new ones:
 * - `pass`: both ways;
 * - `refuse-upgrade`: new upgrades get 403;
 * - `blackhole`: upgrades succeed, then every frame is dropped both ways;
 * - `one-frame`: the first server frame of each WebSocket passes, then nothing either way
 *   (a link that answers one probe and goes silent);
 * - `client-to-server`: only what the client sends gets through (a one-way black hole).
 */
export type ProxyMode = 'pass' | 'refuse-upgrade' | 'blackhole' | 'one-frame' | 'client-to-server';

/** The test page, with the main bundle or (`/test/shared`) the shared-connection one. */
export const testPage = (
  bundle: string,
): string => `<!doctype html><meta charset="utf-8"><title>bayou test</title>
<script src="/test/${bundle}"></script>
<script>
  window.log = { received: [], transports: [], reasons: [], states: [], errors: [], multipleClients: false };
  window.startClient = function (options) {
    var client = new Bayou.BayouClient('/bayeux', options);
    client.on('transport', function (t, previous, reason) { log.transports.push(t); log.reasons.push(reason); });
    client.on('state', function (s) { log.states.push(s); });
    client.on('error', function (e) { log.errors.push(e.code); });
    client.use({ incoming: function (m) {
      if (m.advice && m.advice['multiple-clients']) log.multipleClients = true;
      return m;
    } });
    window.client = client;
    return client.connect();
  };
  window.subscribe = function (channel) {
    return client.subscribe(channel, function (m) { log.received.push(m.data); }).ready;
  };
</script>`;

/**
 * An HTTP reverse proxy in front of `target` (host:port), switchable at run time. It
 * serves `/test/` itself: the page and the bundle.
 */
export class TestProxy {
  mode: ProxyMode;
  target: string;
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  upgrades = 0;
  /** Hold every HTTP response (headers and body) until its body ends: a buffering proxy. */
  bufferBodies = false;
  /** Streams opened through the proxy (`POST …/stream`), and the ones still open. */
  streams = 0;
  private readonly openStreams = new Set<{ client: Socket; upstream: http.ClientRequest }>();
  /** While true, every connection is cut and new ones are dropped (a network outage). */
  private down = false;

  constructor(target: string, mode: ProxyMode = 'pass') {
    this.target = target;
    this.mode = mode;
    this.server = http.createServer((req, res) => this.request(req, res));
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket as Socket, head));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Starts (`true`) or ends an outage: going down drops every open connection. */
  setDown(down: boolean): void {
    this.down = down;
    if (down) for (const s of this.sockets) s.destroy();
  }

  /** Drops the connections of every open stream, both sides, mid-flight; returns how many. */
  cutStreams(): number {
    const open = [...this.openStreams];
    this.openStreams.clear();
    for (const { client, upstream } of open) {
      client.destroy();
      upstream.destroy();
    }
    return open.length;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }

  private request(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    if (req.url === '/test/' || req.url === '/test/index.html' || req.url === '/test/shared') {
      const bundle = req.url === '/test/shared' ? 'bayou-shared.min.js' : 'bayou.min.js';
      res.writeHead(200, { 'content-type': 'text/html' }).end(testPage(bundle));
      return;
    }
    // The shared page in a sandbox without allow-same-origin: an opaque origin ('null'),
    // where Chromium refuses Web Locks and SharedWorkers.
    if (req.url === '/test/sandboxed') {
      const headers = { 'content-type': 'text/html', 'content-security-policy': 'sandbox allow-scripts' };
      res.writeHead(200, headers).end(testPage('bayou-shared.min.js'));
      return;
    }
    if (
      req.url === '/test/bayou.min.js' ||
      req.url === '/test/bayou-shared.min.js' ||
      req.url === '/test/bayou-shared-worker.js'
    ) {
      const file = req.url.slice('/test/'.length);
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(dist(file)));
      return;
    }
    const [host, port] = this.target.split(':');
    const upstream = http.request(
      { host, port: Number(port), method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.on('close', () => up.destroy());
        if (this.bufferBodies) return holdUntilEnd(up, res);
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    if (req.url?.split('?')[0]?.endsWith('/stream')) {
      this.streams++;
      const open = { client: req.socket, upstream };
      this.openStreams.add(open);
      res.on('close', () => this.openStreams.delete(open));
    }
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  }

  private upgrade(req: http.IncomingMessage, client: Socket, head: Buffer): void {
    this.upgrades++;
    if (this.down) {
      client.destroy();
      return;
    }
    if (this.mode === 'refuse-upgrade') {
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [host, port] = this.target.split(':');
    const upstream = net.connect(Number(port), host as string);
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) upstream.write(head);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    // Forward the 101 response, then each chunk as the mode at that moment says.
    let response: Buffer | null = Buffer.alloc(0);
    let serverChunks = 0;
    upstream.on('data', (chunk: Buffer) => {
      if (response !== null) {
        response = Buffer.concat([response, chunk]);
        const end = response.indexOf('\r\n\r\n');
        if (end < 0) return;
        client.write(response.subarray(0, end + 4));
        chunk = response.subarray(end + 4);
        response = null;
        if (chunk.length === 0) return;
      }
      const mode = this.mode;
      const first = serverChunks++ === 0;
      if (mode === 'pass' || mode === 'refuse-upgrade' || (mode === 'one-frame' && first))
        client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => {
      const mode = this.mode;
      const up =
        mode === 'pass' ||
        mode === 'refuse-upgrade' ||
        mode === 'client-to-server' ||
        (mode === 'one-frame' && serverChunks === 0);
      if (up) upstream.write(chunk);
    });
  }
}

/** Sends `up` on `res` once it has ended, whole, with a `Content-Length`. */
function holdUntilEnd(up: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  up.on('data', (c: Buffer) => chunks.push(c));
  up.on('end', () => {
    const body = Buffer.concat(chunks);
    const headers = { ...up.headers, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    res.writeHead(up.statusCode ?? 502, headers).end(body);
  });
}

/**
 * A `ws` WebSocket the test controls: `down` makes new sockets fail to open, `kill()`
 * drops every open one abruptly, and `swallow` can lose an incoming frame (the frame is
 * not delivered and its socket is dropped, as when a connection dies mid-frame).
 */
export interface SocketControl {
  readonly WebSocket: WebSocketConstructor;
  readonly sockets: Set<WebSocket>;
  down: boolean;
  swallow: ((frame: string) => boolean) | null;
  kill(): void;
}

export function socketControl(): SocketControl {
  const ctl: SocketControl = {
    WebSocket: undefined as unknown as WebSocketConstructor,
    sockets: new Set(),
    down: false,
    swallow: null,
    kill() {
      for (const s of ctl.sockets) s.terminate();
    },
  };
  class Controlled extends WebSocket {
    constructor(url: string) {
      // Port 1 on loopback refuses the connection: the socket fails to open.
      super(ctl.down ? 'ws://127.0.0.1:1/' : url);
      ctl.sockets.add(this);
      this.on('close', () => ctl.sockets.delete(this));
      // `ws` defines `onmessage` as an accessor on its prototype: wrap it for this socket.
      const own = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage') as PropertyDescriptor;
      Object.defineProperty(this, 'onmessage', {
        configurable: true,
        get: () => own.get?.call(this),
        set: (fn: ((event: WebSocket.MessageEvent) => void) | null) => {
          own.set?.call(
            this,
            fn &&
              ((event: WebSocket.MessageEvent) => {
                if (ctl.swallow?.(String(event.data))) {
                  ctl.swallow = null;
                  this.terminate();
                  return;
                }
                fn(event);
              }),
          );
        },
      });
    }
  }
  (ctl as { WebSocket: WebSocketConstructor }).WebSocket = Controlled as unknown as WebSocketConstructor;
  return ctl;
}
