#!/usr/bin/env node
import { readFileSync } from 'node:fs';
// @ts-check
// gzip on the HTTP transports: the bandwidth bench's feeds (feeds.mjs) delivered to HTTP
// clients over `long-polling` or `streaming`, with compression off (no `Accept-Encoding`) and
// on (`--compression`, `Accept-Encoding: gzip`, as browsers send), at a fixed 20,000
// deliveries/s. Reports the bytes on the clients' sockets (both directions, HTTP headers
// included) and the server's CPU per delivered message; a fresh `bayou start` per row, the
// publisher on a WebSocket. Each client is a `node:http` keep-alive agent that keeps the
// `BAYEUX_BROWSER` cookie, as a browser does.
//
//   node packages/server/bench/http-bandwidth.mjs [--quick] [--clients 100] [--seconds 5] [--rounds 1]
//     [--feeds price,chat] [--transports long-polling,streaming] [--modes plain,gzip,gzip@256]
import http from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import WebSocket from 'ws';
import { cpuSeconds, startServer } from './bench-server.mjs';
import { FEED_MAKERS, priceFeed, random, reseed } from './feeds.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    clients: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    feeds: { type: 'string' },
    transports: { type: 'string' },
    modes: { type: 'string' },
  },
});
const quick = values.quick === true;
const CLIENTS = Number(values.clients ?? (quick ? 20 : 100));
const SECONDS = Number(values.seconds ?? (quick ? 2 : 5));
const ROUNDS = Number(values.rounds ?? 1);
const FEEDS = (values.feeds ?? 'price,chat').split(',');
const TRANSPORTS = (values.transports ?? 'long-polling,streaming').split(',');
const MODES = (values.modes ?? 'plain,gzip').split(',');
const FIXED_RATE = 20_000;
const TICK = 10;
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const uptime = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * An HTTP Bayeux client on one keep-alive agent: `long-polling` (a held connect at a time)
 * or `streaming` (one held stream, long-polling POSTs for the rest).
 */
class HttpClient {
  /** @type {Set<import('node:net').Socket>} */
  sockets = new Set();
  agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  cookie = '';
  clientId = '';
  running = true;

  /**
   * @param {string} base
   * @param {{ gzip: boolean, transport: string, onMessage: () => void }} o
   */
  constructor(base, o) {
    this.base = base;
    this.o = o;
  }

  /** @param {http.IncomingMessage} res */
  keepCookie(res) {
    const set = res.headers['set-cookie'];
    if (set?.[0]) this.cookie = set[0].split(';')[0] ?? '';
  }

  /**
   * @param {string} path
   * @param {unknown[]} body
   * @returns {Promise<http.IncomingMessage>}
   */
  request(path, body) {
    const text = JSON.stringify(body);
    return new Promise((resolveResponse, reject) => {
      const req = http.request(
        `${this.base}/bayeux${path}`,
        {
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            ...(this.cookie ? { cookie: this.cookie } : {}),
            ...(this.o.gzip ? { 'accept-encoding': 'gzip' } : {}),
          },
        },
        (res) => {
          this.keepCookie(res);
          resolveResponse(res);
        },
      );
      req.on('socket', (s) => this.sockets.add(s));
      req.on('error', reject);
      req.end(text);
    });
  }

  /** @param {unknown[]} body @returns {Promise<any[]>} */
  async post(body) {
    const res = await this.request('', body);
    /** @type {Buffer[]} */
    const chunks = [];
    for await (const c of res) chunks.push(c);
    let data = Buffer.concat(chunks);
    if (res.headers['content-encoding'] === 'gzip') data = zlib.gunzipSync(data);
    const messages = JSON.parse(data.toString());
    for (const m of messages) if (!m.channel.startsWith('/meta/')) this.o.onMessage();
    return messages;
  }

  /** @param {string[]} channels */
  async open(channels) {
    const types = this.o.transport === 'streaming' ? ['streaming', 'long-polling'] : ['long-polling'];
    const [hs] = await this.post([
      { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: types },
    ]);
    this.clientId = hs.clientId;
    const connect = { channel: '/meta/connect', clientId: this.clientId, connectionType: 'long-polling' };
    await this.post([
      { ...connect, advice: { timeout: 0 } },
      { channel: '/meta/subscribe', clientId: this.clientId, subscription: channels },
    ]);
    if (this.o.transport === 'streaming') void this.stream();
    else void this.poll(connect);
  }

  /** @param {Record<string, unknown>} connect */
  async poll(connect) {
    while (this.running) {
      try {
        await this.post([connect]);
      } catch {
        return;
      }
    }
  }

  async stream() {
    while (this.running) {
      try {
        const res = await this.request('/stream', [
          { channel: '/meta/connect', clientId: this.clientId, connectionType: 'streaming' },
        ]);
        /** @type {NodeJS.ReadableStream} */
        const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(zlib.createGunzip()) : res;
        let rest = '';
        for await (const chunk of body) {
          const lines = (rest + chunk.toString()).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) {
            if (line.trim() === '') continue;
            for (const m of JSON.parse(line)) if (!m.channel.startsWith('/meta/')) this.o.onMessage();
          }
        }
      } catch {
        return;
      }
    }
  }

  bytes() {
    let sum = 0;
    for (const s of this.sockets) sum += s.bytesRead + s.bytesWritten;
    return sum;
  }

  stop() {
    this.running = false;
    this.agent.destroy();
  }
}

/** A WebSocket publisher: handshake, then `publish(batch)`. @param {string} url */
async function openPublisher(url) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((r) => ws.once('open', r));
  ws.send(
    JSON.stringify([{ channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'] }]),
  );
  const clientId = await new Promise((r) =>
    ws.on('message', (raw) => {
      for (const m of JSON.parse(raw.toString())) if (m.channel === '/meta/handshake') r(m.clientId);
    }),
  );
  ws.send(
    JSON.stringify([
      { channel: '/meta/connect', clientId, connectionType: 'websocket', advice: { timeout: 0 } },
    ]),
  );
  return { ws, clientId };
}

/**
 * @param {import('./feeds.mjs').Feed} feed
 * @param {string} transport
 * @param {string} mode
 */
async function runRow(feed, transport, mode) {
  const gzip = mode.startsWith('gzip');
  const threshold = mode.split('@')[1];
  const flags = gzip ? ['--compression', ...(threshold ? ['--compression-threshold', threshold] : [])] : [];
  const server = await startServer(resolve(here, '..'), flags);
  /** @type {HttpClient[]} */
  const clients = [];
  try {
    let delivered = 0;
    const onMessage = () => {
      delivered++;
    };
    const fanout = new Map(feed.channels.map((c) => [c, 0]));
    for (let i = 0; i < CLIENTS; i += 20) {
      const wave = [];
      for (let j = i; j < Math.min(CLIENTS, i + 20); j++) {
        const picked = new Set();
        while (picked.size < feed.perClient)
          picked.add(feed.channels[Math.floor(random() * feed.channels.length)]);
        for (const c of picked) fanout.set(c, (fanout.get(c) ?? 0) + 1);
        const client = new HttpClient(server.http, { gzip, transport, onMessage });
        clients.push(client);
        wave.push(client.open([...picked]));
      }
      await Promise.all(wave);
    }
    const publisher = await openPublisher(server.url);
    const watched = feed.channels.filter((c) => (fanout.get(c) ?? 0) > 0);
    const fanoutMean = [...fanout.values()].reduce((a, b) => a + b, 0) / feed.channels.length;
    let n = 0;
    const publish = (/** @type {number} */ count) => {
      const batch = [];
      for (let i = 0; i < count; i++) {
        const channel = /** @type {string} */ (watched[n++ % watched.length]);
        batch.push({
          channel,
          clientId: publisher.clientId,
          data: feed.next(Number(channel.slice(channel.lastIndexOf('/') + 1))),
        });
      }
      publisher.ws.send(JSON.stringify(batch));
    };
    const fixed = async (/** @type {number} */ seconds) => {
      const perTick = Math.max(1, Math.round((FIXED_RATE / fanoutMean) * (TICK / 1000)));
      const start = performance.now();
      let ticks = 0;
      while (performance.now() - start < seconds * 1000) {
        publish(perTick);
        ticks++;
        const wait = start + ticks * TICK - performance.now();
        if (wait > 0) await sleep(wait);
      }
    };
    const wire = () => clients.reduce((s, c) => s + c.bytes(), 0);
    // Warm-up: every watched channel once, then a second at the fixed rate.
    for (let i = 0; i < watched.length; i += 50) {
      publish(Math.min(50, watched.length - i));
      await sleep(5);
    }
    await fixed(2);
    const [d0, c0, b0, t0] = [delivered, cpuSeconds(server.pid), wire(), performance.now()];
    await fixed(SECONDS);
    const [d1, c1, b1, t1] = [delivered, cpuSeconds(server.pid), wire(), performance.now()];
    publisher.ws.terminate();
    const count = d1 - d0;
    return {
      rate: Math.round(count / ((t1 - t0) / 1000)),
      cpuUs: ((c1 - c0) * 1e6) / count,
      bytes: (b1 - b0) / count,
      fanout: fanoutMean,
    };
  } finally {
    for (const c of clients) c.stop();
    server.stop();
  }
}

console.log(
  `HTTP bandwidth bench: ${CLIENTS} clients, ${SECONDS} s at ${FIXED_RATE} deliveries/s, load average ${uptime()}`,
);
/** @type {{ key: string, r: Awaited<ReturnType<typeof runRow>> }[]} */
const rows = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const name of FEEDS) {
    const feed = (FEED_MAKERS[name] ?? priceFeed)();
    for (const transport of TRANSPORTS) {
      for (const mode of MODES) {
        reseed();
        const r = await runRow(feed, transport, mode);
        const key = `${name} ${transport} ${mode}`;
        rows.push({ key, r });
        console.log(
          `r${round} ${key.padEnd(30)} fan-out ${r.fanout.toFixed(1)}  ${r.rate} msg/s ${r.bytes.toFixed(1)} B/msg ${r.cpuUs.toFixed(2)} µs/msg  load ${uptime()}`,
        );
      }
    }
  }
}
const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
console.log(`\nmedians of ${ROUNDS} round(s), ratios against ${MODES[0]} (same feed and transport):`);
for (const name of FEEDS)
  for (const transport of TRANSPORTS) {
    const of = (/** @type {string} */ mode) =>
      rows.filter((x) => x.key === `${name} ${transport} ${mode}`).map((x) => x.r);
    const base = of(MODES[0] ?? 'plain');
    const [b0, c0] = [median(base.map((r) => r.bytes)), median(base.map((r) => r.cpuUs))];
    for (const mode of MODES) {
      const [b, c] = [median(of(mode).map((r) => r.bytes)), median(of(mode).map((r) => r.cpuUs))];
      console.log(
        `${name.padEnd(6)} ${transport.padEnd(13)} ${mode.padEnd(9)} ${b.toFixed(1)} B/msg (${(b / b0).toFixed(3)}x)  ${c.toFixed(2)} µs/msg (${(c / c0).toFixed(2)}x)`,
      );
    }
  }
console.log(`load average at the end ${uptime()}`);
