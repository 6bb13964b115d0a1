#!/usr/bin/env node
// @ts-check
// What keeping an idle WebSocket session alive costs the server (issue 36, item 1): the held
// `/meta/connect` answered every `timeout` against the idle heartbeat (a ping and `[]` every
// `heartbeatInterval`), side by side in one sitting.
//
//   node packages/server/bench/heartbeat-cost.mjs [--sessions 5000] [--window 60000]
//     [--rows connect:30000,connect:10000,heartbeat:30000,connect:600000]
//
// Each row is a server process (`createServer`, WebSocket only) with its own generator
// process, all running at once: `connect:<ms>` holds connects `<ms>` (timeout) and its
// clients ask for nothing (CometD, Faye: a new connect on each reply); `heartbeat:<ms>` has
// `heartbeatInterval` `<ms>` and its clients ask for the heartbeat as @bayou/client does
// (`ws` answers the pings; the connect is held `heartbeatTimeout`, 10 min here).
// `connect:10000` is what @bayou/client cost before the heartbeat (its dead-link watchdog
// renewed the held connect every 10 s); `connect:600000` is the floor (nothing per session
// in the window: the shared sweeps only). Every generator opens --sessions sessions
// (handshake, first connect, one subscription, then a held connect) over 127.0.0.2-5; after
// 3 s more, the CPU (utime + stime, /proc/<pid>/stat) each server and each generator spends
// over --window ms is divided by sessions and seconds. Loopback only; ends by itself.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const self = fileURLToPath(import.meta.url);
const role = process.argv[2];

if (role === 'server') await runServer();
else if (role === 'generator') await runGenerator();
else await main();

async function runServer() {
  const [kind, ms] = [process.argv[3], Number(process.argv[4])];
  const { createServer } = await import('../dist/index.js');
  const server = await createServer({
    host: '127.0.0.1',
    port: 0,
    logger: false,
    transports: ['websocket'],
    timeout: kind === 'connect' ? ms : 30_000,
    heartbeatInterval: kind === 'heartbeat' ? ms : 0,
    heartbeatTimeout: 600_000,
    maxConnections: 0,
  });
  process.send?.({ url: `${(await server.listen()).replace(/^http/, 'ws')}/bayeux` });
}

async function runGenerator() {
  const [url, count, ask] = [process.argv[3] ?? '', Number(process.argv[4]), process.argv[5] === 'heartbeat'];
  const ext = ask ? ',"ext":{"bayou":{"heartbeat":true}}' : '';
  const handshake = `[{"channel":"/meta/handshake","version":"1.0","supportedConnectionTypes":["websocket"],"id":"h"${ext}}]`;
  /** @type {WebSocket[]} */
  const sockets = [];
  /** @param {number} i */
  const open = (i) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { localAddress: `127.0.0.${2 + (i % 4)}` });
      sockets.push(ws);
      let clientId = '';
      const connect = (advice = '') =>
        ws.send(
          `[{"channel":"/meta/connect","clientId":"${clientId}","connectionType":"websocket"${advice}}]`,
        );
      ws.on('open', () => ws.send(handshake));
      ws.on('error', reject);
      ws.on('message', (data) => {
        for (const m of JSON.parse(data.toString())) {
          if (m.channel === '/meta/handshake') {
            clientId = m.clientId;
            connect(',"advice":{"timeout":0}');
            ws.send(
              `[{"channel":"/meta/subscribe","clientId":"${clientId}","subscription":"/idle","id":"s"}]`,
            );
          } else if (m.channel === '/meta/subscribe') resolve(undefined);
          else if (m.channel === '/meta/connect' && m.successful) connect();
        }
      });
    });
  let next = 0;
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (next < count) await open(next++);
    }),
  );
  process.send?.({ opened: sockets.filter((s) => s.readyState === WebSocket.OPEN).length });
  process.on('disconnect', () => process.exit(0));
}

/** @param {number} pid */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<any>}
 */
function message(child) {
  return new Promise((resolve) => child.once('message', resolve));
}

async function main() {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '5000' },
      window: { type: 'string', default: '60000' },
      rows: { type: 'string', default: 'connect:30000,connect:10000,heartbeat:30000,connect:600000' },
    },
  });
  const sessions = Number(values.sessions);
  const windowMs = Number(values.window);
  const rows = [];
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const loadBefore = load();
  for (const row of String(values.rows).split(',')) {
    const [kind = '', ms = ''] = row.split(':');
    const server = fork(self, ['server', kind, ms]);
    const { url } = await message(server);
    const generator = fork(self, ['generator', url, String(sessions), kind]);
    const { opened } = await message(generator);
    rows.push({ row, server, generator, opened });
  }
  await new Promise((r) => setTimeout(r, 3000));
  const before = rows.map((r) => [cpuMs(r.server.pid ?? 0), cpuMs(r.generator.pid ?? 0)]);
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, windowMs));
  const seconds = (Date.now() - t0) / 1000;
  console.log(
    `${sessions} sessions per row, ${seconds.toFixed(1)} s window, every row at once; load average ${loadBefore} before, ${load()} after`,
  );
  console.log('| row | sessions open | server CPU µs/s per connection | generator CPU µs/s per connection |');
  console.log('|---|---|---|---|');
  rows.forEach((r, i) => {
    const [s0 = 0, g0 = 0] = before[i] ?? [];
    const server = ((cpuMs(r.server.pid ?? 0) - s0) * 1000) / sessions / seconds;
    const generator = ((cpuMs(r.generator.pid ?? 0) - g0) * 1000) / sessions / seconds;
    console.log(`| ${r.row} | ${r.opened} | ${server.toFixed(3)} | ${generator.toFixed(3)} |`);
  });
  for (const r of rows) {
    r.generator.kill();
    r.server.kill();
  }
}
