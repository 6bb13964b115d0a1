#!/usr/bin/env node
// @ts-check
// Handshake capacity of one node (issue #35 item 2): how many new sessions a second one
// `bayou start` process takes when a storm brings them — each a new WebSocket, a handshake,
// a first connect, then kept open — and what that costs its CPU. The default of
// `maxHandshakeRate` comes from here.
//
//   node packages/server/bench/handshake-rate.mjs [--seconds 5] [--concurrency 64]
//     [--stayers 0] [--rate 20] [--server-flag=--max-handshake-rate=0 ...]
//
// With `--stayers N`, N sessions opened before the storm receive `--rate` messages a second:
// their delivery latency p99 over a quiet 3 s, then during the storm. A refused storm client
// waits the advised interval before it tries again (as CometD and @bayou/client do).
//
// `--concurrency` sessions are being opened at any time, from this process; every session
// stays open to the end (as a storm's do), so the node also carries a growing number of
// sessions. Reports accepted and refused handshakes a second, the server's CPU (from
// /proc/<pid>/stat) per accepted handshake, and the p50/p99 of a session's setup time.
import { fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const here = fileURLToPath(new URL('.', import.meta.url));
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    'server-flag': { type: 'string', multiple: true, default: ['--max-handshake-rate=0'] },
    stayers: { type: 'string', default: '0' },
    // Internal: only the storm, against this URL, in a process of its own; reports over IPC.
    'flood-url': { type: 'string', default: '' },
    rate: { type: 'string', default: '20' },
  },
});
const stayerCount = Number(values.stayers);
const publishRate = Number(values.rate);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

/** @param {string[]} flags @returns {Promise<{ base: string, pid: number, stop: () => boolean }>} */
function startServer(flags) {
  const cli = resolve(here, '../dist/cli.js');
  const child = spawn(
    process.execPath,
    [cli, 'start', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn', ...flags],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolveStart, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout.on('data', (d) => {
      const m = /listening on (http:\/\/\S+)/.exec(d.toString());
      if (m?.[1] && child.pid !== undefined)
        resolveStart({ base: m[1], pid: child.pid, stop: () => child.kill('SIGKILL') });
    });
  });
}

/** CPU seconds (user + system) of `pid` so far. @param {number} pid */
function cpu(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The interval the last refusal advised (a well-behaved client waits it). */
let lastAdvice = 0;

/**
 * One session: a WebSocket, a handshake and a first connect. Resolves 'accepted' (kept
 * open), 'refused' (a handshake refused with advice) or 'failed'.
 * @param {string} url @param {WebSocket[]} open
 * @returns {Promise<'accepted' | 'refused' | 'failed'>}
 */
function session(url, open) {
  return new Promise((done) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('error', () => done('failed'));
    ws.on('open', () =>
      ws.send(
        JSON.stringify([
          { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'] },
        ]),
      ),
    );
    ws.on('message', (data) => {
      for (const m of JSON.parse(String(data))) {
        if (m.channel === '/meta/handshake' && !m.successful) {
          ws.close();
          lastAdvice = typeof m.advice?.interval === 'number' ? m.advice.interval : 0;
          return done('refused');
        }
        if (m.channel === '/meta/handshake') {
          ws.send(
            JSON.stringify([{ channel: '/meta/connect', clientId: m.clientId, connectionType: 'websocket' }]),
          );
        } else if (m.channel === '/meta/connect') {
          open.push(ws);
          return done('accepted');
        }
      }
    });
  });
}

/**
 * The storm: `concurrency` sessions being opened at any time until `seconds` are over.
 * @param {string} url
 */
async function storm(url) {
  /** @type {WebSocket[]} */
  const open = [];
  const counts = { accepted: 0, refused: 0, failed: 0 };
  /** @type {number[]} */
  const setup = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const outcome = await session(url, open);
        counts[outcome]++;
        if (outcome === 'accepted') setup.push(performance.now() - t);
        // A refused client waits what the server advised, as CometD and @bayou/client do.
        else if (outcome === 'refused') await new Promise((r) => setTimeout(r, lastAdvice));
      }
    }),
  );
  setup.sort((a, b) => a - b);
  const pct = (/** @type {number} */ p) =>
    (setup[Math.floor(((setup.length - 1) * p) / 100)] ?? 0).toFixed(1);
  const close = () => {
    for (const ws of open) ws.terminate();
  };
  return { counts, sessionsAtEnd: open.length, setupMsP50: pct(50), setupMsP99: pct(99), close };
}

if (values['flood-url'] !== '') {
  const { close, ...result } = await storm(values['flood-url'] ?? '');
  close();
  process.send?.(result, () => process.exit(0));
  await new Promise(() => {});
}

const server = await startServer(values['server-flag'] ?? []);
const url = `${server.base.replace(/^http/, 'ws')}/bayeux`;

/**
 * Sessions that were there before the storm: `stayerCount` WebSockets subscribed to /stay;
 * the first publishes `publishRate` messages a second stamped with the time, so the
 * latency of every delivery (arrival − stamp, one clock) is sampled into `latencies`.
 * @param {number[]} latencies
 */
async function stayers(latencies) {
  /** @type {WebSocket[]} */
  const sockets = [];
  for (let i = 0; i < stayerCount; i++) {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((ready) => {
      let clientId = '';
      ws.on('open', () =>
        ws.send(
          JSON.stringify([
            { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'] },
          ]),
        ),
      );
      ws.on('message', (data) => {
        for (const m of JSON.parse(String(data))) {
          if (m.channel === '/meta/handshake') {
            clientId = m.clientId;
            ws.send(
              JSON.stringify([
                { channel: '/meta/connect', clientId, connectionType: 'websocket' },
                { channel: '/meta/subscribe', clientId, subscription: '/stay' },
              ]),
            );
          } else if (m.channel === '/meta/connect') {
            ws.send(JSON.stringify([{ channel: '/meta/connect', clientId, connectionType: 'websocket' }]));
          } else if (m.channel === '/meta/subscribe') ready(null);
          else if (m.channel === '/stay' && typeof m.data?.t === 'number')
            latencies.push(Date.now() - m.data.t);
        }
      });
      sockets.push(ws);
      /** @type {any} */ (ws).clientId = () => clientId;
    });
  }
  const publisher = sockets[0];
  const timer = setInterval(() => {
    const clientId = /** @type {any} */ (publisher)?.clientId();
    publisher?.send(JSON.stringify([{ channel: '/stay', clientId, data: { t: Date.now() } }]));
  }, 1000 / publishRate);
  return () => {
    clearInterval(timer);
    for (const ws of sockets) ws.terminate();
  };
}

/** @param {number[]} xs */
const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * 0.99)] ?? 0;
/** @type {number[]} */
const sampled = [];
const stopStayers = stayerCount > 0 ? await stayers(sampled) : () => {};
let quietP99 = 0;
if (stayerCount > 0) {
  sampled.length = 0;
  await new Promise((r) => setTimeout(r, 3000));
  quietP99 = p99(sampled);
  sampled.length = 0;
}
const cpuBefore = cpu(server.pid);
const start = Date.now();
// With stayers, the storm runs in a process of its own: theirs are the only latencies here.
const flood =
  stayerCount > 0
    ? await new Promise((resolveFlood) => {
        const args = ['--flood-url', url, '--seconds', String(seconds), '--concurrency', String(concurrency)];
        fork(fileURLToPath(import.meta.url), args).once('message', resolveFlood);
      })
    : await storm(url);
const { counts, sessionsAtEnd, setupMsP50, setupMsP99 } = /** @type {any} */ (flood);
const took = (Date.now() - start) / 1000;
const cpuUsed = cpu(server.pid) - cpuBefore;
console.log(
  JSON.stringify({
    seconds: took,
    concurrency,
    serverFlags: values['server-flag'],
    acceptedPerSecond: Math.round(counts.accepted / took),
    refusedPerSecond: Math.round(counts.refused / took),
    failed: counts.failed,
    sessionsAtEnd,
    serverCpuPerAcceptedUs: Math.round((cpuUsed / Math.max(1, counts.accepted)) * 1e6),
    serverCpuShare: Number((cpuUsed / took).toFixed(2)),
    setupMsP50,
    setupMsP99,
    stayers: stayerCount,
    stayersP99QuietMs: quietP99,
    stayersP99StormMs: p99(sampled),
  }),
);
stopStayers();
/** @type {any} */ (flood).close?.();
server.stop();
