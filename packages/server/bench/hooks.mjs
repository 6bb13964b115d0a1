#!/usr/bin/env node
// @ts-check
// Backend hooks benchmark (run by `pnpm bench`): what webhooks cost and carry.
//
//   node bench/hooks.mjs [--events 20000] [--subscribes 2000] [--rounds 2] [--quick]
//
// 1. Webhook delivery: one server POSTs `--events` events to a local receiver (node:http,
//    same process), for batchSize 1, 10 and 100 side by side: events/s delivered and POSTs.
//    Events are emitted on `app.bayou` as the kernel would ('channel:occupied').
// 2. Channel occupancy on Redis: one node on a private redis-server, one WebSocket client
//    subscribing to `--subscribes` fresh channels one after the other (each its first
//    subscriber: one OCCUPY script more with webhooks on), then unsubscribing them (one
//    VACATE more); mean round trip per subscribe and per unsubscribe, webhooks off and on,
//    interleaved `--rounds` times. Needs redis-server (REDIS_SERVER_PATH or PATH), else skipped.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer as createHttp } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { createServer } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string' },
    subscribes: { type: 'string' },
    rounds: { type: 'string' },
    quick: { type: 'boolean' },
  },
});
const quick = values.quick === true;
const EVENTS = Number(values.events ?? (quick ? 3000 : 20000));
const CHANNELS = Number(values.subscribes ?? (quick ? 300 : 2000));
const ROUNDS = Number(values.rounds ?? (quick ? 1 : 2));

/** @typedef {{ channel?: string, id?: string, clientId?: string, successful?: boolean, error?: string }} Reply */

/** A receiver counting events; resolves `until(n)` once n arrived. */
async function receiver() {
  let events = 0;
  let posts = 0;
  /** @type {{ n: number, resolve: () => void } | null} */
  let waiter = null;
  const server = createHttp((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      posts++;
      events += JSON.parse(Buffer.concat(chunks).toString()).events.length;
      res.writeHead(204).end();
      if (waiter && events >= waiter.n) waiter.resolve();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    stats: () => ({ events, posts }),
    /** @param {number} n */
    until: (n) =>
      events >= n
        ? Promise.resolve()
        : new Promise((/** @type {(value?: undefined) => void} */ resolve) => (waiter = { n, resolve })),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** @param {number} batchSize */
async function delivery(batchSize) {
  const hooks = await receiver();
  const server = await createServer({
    host: '127.0.0.1',
    port: 0,
    webhooks: { url: hooks.url, secret: 'bench-secret', batchSize, batchWindow: 5, maxQueued: EVENTS },
  });
  await server.listen();
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) server.bayou.emit('channel:occupied', `/bench/${i}`);
  await hooks.until(EVENTS);
  const ms = performance.now() - t0;
  const { posts } = hooks.stats();
  await server.close();
  await hooks.close();
  return { batchSize, ms, perSecond: (EVENTS / ms) * 1000, posts };
}

function redisServerPath() {
  if (process.env.REDIS_SERVER_PATH && existsSync(process.env.REDIS_SERVER_PATH))
    return process.env.REDIS_SERVER_PATH;
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  return null;
}

/** @param {string} path */
async function startRedis(path) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(
    path,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('Ready to accept connections')) resolve(undefined);
    });
    child.once('exit', () => reject(new Error(`redis-server exited: ${out.slice(-300)}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/**
 * A raw Bayeux WebSocket client: one request at a time, resolved by its reply.
 * @param {string} url
 */
async function wsClient(url) {
  const ws = new WebSocket(url.replace(/^http/, 'ws'));
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  /** @type {Map<string, (reply: Reply) => void>} */
  const pending = new Map();
  let id = 0;
  ws.on('message', (data) => {
    for (const m of JSON.parse(data.toString())) pending.get(m.id)?.(m);
  });
  /**
   * @param {Record<string, unknown>} m
   * @returns {Promise<Reply>}
   */
  const request = (m) =>
    new Promise((resolve) => {
      const key = String(++id);
      pending.set(key, resolve);
      ws.send(JSON.stringify([{ ...m, id: key }]));
    });
  const hs = await request({
    channel: '/meta/handshake',
    version: '1.0',
    supportedConnectionTypes: ['websocket'],
  });
  const clientId = hs.clientId;
  ws.send(JSON.stringify([{ channel: '/meta/connect', clientId, connectionType: 'websocket', id: 'c' }]));
  return {
    /** @param {string} s */
    subscribe: (s) => request({ channel: '/meta/subscribe', clientId, subscription: s }),
    /** @param {string} s */
    unsubscribe: (s) => request({ channel: '/meta/unsubscribe', clientId, subscription: s }),
    close: () => ws.terminate(),
  };
}

/**
 * @param {string} redisUrl
 * @param {boolean} webhooksOn
 * @param {number} round
 */
async function occupancy(redisUrl, webhooksOn, round) {
  const hooks = await receiver();
  const server = await createServer({
    host: '127.0.0.1',
    port: 0,
    redis: redisUrl,
    redisEngine: { keyPrefix: `bench${round}${webhooksOn ? 'on' : 'off'}:` },
    maxSubscriptionsPerSession: CHANNELS + 1,
    ...(webhooksOn ? { webhooks: { url: hooks.url } } : {}),
  });
  const base = await server.listen();
  const client = await wsClient(`${base}/bayeux`);
  const names = Array.from({ length: CHANNELS }, (_, i) => `/bench/r${round}/${i}`);
  let t0 = performance.now();
  for (const n of names) {
    const reply = await client.subscribe(n);
    if (!reply.successful) throw new Error(`subscribe ${n} refused: ${reply.error}`);
  }
  const sub = (performance.now() - t0) / CHANNELS;
  t0 = performance.now();
  for (const n of names) await client.unsubscribe(n);
  const unsub = (performance.now() - t0) / CHANNELS;
  if (webhooksOn) {
    const all = hooks.until(2 * CHANNELS + 1);
    const late = new Promise((_, reject) =>
      setTimeout(
        () => reject(new Error(`events: ${hooks.stats().events} of ${2 * CHANNELS + 1}`)),
        30_000,
      ).unref(),
    );
    await Promise.race([all, late]);
  }
  const delivered = hooks.stats().events;
  client.close();
  await server.close();
  await hooks.close();
  return { webhooksOn, sub, unsub, delivered };
}

/**
 * @param {number} n
 * @param {number} [d]
 */
const fmt = (n, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

console.log(
  `\n## Webhook delivery: ${EVENTS.toLocaleString('en-US')} events to a local receiver (signed, one POST in flight)\n`,
);
console.log('| batchSize | events/s | POSTs | time |');
console.log('|---|---|---|---|');
for (const size of [1, 10, 100]) {
  const r = await delivery(size);
  console.log(
    `| ${size} | ${fmt(r.perSecond, 0)} | ${r.posts.toLocaleString('en-US')} | ${fmt(r.ms / 1000, 2)} s |`,
  );
}

const redisPath = redisServerPath();
if (redisPath === null) {
  console.log('\n(channel occupancy on Redis skipped: no redis-server; set REDIS_SERVER_PATH)');
} else {
  const redis = await startRedis(redisPath);
  try {
    console.log(
      `\n## Channel occupancy on Redis: ${CHANNELS.toLocaleString('en-US')} first subscribes then last unsubscribes, one client, one at a time\n`,
    );
    console.log('| round | webhooks | ms per subscribe | ms per unsubscribe | events delivered |');
    console.log('|---|---|---|---|---|');
    for (let round = 1; round <= ROUNDS; round++) {
      for (const on of [false, true]) {
        const r = await occupancy(redis.url, on, round);
        console.log(
          `| ${round} | ${on ? 'on' : 'off'} | ${fmt(r.sub, 3)} | ${fmt(r.unsub, 3)} | ${on ? r.delivered.toLocaleString('en-US') : '—'} |`,
        );
      }
    }
  } finally {
    redis.stop();
  }
}
