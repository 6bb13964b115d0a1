#!/usr/bin/env node
// @ts-check
// Records benchmark (run by `pnpm bench`):
// 1. bytes on the wire per client per second for one record updated 50×/s with 6 fields:
//    throttle 0 vs 500 ms, compact encoding on vs off;
// 2. server CPU per delivered update: 1,000 clients each on 20 of 2,000 records, every
//    record updated 10×/s.
// Each configuration runs its server in a child process; CPU is utime+stime of that
// process over the measured window. Flags: --clients, --seconds, --quick.
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values } = parseArgs({
  options: { quick: { type: 'boolean' }, clients: { type: 'string' }, seconds: { type: 'string' } },
});
const quick = values.quick ?? false;
const seconds = Number(values.seconds ?? (quick ? 2 : 5));
const loadClients = Number(values.clients ?? (quick ? 200 : 1000));

/** @typedef {{ cpu: number, updates: number, sessions: number }} ServerStats */

/**
 * records-server.mjs in its own process.
 * @param {{ throttleMs: number, subjects: number, rate: number, fields: number }} cfg
 * @returns {Promise<{ url: string, ask: (m: 'stats') => Promise<ServerStats>, stop: () => boolean }>}
 */
function startServer(cfg) {
  const child = fork(new URL('./records-server.mjs', import.meta.url), [JSON.stringify(cfg)]);
  /** @param {'stats'} m */
  const ask = (m) =>
    /** @type {Promise<ServerStats>} */ (
      new Promise((resolve) => {
        child.once('message', resolve);
        child.send(m);
      })
    );
  return new Promise((resolve) =>
    child.once('message', (/** @type {{ url: string }} */ { url }) =>
      resolve({ url, ask, stop: () => child.kill() }),
    ),
  );
}

/**
 * A raw WebSocket Bayeux client that subscribes to `subjects` and counts what arrives.
 * @param {string} url
 * @param {string[]} subjects
 * @param {object} [ext] the handshake's ext
 */
function client(url, subjects, ext) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  const c = { bytes: 0, updates: 0, pending: subjects.length, ready: Promise.resolve(), ws };
  c.ready = new Promise((resolve) => {
    /** @type {string | undefined} */
    let id;
    ws.on('open', () =>
      ws.send(
        JSON.stringify([
          { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'], ext },
        ]),
      ),
    );
    ws.on('message', (/** @type {Buffer} */ data) => {
      c.bytes += data.length;
      for (const m of JSON.parse(data.toString())) {
        if (m.channel === '/meta/handshake') {
          id = m.clientId;
          ws.send(
            JSON.stringify([
              { channel: '/meta/connect', clientId: id, connectionType: 'websocket' },
              ...subjects.map((s) => ({ channel: '/meta/subscribe', clientId: id, subscription: s })),
            ]),
          );
        } else if (m.channel === '/meta/connect') {
          ws.send(JSON.stringify([{ channel: '/meta/connect', clientId: id, connectionType: 'websocket' }]));
        } else if (m.channel === '/meta/subscribe') {
          if (--c.pending === 0) resolve(undefined);
        } else if (m.successful === undefined) c.updates++;
      }
    });
  });
  return c;
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @param {number} throttleMs
 * @param {boolean} compact
 */
async function wireBytes(throttleMs, compact) {
  const server = await startServer({ throttleMs, subjects: 1, rate: 50, fields: 6 });
  const clients = Array.from({ length: 10 }, () =>
    client(server.url, ['/bench/0'], compact ? { bayou: { compact: true } } : undefined),
  );
  await Promise.all(clients.map((c) => c.ready));
  await sleep(1000);
  for (const c of clients) [c.bytes, c.updates] = [0, 0];
  await sleep(seconds * 1000);
  const bytes = clients.reduce((a, c) => a + c.bytes, 0) / clients.length / seconds;
  const updates = clients.reduce((a, c) => a + c.updates, 0) / clients.length / seconds;
  for (const c of clients) c.ws.terminate();
  server.stop();
  return { bytes, updates };
}

async function cpuPerUpdate() {
  const subjects = 2000;
  const server = await startServer({ throttleMs: 0, subjects, rate: 10, fields: 6 });
  /** @type {ReturnType<typeof client>[]} */
  const clients = [];
  for (let i = 0; i < loadClients; i++) {
    const mine = Array.from({ length: 20 }, (_, k) => `/bench/${(i * 37 + k * 101) % subjects}`);
    clients.push(client(server.url, mine));
    if (i % 100 === 99) await Promise.all(clients.slice(-100).map((c) => c.ready));
  }
  await Promise.all(clients.map((c) => c.ready));
  await sleep(1000);
  const before = await server.ask('stats');
  const delivered0 = clients.reduce((a, c) => a + c.updates, 0);
  await sleep(seconds * 1000);
  const after = await server.ask('stats');
  const delivered = clients.reduce((a, c) => a + c.updates, 0) - delivered0;
  for (const c of clients) c.ws.terminate();
  server.stop();
  return {
    delivered: delivered / seconds,
    cpuUs: ((after.cpu - before.cpu) * 1e6) / delivered,
    updates: (after.updates - before.updates) / seconds,
  };
}

const rows = [];
for (const [throttle, compact] of /** @type {const} */ ([
  [0, false],
  [0, true],
  [500, false],
  [500, true],
])) {
  const r = await wireBytes(throttle, compact);
  rows.push(
    `| ${throttle} ms | ${compact ? 'on' : 'off'} | ${Math.round(r.bytes).toLocaleString('en')} | ${r.updates.toFixed(1)} |`,
  );
}
const load = await cpuPerUpdate();
console.log(
  `Command: \`pnpm bench\` (server records bench${quick ? ', --quick' : ''}), ${seconds} s measured per configuration.\n`,
);
console.log(
  'Bytes on the wire per client per second, one record updated 50×/s, 6 fields changing (10 WebSocket clients):\n',
);
console.log('| throttle | compact | bytes/s per client | messages/s per client |\n|---|---|---|---|');
console.log(rows.join('\n'));
console.log(
  `\nServer CPU per delivered update: ${loadClients.toLocaleString('en')} clients × 20 of 2,000 records, each record updated 10×/s:\n`,
);
console.log('| updates/s | delivered updates/s | server CPU µs per delivered update |\n|---|---|---|');
console.log(
  `| ${Math.round(load.updates).toLocaleString('en')} | ${Math.round(load.delivered).toLocaleString('en')} | ${load.cpuUs.toFixed(2)} |`,
);
