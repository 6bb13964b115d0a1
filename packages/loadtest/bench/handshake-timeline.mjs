#!/usr/bin/env node
// @ts-check
// The timeline of one WebSocket open, as a client sees it (issue 14, part 4: what holds
// each open). For each server, `--samples` clients open one after another on an idle
// server, then the same number are sampled while `--background` other clients open at
// once (`--in-flight` at a time); each sampled open is cut into phases:
//   tcp        socket created → TCP connected
//   upgrade    → HTTP 101 received (the server parsed the upgrade request and routed it)
//   handshake  → /meta/handshake reply (clientId)
//   subscribe  → /meta/subscribe reply; the client sends its first /meta/connect (advice
//                timeout 0, answered at once by Bayou and Faye, held forever by the ws floor)
//                and the subscribe right after the handshake reply, as the load tester's
//                driver does
// and the bytes the server sent for the whole open. Medians and p90 per phase.
// usage: node bench/handshake-timeline.mjs [--servers ws-batched,bayou,faye] [--samples 200]
//        [--background 3000] [--in-flight 100]
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { benchFlags } from './flags.mjs';
import { isServerName, SERVERS, startServer } from './lib.mjs';

/** @import { ClientRequest } from 'node:http' */
/** @import { ServerName } from './lib.mjs' */

/**
 * When each phase of one open ended (performance.now() ms); a phase a server skips is absent.
 * @typedef {{ start: number, tcp?: number, upgrade?: number, handshake?: number, subscribe?: number }} Marks
 */
/** @typedef {'tcp' | 'upgrade' | 'handshake' | 'subscribe'} Phase */
/** @typedef {Record<Phase | 'total' | 'bytes', number>} Row */
/** @typedef {Record<Phase | 'total' | 'bytes', { p50: number, p90: number }>} RowStats */

const flags = benchFlags('node bench/handshake-timeline.mjs', {
  servers: 'ws-batched,bayou,faye',
  samples: 200,
  background: 3000,
  inFlight: 100,
});
/** @type {Phase[]} */
const PHASES = ['tcp', 'upgrade', 'handshake', 'subscribe'];

/**
 * Opens one client through subscribe; resolves with its phase times (ms) and bytes received.
 * @param {string} url
 * @returns {Promise<{ marks: Marks, bytes: number, ws: WebSocket }>}
 */
function openOne(url) {
  return new Promise((resolve, reject) => {
    /** @type {Marks} */
    const marks = { start: performance.now() };
    let bytes = 0;
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('open took over 30 s'));
    }, 30_000);
    ws.on('upgrade', (res) => {
      marks.upgrade = performance.now();
      bytes += res.rawHeaders.reduce((n, h) => n + h.length + 2, 0);
    });
    ws.once('open', () => {
      ws.send(
        '[{"channel":"/meta/handshake","version":"1.0","supportedConnectionTypes":["websocket"],"id":"1"}]',
      );
    });
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    ws.on('message', (/** @type {Buffer} */ raw) => {
      bytes += raw.length;
      for (const m of JSON.parse(raw.toString())) {
        if (m.channel === '/meta/handshake') {
          marks.handshake = performance.now();
          const id = m.clientId;
          ws.send(
            `[{"channel":"/meta/connect","clientId":"${id}","connectionType":"websocket","advice":{"timeout":0},"id":"2"}]`,
          );
          ws.send(`[{"channel":"/meta/subscribe","clientId":"${id}","subscription":"/timeline/a","id":"3"}]`);
        } else if (m.channel === '/meta/subscribe') {
          marks.subscribe = performance.now();
        }
      }
      // Done once the subscribe is acknowledged and, where the server answers it, the connect.
      if (marks.subscribe !== undefined) {
        clearTimeout(timer);
        resolve({ marks, bytes, ws });
      }
    });
    // The TCP connect: the ws client's request socket (a private field of ws's client).
    const req = /** @type {{ _req?: ClientRequest }} */ (/** @type {unknown} */ (ws))._req;
    req?.once('socket', (s) => s.once('connect', () => (marks.tcp = performance.now())));
  });
}

/**
 * Each phase's duration, the total and nothing else.
 * @param {{ marks: Marks }} open
 */
function phases({ marks }) {
  const out = { tcp: 0, upgrade: 0, handshake: 0, subscribe: 0, total: 0 };
  let previous = marks.start;
  for (const p of PHASES) {
    out[p] = (marks[p] ?? previous) - previous;
    previous = marks[p] ?? previous;
  }
  out.total = (marks.subscribe ?? previous) - marks.start;
  return out;
}

/** @param {number[]} values */
function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)] ?? Number.NaN, p90: s[Math.floor(s.length * 0.9)] ?? Number.NaN };
}

/**
 * `count` opens one after another.
 * @param {string} url
 * @param {number} count
 */
async function sample(url, count) {
  /** @type {Row[]} */
  const rows = [];
  /** @type {WebSocket[]} */
  const sockets = [];
  for (let i = 0; i < count; i++) {
    const r = await openOne(url);
    rows.push({ ...phases(r), bytes: r.bytes });
    sockets.push(r.ws);
  }
  return { rows, sockets };
}

/**
 * `count` opens, `inFlight` at a time; their sockets go to `sockets`.
 * @param {string} url
 * @param {number} count
 * @param {number} inFlight
 * @param {WebSocket[]} sockets
 */
async function storm(url, count, inFlight, sockets) {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < count) sockets.push((await openOne(url)).ws);
    }),
  );
}

/**
 * @param {Row[]} rows
 * @returns {RowStats}
 */
function summarize(rows) {
  /** @param {keyof Row} key */
  const of = (key) => stats(rows.map((r) => r[key]));
  return {
    tcp: of('tcp'),
    upgrade: of('upgrade'),
    handshake: of('handshake'),
    subscribe: of('subscribe'),
    total: of('total'),
    bytes: of('bytes'),
  };
}

/** @type {{ name: ServerName, idle: RowStats, loaded: RowStats }[]} */
const results = [];
for (const name of flags.servers.split(',').filter(isServerName)) {
  const server = await startServer(name);
  try {
    const idle = await sample(server.url, flags.samples);
    // Under load: sampled clients open one after another while the background herd opens.
    /** @type {WebSocket[]} */
    const background = [];
    const herd = storm(server.url, flags.background, flags.inFlight, background);
    const loaded = await sample(server.url, Math.min(flags.samples, 50));
    await herd;
    results.push({ name, idle: summarize(idle.rows), loaded: summarize(loaded.rows) });
    for (const ws of [...idle.sockets, ...loaded.sockets, ...background]) ws.terminate();
  } finally {
    await server.stop();
  }
}

/** @param {number} v */
const ms = (v) => v.toFixed(2);
console.log(
  `One WebSocket open, phase by phase (client's view; p50 / p90 ms): ${flags.samples} opens one after another on an idle server, then 50 sampled while ${flags.background} other clients open with ${flags.inFlight} in flight.\n`,
);
console.log(`| server | load | ${PHASES.join(' | ')} | total | bytes from server |`);
console.log(`|---|---|${PHASES.map(() => '---|').join('')}---|---|`);
for (const r of results) {
  for (const load of /** @type {const} */ (['idle', 'loaded'])) {
    const s = r[load];
    console.log(
      `| ${SERVERS[r.name].label} | ${load === 'idle' ? 'idle' : `storm of ${flags.background}`} | ${PHASES.map((p) => `${ms(s[p].p50)} / ${ms(s[p].p90)}`).join(' | ')} | ${ms(s.total.p50)} / ${ms(s.total.p90)} | ${s.bytes.p50} |`,
    );
  }
}
