#!/usr/bin/env node
// @ts-check
// What the operator's console costs (issue 25): CPU of `bayou start` processes measured
// from /proc (user + system time), side by side in one run.
//
//   node packages/server/bench/admin-cost.mjs [--seconds 20] [--rate 1000] [--clients 200]
//     [--rooms 10] [--windows 4]
//
// 1. Idle, three servers at once for --seconds: without --admin; with --admin and no
//    console open; with --admin and a console session holding the feed (a Node
//    @bayou/client with the console token, as the page connects).
// 2. Under load, one `bayou start --admin` with a `bayou-loadtest chat` run against it
//    (--clients in --rooms rooms, one room each, --rate publishes/s, so about
//    rate × clients / rooms deliveries/s): --windows windows of --seconds alternating
//    console closed / console open (closed windows start 6 s after the console left, past
//    the 5 s the node keeps watching). Rates are read from the server's /metrics.
// Bounded: every child is killed at the end; the whole run takes about
// seconds + windows × (seconds + 6) + 15 s.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { BayouClient, websocket } from '../../browser-client/dist/index.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    rate: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '200' },
    rooms: { type: 'string', default: '10' },
    windows: { type: 'string', default: '4' },
  },
});
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const CLIENTS = Number(values.clients);
const ROOMS = Number(values.rooms);
const WINDOWS = Number(values.windows);
const PASSWORD = 'bench-console-password';
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const loadtest = fileURLToPath(new URL('../../loadtest/bin/bayou-loadtest.js', import.meta.url));
const TICK = 100; // USER_HZ on Linux
/** @type {import('node:child_process').ChildProcess[]} */
const children = [];
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** @typedef {{ child: import('node:child_process').ChildProcess, pid: number, base: string }} Started */
/** @typedef {{ open: boolean, cpu: number, published: number, delivered: number }} WindowRow */

/**
 * `bayou start` with `args` in its own process; resolves once it listens.
 * @param {string[]} args
 * @returns {Promise<Started>}
 */
function start(args) {
  const child = spawn(process.execPath, [cli, 'start', '--port', '0', '--log-level', 'warn', ...args], {
    env: { PATH: process.env.PATH },
  });
  children.push(child);
  let out = '';
  child.stderr.on('data', (d) => {
    out += d;
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^ ]+)/.exec(out);
      if (m?.[1] && child.pid !== undefined) resolve({ child, pid: child.pid, base: m[1] });
    });
    child.once('exit', (code) => reject(new Error(`bayou exited with ${code}: ${out}`)));
  });
}

/**
 * CPU seconds (user + system) the process has used.
 * @param {number} pid
 */
function cpu(pid) {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

/**
 * The console's session token for `base`.
 * @param {string} base
 * @returns {Promise<string>}
 */
async function login(base) {
  const r = await fetch(`${base}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: PASSWORD }),
  });
  return /** @type {{ token: string }} */ (await r.json()).token;
}

/**
 * A console session as the page opens it; resolves once the first snapshot arrived.
 * @param {string} base
 */
async function openConsole(base) {
  const token = await login(base);
  const client = new BayouClient(`${base}/bayeux`, {
    transports: [websocket],
    WebSocket,
    handshake: () => ({ bayouAdmin: token }),
  });
  /** @type {() => void} */
  let first = () => {};
  const arrived = new Promise((r) => {
    first = () => r(undefined);
  });
  client.subscribe('/bayou/admin/stats', () => first());
  await client.connect();
  await arrived;
  return client;
}

/**
 * A counter of `/metrics` (0 when absent).
 * @param {string} base
 * @param {string} name
 */
async function counter(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * @param {number} cpuSeconds
 * @param {number} seconds
 */
const pct = (cpuSeconds, seconds) => `${((cpuSeconds / seconds) * 100).toFixed(2)}%`;

async function idle() {
  const plain = await start([]);
  const closed = await start(['--admin', '--admin-password', PASSWORD]);
  const open = await start(['--admin', '--admin-password', PASSWORD]);
  const console = await openConsole(open.base);
  await sleep(2000);
  const servers = [plain, closed, open];
  const before = servers.map((s) => cpu(s.pid));
  await sleep(SECONDS * 1000);
  const used = servers.map((s, i) => cpu(s.pid) - (before[i] ?? Number.NaN));
  await console.disconnect();
  process.stdout.write(`\nIdle, ${SECONDS} s side by side (CPU of one core):\n`);
  process.stdout.write(`| server | CPU |\n|---|---|\n`);
  const [plainCpu = Number.NaN, closedCpu = Number.NaN, openCpu = Number.NaN] = used;
  process.stdout.write(`| bayou start | ${pct(plainCpu, SECONDS)} |\n`);
  process.stdout.write(`| bayou start --admin, console closed | ${pct(closedCpu, SECONDS)} |\n`);
  process.stdout.write(`| bayou start --admin, console open | ${pct(openCpu, SECONDS)} |\n`);
  for (const s of servers) s.child.kill('SIGKILL');
}

/**
 * One measured window under load.
 * @param {Started} server
 * @param {boolean} open whether the console is open meanwhile
 * @returns {Promise<WindowRow>}
 */
async function window(server, open) {
  const c0 = cpu(server.pid);
  const p0 = await counter(server.base, 'bayou_publishes_total');
  const d0 = await counter(server.base, 'bayou_messages_out_total');
  const t0 = Date.now();
  await sleep(SECONDS * 1000);
  const seconds = (Date.now() - t0) / 1000;
  const used = cpu(server.pid) - c0;
  const published = ((await counter(server.base, 'bayou_publishes_total')) - p0) / seconds;
  const delivered = ((await counter(server.base, 'bayou_messages_out_total')) - d0) / seconds;
  return { open, cpu: used / seconds, published, delivered };
}

async function underLoad() {
  const server = await start(['--admin', '--admin-password', PASSWORD]);
  const duration = WINDOWS * (SECONDS + 8) + 10;
  const load = spawn(
    process.execPath,
    [
      loadtest,
      'chat',
      '--url',
      `${server.base}/bayeux`,
      '--clients',
      String(CLIENTS),
      '--rooms',
      String(ROOMS),
      '--rooms-per-client',
      '1',
      '--rate',
      String(RATE),
      '--duration',
      `${duration}s`,
    ],
    { stdio: 'ignore' },
  );
  children.push(load);
  await sleep(8000);
  /** @type {WindowRow[]} */
  const rows = [];
  for (let i = 0; i < WINDOWS; i++) {
    const open = i % 2 === 1;
    if (open) {
      const console = await openConsole(server.base);
      rows.push(await window(server, true));
      await console.disconnect();
      await sleep(6000);
    } else rows.push(await window(server, false));
  }
  process.stdout.write(
    `\nUnder load: bayou-loadtest chat --clients ${CLIENTS} --rooms ${ROOMS} --rooms-per-client 1 --rate ${RATE}, windows of ${SECONDS} s:\n`,
  );
  process.stdout.write(
    '| window | console | published/s | delivered/s | server CPU (of one core) |\n|---|---|---|---|---|\n',
  );
  for (const [i, r] of rows.entries()) {
    const cells = [i + 1, r.open ? 'open' : 'closed', Math.round(r.published), Math.round(r.delivered)];
    process.stdout.write(`| ${cells.join(' | ')} | ${(r.cpu * 100).toFixed(1)}% |\n`);
  }

  /** @param {boolean} open */
  const mean = (open) => {
    const xs = rows.filter((r) => r.open === open).map((r) => r.cpu);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  process.stdout.write(
    `Mean CPU closed ${(mean(false) * 100).toFixed(1)}%, open ${(mean(true) * 100).toFixed(1)}%: the open console costs ${((mean(true) - mean(false)) * 100).toFixed(1)} points of a core.\n`,
  );
  load.kill('SIGKILL');
  server.child.kill('SIGKILL');
}

try {
  await idle();
  await underLoad();
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
}
process.exit(0);
