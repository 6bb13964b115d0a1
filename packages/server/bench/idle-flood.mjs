#!/usr/bin/env node
// @ts-check
// Idle-socket flood (issue 21, item 3): real clients' delivery latency against one `bayou
// start` process, before, during and after a flood of idle unauthenticated WebSockets
// (upgraded, never a Bayeux message), in one run.
//
//   node packages/server/bench/idle-flood.mjs [--idle 20000] [--open-rate 4000] [--clients 200]
//     [--rate 50] [--seconds 10] [--flooders 4] [--server-flag=--max-connections=18000 ...]
//
// The server is `dist/cli.js start` in a child process with its default limits (or the
// `--server-flag`s given). `--clients` real WebSocket clients subscribe to one channel; one
// of them publishes `--rate` messages/s stamped with the time, so every message is
// delivered `--clients` times; latency = arrival − stamp (one clock, this process).
// Windows: `before` (--seconds); `arrival` (from the first idle socket until every one was
// answered: opened, or refused with 503); `held` (from then until the server closes the
// first one); `closing` (until every one has ended, closed by the handshake timeout);
// `after` (--seconds).
// The idle sockets come from `--flooders` child processes, each on its own loopback
// address (127.0.0.2 …), `--open-rate` new sockets a second in all: `ulimit -n` (20,000 here)
// holds per process, and the server has the same limit, which its connection cap keeps
// it under. A probe opens one new client per second during the flood and reports how
// many got in. Bounded: the flood ends when every socket ended or after 120 s.
import { fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const here = fileURLToPath(new URL('.', import.meta.url));
const FLOOD_DEADLINE_MS = 120_000;

/** @typedef {{ refused503: number, refusedOther: number, closed1008: number, closedOther: number, error: number }} Endings */
/**
 * What a flooder tells the bench: every socket answered, the server's first close, or the end.
 * @typedef {{ type: 'held' } | { type: 'closing' } | { type: 'done', endings: Endings, peak: number, timedOut: boolean }} FlooderReport
 */
/** @typedef {'before' | 'arrival' | 'held' | 'closing' | 'after'} Window */
/** @typedef {Awaited<ReturnType<typeof metrics>>} Metrics */

/** @param {FlooderReport} report */
const report = (report) => process.send?.(report);

/**
 * A flooder child: opens `count` idle WebSockets from `localAddress` as raw TCP sockets that
 * write one upgrade request and never anything else — not even the answer to the server's
 * close frame, as an attacker would not — and reports how each ended. (Raw sockets, not a
 * WebSocket client: the generator's own cost stays small beside the server's.)
 * @param {{ base: string, count: number, localAddress: string, rate: number }} order
 */
async function flooder({ base, count, localAddress, rate }) {
  const { host, port } = new URL(base);
  const request = `GET /bayeux HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
  const endings = { refused503: 0, refusedOther: 0, closed1008: 0, closedOther: 0, error: 0 };
  let open = 0;
  let peak = 0;
  let started = 0;
  let ended = 0;
  let answered = 0;
  /** Whether the server has begun closing this flooder's sockets (the first close frame). */
  let closing = false;
  /** One more socket was answered (opened or refused): once all were, the flood is held. */
  const arrived = () => {
    if (++answered === count) report({ type: 'held' });
  };
  const done = new Promise((resolveDone) => {
    const next = () => {
      if (started >= count) return;
      started++;
      const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress });
      let status = 0;
      let closeCode = 0;
      let failed = false;
      socket.on('connect', () => socket.write(request));
      socket.on('data', (/** @type {Buffer} */ chunk) => {
        if (status === 0) {
          status = Number(chunk.toString('latin1', 9, 12));
          if (status === 101) {
            open++;
            peak = Math.max(peak, open);
          }
          arrived();
          const end = chunk.indexOf('\r\n\r\n');
          chunk = end < 0 ? chunk.subarray(chunk.length) : chunk.subarray(end + 4);
        }
        // A close frame (FIN + opcode 8): its code, then keep silent.
        if (status === 101 && chunk.length >= 4 && chunk[0] === 0x88) {
          closeCode = chunk.readUInt16BE(2);
          if (!closing) {
            closing = true;
            report({ type: 'closing' });
          }
        }
      });
      socket.on('error', () => {
        failed = true;
      });
      socket.on('close', () => {
        if (status === 0) arrived();
        if (status === 101) open--;
        if (failed && status === 0) endings.error++;
        else if (status === 503) endings.refused503++;
        else if (status !== 101) endings.refusedOther++;
        else if (closeCode === 1008) endings.closed1008++;
        else endings.closedOther++;
        if (++ended === count) resolveDone(undefined);
      });
    };
    // Paced: `rate` new sockets a second, started every 10 ms.
    const perTick = Math.max(1, Math.round(rate / 100));
    const pace = setInterval(() => {
      for (let i = 0; i < perTick; i++) next();
      if (started >= count) clearInterval(pace);
    }, 10);
  });
  const timer = setTimeout(() => report({ type: 'done', endings, peak, timedOut: true }), FLOOD_DEADLINE_MS);
  await done;
  clearTimeout(timer);
  report({ type: 'done', endings, peak, timedOut: false });
}

/**
 * CPU seconds (user + system) process `pid` has used, from /proc (Linux).
 * @param {number} pid
 */
function cpuSeconds(pid) {
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * @param {number[]} sorted
 * @param {number} p
 */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * The server: `bayou start` in a child process; resolves with its URL and a stop function.
 * @param {string[]} flags
 * @returns {Promise<{ base: string, pid: number, stop: () => boolean }>}
 */
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

/**
 * A raw Bayeux-over-WebSocket client subscribed to `channel`; `onData` gets each delivery's data.
 * @param {string} url
 * @param {string} channel
 * @param {(data: { t: number, n: number }) => void} onData
 */
function realClient(url, channel, onData) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  const c = { ws, clientId: /** @type {string | null} */ (null), closed: false, ready: Promise.resolve() };
  c.ready = new Promise((resolveReady, reject) => {
    ws.once('error', reject);
    ws.on('close', () => {
      c.closed = true;
    });
    ws.on('open', () =>
      ws.send(
        JSON.stringify([
          { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['websocket'] },
        ]),
      ),
    );
    ws.on('message', (raw) => {
      for (const m of JSON.parse(raw.toString())) {
        if (m.channel === '/meta/handshake') {
          if (!m.successful) return reject(new Error(`handshake refused: ${m.error}`));
          c.clientId = m.clientId;
          ws.send(
            JSON.stringify([
              {
                channel: '/meta/connect',
                clientId: c.clientId,
                connectionType: 'websocket',
                advice: { timeout: 0 },
              },
              { channel: '/meta/subscribe', clientId: c.clientId, subscription: channel },
            ]),
          );
        } else if (m.channel === '/meta/subscribe') resolveReady(undefined);
        else if (m.channel === '/meta/connect' && m.successful)
          ws.send(
            JSON.stringify([{ channel: '/meta/connect', clientId: c.clientId, connectionType: 'websocket' }]),
          );
        else if (m.channel === channel && m.data !== undefined) onData(m.data);
      }
    });
  });
  return c;
}

/**
 * The server's connection counters, memory and event-loop delay from `/metrics`.
 * @param {string} base
 */
async function metrics(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  /** @param {string} name */
  const read = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    open: read('bayou_connections_open'),
    refused: read('bayou_connections_refused_total'),
    timedOut: read('bayou_connections_timed_out_total'),
    rssMB: read('process_resident_memory_bytes') / 1e6,
    // prom-client's event-loop delay histogram restarts at every scrape: since the last one.
    lagP99: read('nodejs_eventloop_lag_p99_seconds') * 1000,
    lagMax: read('nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      idle: { type: 'string', default: '20000' },
      clients: { type: 'string', default: '200' },
      rate: { type: 'string', default: '50' },
      seconds: { type: 'string', default: '10' },
      flooders: { type: 'string', default: '4' },
      'open-rate': { type: 'string', default: '4000' },
      'server-flag': { type: 'string', multiple: true, default: [] },
    },
  });
  const idle = Number(values.idle);
  const clients = Number(values.clients);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const flooders = Number(values.flooders);
  const openRate = Number(values['open-rate']);
  const server = await startServer(values['server-flag']);
  const url = `${server.base.replace(/^http/, 'ws')}/bayeux`;
  const channel = '/bench/idle-flood';
  /** @type {Window | 'end' | null} */
  let window = null;
  /** @type {Window[]} */
  const WINDOWS = ['before', 'arrival', 'held', 'closing', 'after'];
  /** @type {Record<Window, number[]>} */
  const latencies = { before: [], arrival: [], held: [], closing: [], after: [] };
  let published = 0;
  /** @type {Record<Window, number>} */
  const received = { before: 0, arrival: 0, held: 0, closing: 0, after: 0 };
  /** @param {{ t: number }} data */
  const onData = (data) => {
    if (window === 'end') return;
    if (window === null) return;
    latencies[window].push(performance.now() - data.t);
    received[window]++;
  };
  const real = [];
  for (let i = 0; i < clients; i++) real.push(realClient(url, channel, onData));
  await Promise.all(real.map((c) => c.ready));
  const publisher = real[0];
  if (publisher === undefined) throw new Error('--clients must be at least 1');
  /** @type {Record<Window, number>} */
  const sentIn = { before: 0, arrival: 0, held: 0, closing: 0, after: 0 };
  const tick = setInterval(() => {
    if (window === null || window === 'end') return;
    published++;
    sentIn[window]++;
    publisher.ws.send(
      JSON.stringify([
        { channel, clientId: publisher.clientId, data: { t: performance.now(), n: published } },
      ]),
    );
  }, 1000 / rate);

  /** @param {number} ms */
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  /** @type {Partial<Record<Window | 'end', number>>} */
  const cpuAt = {};
  /**
   * The server's event-loop delay over each window: a scrape when it ends (restarting it).
   * @type {Partial<Record<Window, Metrics>>}
   */
  const lagOf = {};
  /** @type {Promise<void>} */
  let scraping = Promise.resolve();
  /** @param {Window | 'end'} w */
  const mark = (w) => {
    cpuAt[w] = cpuSeconds(server.pid);
    const ending = window;
    if (ending !== null && ending !== 'end')
      scraping = scraping.then(() =>
        metrics(server.base).then((m) => {
          lagOf[ending] = m;
        }),
      );
    window = w;
  };
  await metrics(server.base);
  mark('before');
  await sleep(seconds * 1000);

  // The flood, with a probe: one new real client a second.
  mark('arrival');
  const floodStart = performance.now();
  let heldAt = Number.NaN;
  let closingAt = Number.NaN;
  let flooding = flooders;
  const probes = { accepted: 0, refused: 0 };
  const probe = setInterval(() => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('open', () => {
      probes.accepted++;
      ws.terminate();
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      probes.refused++;
      ws.terminate();
    });
    ws.on('error', () => undefined);
  }, 1000);
  const per = Math.ceil(idle / flooders);
  const results = await Promise.all(
    Array.from({ length: flooders }, (_, i) => {
      const child = fork(fileURLToPath(import.meta.url), ['--flooder'], { stdio: 'inherit' });
      child.send({
        base: server.base,
        count: Math.min(per, idle - i * per),
        localAddress: `127.0.0.${2 + i}`,
        rate: openRate / flooders,
      });
      /** @type {Promise<Extract<FlooderReport, { type: 'done' }>>} */
      const finished = new Promise((r) =>
        child.on('message', (/** @type {FlooderReport} */ m) => {
          if (m.type === 'closing') {
            // The first handshake timeouts: from here the server is closing the flood.
            if (window === 'held' || window === 'arrival') {
              closingAt = performance.now();
              mark('closing');
            }
            return;
          }
          if (m.type === 'held') {
            // Every idle socket is open or refused: from here the flood is only held.
            if (--flooding === 0 && window === 'arrival') {
              heldAt = performance.now();
              mark('held');
            }
            return;
          }
          child.kill();
          r(m);
        }),
      );
      return finished;
    }),
  );
  const floodEnd = performance.now();
  // A window that never began (closing began during the arrival) spans nothing.
  if (Number.isNaN(closingAt)) closingAt = floodEnd;
  if (Number.isNaN(heldAt)) heldAt = closingAt;
  const spans = {
    before: seconds,
    arrival: (heldAt - floodStart) / 1000,
    held: (closingAt - heldAt) / 1000,
    closing: (floodEnd - closingAt) / 1000,
    after: seconds,
  };
  clearInterval(probe);
  mark('after');
  await sleep(seconds * 1000);
  mark('end');
  window = null;
  await scraping;
  clearInterval(tick);
  await sleep(500);
  const final = await metrics(server.base);
  const stillConnected = real.filter((c) => !c.closed).length;

  /** @type {Record<string, number>} */
  const endings = {};
  for (const r of results) for (const [k, v] of Object.entries(r.endings)) endings[k] = (endings[k] ?? 0) + v;
  console.log(
    `Idle-socket flood: ${idle} idle WebSockets (${openRate}/s) from ${flooders} processes (127.0.0.2-${1 + flooders}) against one bayou start (${values['server-flag'].join(' ') || 'default limits'})`,
  );
  console.log(
    `Real clients: ${clients} WebSocket sessions on one channel, ${rate} publishes/s → ${clients * rate} deliveries/s`,
  );
  console.log(
    '| window | seconds | delivered | expected | p50 ms | p99 ms | max ms | server CPU % | server event-loop delay p99 / max ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const w of WINDOWS) {
    const sorted = latencies[w].sort((a, b) => a - b);
    const secs = spans[w];
    if (cpuAt[w] === undefined) {
      console.log(`| ${w} | 0 | | | | | | | |`);
      continue;
    }
    const after = WINDOWS.slice(WINDOWS.indexOf(w) + 1).find((x) => cpuAt[x] !== undefined) ?? 'end';
    const cpu = (100 * ((cpuAt[after] ?? Number.NaN) - cpuAt[w])) / secs;
    console.log(
      `| ${w} | ${secs.toFixed(1)} | ${received[w]} | ${sentIn[w] * clients} | ${percentile(sorted, 50).toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${sorted.at(-1)?.toFixed(2)} | ${cpu.toFixed(0)} | ${lagOf[w]?.lagP99.toFixed(1)} / ${lagOf[w]?.lagMax.toFixed(1)} |`,
    );
  }
  console.log(
    `Idle sockets: ${JSON.stringify(endings)}; flooders cut by the 120 s bound: ${results.filter((r) => r.timedOut).length}`,
  );
  console.log(
    `Server at the end: connections open ${final.open}; refused_total ${final.refused}; timed_out_total ${final.timedOut}; RSS ${final.rssMB.toFixed(0)} MB. Idle sockets open at once, summed over the flooders' own peaks: ${results.reduce((a, r) => a + r.peak, 0)}`,
  );
  console.log(
    `New clients during the flood (one a second): ${probes.accepted} opened, ${probes.refused} refused`,
  );
  console.log(`Real clients still connected at the end: ${stillConnected}/${clients}`);
  for (const c of real) c.ws.terminate();
  server.stop();
}

if (process.argv.includes('--flooder'))
  process.once('message', (m) =>
    flooder(/** @type {Parameters<typeof flooder>[0]} */ (m)).then(() => undefined),
  );
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
