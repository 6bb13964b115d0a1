#!/usr/bin/env node
// @ts-check
// Presence benchmark (run by `pnpm bench`): N clients (1,000 by default) on one node
// subscribe to one channel, then unsubscribe, twice side by side — once on a plain channel,
// once on a channel with presence (`presence: true`: each subscribe is a join, announced to
// a follower of `/presence<channel>`) — with the memory engine and with Redis. It reports
// how long the joins took (the claim: 1,000 members within 10 s on one node), the server's
// CPU per subscribe / join / leave (process.cpuUsage of the node, its own process), and on
// Redis the commands per event (INFO commandstats, before and after each phase).
//
//   node bench/presence.mjs [--clients 1000] [--engines memory,redis] [--quick]
//
// Clients are raw Bayeux-over-WebSocket sessions in this process (handshaken before the
// measured phases); a phase ends when every subscribe reply arrived and, with presence,
// when the follower saw every join (or leave).
import { fork, spawn } from 'node:child_process';
import { createServer as netServer } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    clients: { type: 'string' },
    engines: { type: 'string' },
    quick: { type: 'boolean' },
    child: { type: 'string' },
  },
});

/** @typedef {{ id?: string, channel: string, successful?: boolean, clientId?: string }} Reply */
/** @typedef {Record<string, number>} CommandCalls */

/**
 * The node under test, in its own process so its CPU is its own.
 * @param {{ redis?: string }} config
 */
async function child({ redis }) {
  const { createServer } = await import('../dist/index.js');
  const server = await createServer({
    host: '127.0.0.1',
    port: 0,
    maxConnections: 0,
    limits: { maxSessionsPerIp: 0, handshakeRate: 0 },
    authenticate: (message) => ({ sub: message.ext?.user }),
    auth: { channels: { rules: [{ pattern: '/room/*', presence: true }] } },
    ...(redis ? { redis, redisEngine: { keyPrefix: 'bench:' } } : {}),
  });
  const base = await server.listen();
  // The benchmark process is gone (killed, crashed): so is this node.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ cpu: (u.user + u.system) / 1000 });
    } else if (m === 'stop') void server.close().then(() => process.exit(0));
  });
  process.send?.({ base });
}

async function freePort() {
  const s = netServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
  await new Promise((r) => s.close(r));
  return port;
}

async function startRedis() {
  const path = process.env.REDIS_SERVER_PATH || 'redis-server';
  const port = await freePort();
  const proc = spawn(
    path,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const { Redis } = await import('ioredis');
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
  for (let i = 0; i < 100; i++) {
    try {
      await client.connect();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    client,
    stop: () => {
      client.disconnect();
      proc.kill('SIGTERM');
    },
  };
}

/**
 * Calls per command since the last reset, from INFO commandstats.
 * @param {import('ioredis').Redis} redis
 * @returns {Promise<CommandCalls>}
 */
async function commandStats(redis) {
  const text = await redis.info('commandstats');
  /** @type {CommandCalls} */
  const out = {};
  for (const m of text.matchAll(/^cmdstat_(\w+(?:\|\w+)?):calls=(\d+)/gm)) out[String(m[1])] = Number(m[2]);
  return out;
}

/**
 * @param {CommandCalls} after
 * @param {CommandCalls} before
 * @returns {CommandCalls}
 */
function diff(after, before) {
  /** @type {CommandCalls} */
  const out = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  delete out.info;
  return out;
}

/** A raw Bayeux session over one WebSocket: handshake, a connect loop, subscribe. */
class Session {
  /**
   * @param {string} base
   * @param {string} user
   */
  constructor(base, user) {
    /** @type {import('ws').WebSocket | null} */
    this.ws = null;
    this.base = base;
    this.user = user;
    this.id = 0;
    /** @type {string | undefined} */
    this.clientId = undefined;
    /** @type {Map<string, (reply: Reply) => void>} */
    this.waiting = new Map();
    /** @type {((message: Reply) => void) | null} */
    this.onMessage = null;
  }

  /** @param {typeof import('ws').WebSocket} WebSocket */
  async open(WebSocket) {
    const ws = new WebSocket(`${this.base.replace(/^http/, 'ws')}/bayeux`);
    this.ws = ws;
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('message', (raw) => {
      for (const m of JSON.parse(raw.toString())) {
        if (m.channel === '/meta/connect' && m.successful)
          this.send({ channel: '/meta/connect', connectionType: 'websocket' });
        const w = m.id !== undefined ? this.waiting.get(m.id) : undefined;
        if (w !== undefined) {
          this.waiting.delete(/** @type {string} */ (m.id));
          w(m);
        } else if (!m.channel.startsWith('/meta/')) this.onMessage?.(m);
      }
    });
    const hs = await this.request({
      channel: '/meta/handshake',
      version: '1.0',
      supportedConnectionTypes: ['websocket'],
      ext: { user: this.user },
    });
    this.clientId = hs.clientId;
    this.send({ channel: '/meta/connect', connectionType: 'websocket' });
  }

  /** @param {Record<string, unknown>} m */
  send(m) {
    const id = String(++this.id);
    this.ws?.send(JSON.stringify([{ ...m, id, ...(this.clientId ? { clientId: this.clientId } : {}) }]));
    return id;
  }

  /**
   * @param {Record<string, unknown>} m
   * @returns {Promise<Reply>}
   */
  request(m) {
    return new Promise((resolve) => this.waiting.set(this.send(m), resolve));
  }

  close() {
    this.ws?.terminate();
  }
}

/**
 * @param {string} engine memory or redis
 * @param {number} n clients
 */
async function run(engine, n) {
  const redis = engine === 'redis' ? await startRedis() : null;
  const node = fork(new URL(import.meta.url).pathname, ['--child', JSON.stringify({ redis: redis?.url })], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { base } = /** @type {{ base: string }} */ (await new Promise((r) => node.once('message', r)));
  /** @returns {Promise<number>} */
  const cpu = () =>
    new Promise((resolve) => {
      node.once('message', (/** @type {{ cpu: number }} */ m) => resolve(m.cpu));
      node.send('cpu');
    });
  const { default: WebSocket } = await import('ws');
  /** @type {Session[]} */
  const sessions = [];
  for (let i = 0; i < n; i++) sessions.push(new Session(base, `user${i}`));
  for (let i = 0; i < n; i += 100)
    await Promise.all(sessions.slice(i, i + 100).map((s) => s.open(WebSocket)));
  const follower = new Session(base, 'follower');
  await follower.open(WebSocket);
  let seen = 0;
  follower.onMessage = () => seen++;
  await follower.request({ channel: '/meta/subscribe', subscription: '/presence/room/1' });

  // Warm up: compile the paths and load the Redis scripts before anything is measured.
  for (const action of ['subscribe', 'unsubscribe'])
    for (const channel of ['/plain/warm', '/room/warm'])
      await Promise.all(
        sessions.slice(0, 50).map((s) => s.request({ channel: `/meta/${action}`, subscription: channel })),
      );
  await new Promise((r) => setTimeout(r, 200));

  /** @type {Record<string, string | number>[]} */
  const rows = [];
  /**
   * @param {string} name
   * @param {string} channel
   * @param {'subscribe' | 'unsubscribe'} action
   * @param {number} events the follower's presence events to wait for
   */
  const phase = async (name, channel, action, events) => {
    seen = 0;
    const stats = redis ? await commandStats(redis.client) : null;
    const cpu0 = await cpu();
    const t0 = performance.now();
    await Promise.all(sessions.map((s) => s.request({ channel: `/meta/${action}`, subscription: channel })));
    while (seen < events) await new Promise((r) => setTimeout(r, 5));
    const ms = performance.now() - t0;
    // Leaves are sent after the reply: let them land before reading the counters.
    await new Promise((r) => setTimeout(r, 200));
    const cpuMs = (await cpu()) - cpu0;
    const cmds = redis && stats ? diff(await commandStats(redis.client), stats) : null;
    const total = cmds ? Object.values(cmds).reduce((a, b) => a + b, 0) : null;
    rows.push({
      engine,
      phase: name,
      n,
      'done in (ms)': Math.round(ms),
      'CPU per event (µs)': Math.round((cpuMs * 1000) / n),
      'Redis cmds per event': total === null ? '-' : (total / n).toFixed(2),
      'Redis commands': cmds
        ? Object.entries(cmds)
            .map(([k, v]) => `${k} ${(v / n).toFixed(2)}`)
            .join(', ')
        : '-',
    });
  };
  await phase('subscribe (plain channel)', '/plain/1', 'subscribe', 0);
  await phase('unsubscribe (plain channel)', '/plain/1', 'unsubscribe', 0);
  await phase('join (presence channel)', '/room/1', 'subscribe', n);
  await phase('leave (presence channel)', '/room/1', 'unsubscribe', n);
  for (const s of [...sessions, follower]) s.close();
  node.send('stop');
  await new Promise((r) => node.once('exit', r));
  redis?.stop();
  return rows;
}

async function main() {
  const n = Number(values.clients ?? (values.quick ? 200 : 1000));
  const engines = (values.engines ?? 'memory,redis').split(',');
  console.log(`presence: ${n} clients on one node, one channel; node ${process.version}`);
  /** @type {Record<string, string | number>[]} */
  const rows = [];
  for (const engine of engines) rows.push(...(await run(engine, n)));
  console.table(rows);
  const joins = rows.filter((r) => String(r.phase).startsWith('join'));
  for (const j of joins)
    console.log(`${j.engine}: ${j.n} members joined in ${j['done in (ms)']} ms (claim: within 10,000 ms)`);
}

if (values.child !== undefined) await child(JSON.parse(values.child));
else await main();
