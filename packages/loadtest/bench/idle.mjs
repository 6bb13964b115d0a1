#!/usr/bin/env node
// @ts-check
// The idle bench (`pnpm bench --only idle`, part `idle` of `pnpm bench`): what an idle
// WebSocket session costs a server — handshaken, its connect held, subscribed to one
// channel — next to a bare `ws` server holding the same sockets. Every server of --servers
// runs in its own process with its own generator process (bench/generators/idle-clients.mjs),
// all side by side: the sessions are opened in four steps and each process's heap (after
// two forced GCs) and RSS are read after each (marginal: the least-squares slope over the
// last three; all-in: everything over the sessions). The kernel's memory for the server's sockets is read from
// `ss -tm` (their buffers) and /proc/net/sockstat (the machine's TCP pages, both ends and
// whatever else runs); then every session is held --period ms and the CPU each server and
// each generator spent meanwhile (utime + stime from /proc/<pid>/stat) is divided by sessions
// and seconds. Bayou's rows hold a connect --period ms (its `timeout`): a session opened
// during the ramp has its held connect answered, and a new one sent, exactly once in that
// window (the ramp being shorter than the period); a session that negotiated the heartbeat
// is pinged every --period ms instead (`heartbeatInterval`), once in the window, and its
// connect, held `heartbeatTimeout` (300 s), not at all. The default 15 s keeps the bench
// short and counts that keep-alive twice as often as Bayou's default 30 s does;
// `--period 30000` measures the defaults.
import { execFileSync, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { benchFlags } from './flags.mjs';
import { cpuSplit, isServerName, SERVERS, startServer } from './lib.mjs';

/** @import { ChildProcess } from 'node:child_process' */
/** @import { BenchServer, ServerName } from './lib.mjs' */

const DEFAULTS = {
  sessions: 10000,
  period: 15000,
  servers: 'ws-batched,bayou,bayou+client',
  localAddresses: '127.0.0.2-127.0.0.9',
  json: '',
  quick: false,
};
const flags = benchFlags('pnpm bench --only idle', DEFAULTS, { sessions: 1000, period: 5000 });

/**
 * A row of the bench: a server, and the handshake `ext` its clients send.
 * @typedef {{ key: string, server: ServerName, ext: string, label: string }} Row
 */

/** Rows beyond the servers' own names: a server with what its clients ask for. */
const VARIANTS = /** @type {Record<string, Omit<Row, 'key'>>} */ ({
  'bayou+heartbeat': {
    server: 'bayou',
    ext: JSON.stringify({ bayou: { heartbeat: true } }),
    label: 'Bayou, heartbeat negotiated',
  },
  // What @bayou/client's handshake asks by default (packages/browser-client/src/session.ts,
  // ack.ts, recovery.ts): numbered frames with acknowledgements, replay, records, the heartbeat.
  'bayou+client': {
    server: 'bayou',
    ext: JSON.stringify({
      ack: true,
      replay: true,
      bayou: { records: true, compact: true, heartbeat: true, ackFrames: true },
    }),
    label: "Bayou, @bayou/client's handshake (heartbeat, numbered frames, replay)",
  },
});
// The same handshake on the baseline build (BAYOU_BASELINE), for a before/after in one sitting.
VARIANTS['bayou-baseline+client'] = {
  .../** @type {Omit<Row, 'key'>} */ (VARIANTS['bayou+client']),
  server: 'bayou-baseline',
  label: "Bayou baseline build, @bayou/client's handshake",
};

/**
 * @param {string} key
 * @returns {Row | null}
 */
function rowOf(key) {
  const variant = VARIANTS[key];
  if (variant) return { key, ...variant };
  if (!isServerName(key)) return null;
  return { key, server: key, ext: '', label: SERVERS[key].label };
}

/** @param {string} text */
const log = (text) => process.stderr.write(`${text}\n`);
/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The machine's TCP sockets and pages from /proc/net/sockstat. */
function sockstat() {
  const text = readFileSync('/proc/net/sockstat', 'utf8');
  const tcp = /TCP: inuse (\d+) orphan \d+ tw \d+ alloc (\d+) mem (\d+)/.exec(text);
  const used = /sockets: used (\d+)/.exec(text);
  return { used: Number(used?.[1] ?? 0), inuse: Number(tcp?.[1] ?? 0), pages: Number(tcp?.[3] ?? 0) };
}

/**
 * Bytes the kernel holds for the established sockets on local `port` (the server's side):
 * receive queue, send queue and forward allocation of each (`ss -tm` skmem r, w, f).
 * @param {number} port
 * @returns {{ sockets: number, bytes: number }}
 */
function serverSocketMemory(port) {
  let out = '';
  try {
    out = execFileSync('ss', ['-tmnH', 'state', 'established', `( sport = :${port} )`], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch {
    return { sockets: Number.NaN, bytes: Number.NaN };
  }
  let sockets = 0;
  let bytes = 0;
  for (const m of out.matchAll(/skmem:\(r(\d+),rb\d+,t\d+,tb\d+,f(\d+),w(\d+)/g)) {
    sockets++;
    bytes += Number(m[1]) + Number(m[2]) + Number(m[3]);
  }
  return { sockets, bytes };
}

/**
 * Bytes of the kernel objects one TCP socket holds open in a process (its sock, inode, file,
 * dentry and epoll entries), from /proc/slabinfo's object sizes; NaN where it is unreadable.
 */
function slabPerSocket() {
  try {
    const text = readFileSync('/proc/slabinfo', 'utf8');
    /** @param {string} name */
    const size = (name) => Number(new RegExp(`^${name}\\s+\\d+\\s+\\d+\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return ['TCP', 'sock_inode_cache', 'filp', 'dentry', 'eventpoll_epi', 'eventpoll_pwq']
      .map(size)
      .reduce((a, b) => a + b, 0);
  } catch {
    return Number.NaN;
  }
}

/**
 * The generator process for `row` on `url`, once it says it is ready.
 * @param {Row} row
 * @param {string} url
 * @returns {Promise<ChildProcess>}
 */
function startGenerator(row, url) {
  const child = fork(
    new URL('./generators/idle-clients.mjs', import.meta.url).pathname,
    [url, flags.localAddresses, row.ext],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${row.key}: generator exited with ${code}`)));
    child.once('message', () => resolve(child));
  });
}

/**
 * Sends `message` to `child` and resolves with its first answer of `type`.
 * @param {ChildProcess} child
 * @param {object} message
 * @param {string} type
 * @returns {Promise<{ connected: number, failed: number }>}
 */
function ask(child, message, type) {
  return new Promise((resolve) => {
    /** @param {any} m */
    const on = (m) => {
      if (m?.type !== type) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    child.send(message);
  });
}

/**
 * One row up to its held window: server and generator started, then the sessions opened in
 * four steps (a quarter of --sessions each), the server's memory read after each.
 * @param {Row} row
 */
async function prepare(row) {
  const period = String(flags.period);
  const server = await startServer(row.server, [], {
    BENCH_TIMEOUT: period,
    ...(row.ext ? { BENCH_HEARTBEAT_INTERVAL: period } : {}),
  });
  const gen = await startGenerator(row, server.url);
  const empty = await server.memory();
  /** @type {{ sessions: number, rss: number, heapUsed: number }[]} */
  const steps = [];
  let opened = { connected: 0, failed: 0 };
  for (let step = 1; step <= 4; step++) {
    opened = await ask(gen, { type: 'open', total: Math.round((flags.sessions * step) / 4) }, 'opened');
    await sleep(300);
    steps.push({ sessions: opened.connected, ...(await server.memory()) });
  }
  const kernel = serverSocketMemory(Number(new URL(server.url).port));
  log(`  ${row.key}: ${opened.connected} sessions open (${opened.failed} failed)`);
  const atFull = /** @type {{ sessions: number, rss: number, heapUsed: number }} */ (steps[3]);
  return { row, server, gen, empty, steps, full: opened.connected, atFull, kernel, failed: opened.failed };
}

/**
 * Bytes per session: the least-squares slope of `key` over the last three steps (from a
 * quarter of the sessions on: the first quarter also pays for the process's own growth).
 * RSS grows by whole heap pages, so one pair of readings can be off by a page or two.
 * @param {{ sessions: number, rss: number, heapUsed: number }[]} steps
 * @param {'rss' | 'heapUsed'} key
 */
function slope(steps, key) {
  const points = steps.slice(1);
  const mx = points.reduce((a, p) => a + p.sessions, 0) / points.length;
  const my = points.reduce((a, p) => a + p[key], 0) / points.length;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.sessions - mx) * (p[key] - my);
    den += (p.sessions - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/**
 * @param {BenchServer} server
 * @param {ChildProcess} gen
 */
function cpuOf(server, gen) {
  const s = cpuSplit(server.pid);
  const g = cpuSplit(/** @type {number} */ (gen.pid));
  return { server: s.user + s.system, serverSystem: s.system, gen: g.user + g.system };
}

const rows = flags.servers.split(',').map((k) => {
  const row = rowOf(k.trim());
  if (row === null) {
    log(
      `--servers: unknown ${k} (servers: ${Object.keys(SERVERS).join(', ')}; ${Object.keys(VARIANTS).join(', ')})`,
    );
    process.exit(2);
  }
  return row;
});
const started = Date.now();
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadBefore = load();
const sock0 = sockstat();
const prepared = await Promise.all(rows.map(prepare));
const sock1 = sockstat();
// The held window, the same for every row: each server's and each generator's CPU over it.
const cpu0 = prepared.map((p) => cpuOf(p.server, p.gen));
const t0 = performance.now();
await sleep(flags.period);
const seconds = (performance.now() - t0) / 1000;
const cpu1 = prepared.map((p) => cpuOf(p.server, p.gen));
const held = await Promise.all(prepared.map((p) => ask(p.gen, { type: 'count' }, 'count')));
await Promise.all(
  prepared.map(async (p) => {
    p.gen.kill('SIGTERM');
    await p.server.stop();
  }),
);

const slab = slabPerSocket();
const results = prepared.map((p, i) => {
  const n = p.full;
  const c0 = /** @type {ReturnType<typeof cpuOf>} */ (cpu0[i]);
  const c1 = /** @type {ReturnType<typeof cpuOf>} */ (cpu1[i]);
  return {
    key: p.row.key,
    label: p.row.label,
    sessions: n,
    failed: p.failed,
    lost: n - (held[i]?.connected ?? 0),
    rssMarginal: slope(p.steps, 'rss'),
    rssAllIn: p.atFull.rss / n,
    rssFromEmpty: (p.atFull.rss - p.empty.rss) / n,
    heapMarginal: slope(p.steps, 'heapUsed'),
    heapFromEmpty: (p.atFull.heapUsed - p.empty.heapUsed) / n,
    kernelBuffers: p.kernel.bytes / Math.max(1, p.kernel.sockets),
    kernelSockets: p.kernel.sockets,
    serverCpuUsPerConnSec: ((c1.server - c0.server) * 1e6) / (n * seconds),
    serverSystemUsPerConnSec: ((c1.serverSystem - c0.serverSystem) * 1e6) / (n * seconds),
    genCpuUsPerConnSec: ((c1.gen - c0.gen) * 1e6) / (n * seconds),
    rssTotal: p.atFull.rss,
    rssEmpty: p.empty.rss,
    steps: p.steps,
    heapEmpty: p.empty.heapUsed,
  };
});
const floor = results.find((r) => r.key.startsWith('ws-'));
const kb = (/** @type {number} */ b) => (Number.isNaN(b) ? '–' : `${(b / 1024).toFixed(2)} KB`);
const us = (/** @type {number} */ v) => `${v.toFixed(3)} µs/s`;
const x = (/** @type {number} */ v, /** @type {number | undefined} */ f) =>
  f === undefined || f === 0 || v === f ? '' : ` (${(v / f).toFixed(2)}x)`;
const total = sessionsTotal();
function sessionsTotal() {
  return results.reduce((a, r) => a + r.sessions, 0);
}
const lines = [
  `Idle sessions: ${flags.sessions.toLocaleString('en-US')} per server (handshake, first connect, one subscription), held ${seconds.toFixed(1)} s (Bayou's connects held ${flags.period / 1000} s); every server and generator in its own process, side by side. Load average ${loadBefore} before, ${load()} after; ${cpus().length} CPUs, Node ${process.version}.`,
  '',
  '| server | RSS / session (marginal) | RSS / session (all-in) | heap / session (marginal) | kernel buffers / socket | idle server CPU / connection | idle generator CPU / connection | failed / lost |',
  '|---|---|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.label} | ${kb(r.rssMarginal)}${x(r.rssMarginal, floor?.rssMarginal)} | ${kb(r.rssAllIn)}${x(r.rssAllIn, floor?.rssAllIn)} | ${kb(r.heapMarginal)}${x(r.heapMarginal, floor?.heapMarginal)} | ${r.kernelBuffers.toFixed(0)} B | ${us(r.serverCpuUsPerConnSec)} | ${us(r.genCpuUsPerConnSec)} | ${r.failed} / ${r.lost} |`,
  ),
  '',
  `Kernel: /proc/net/sockstat TCP ${sock0.inuse} → ${sock1.inuse} sockets in use, ${sock0.pages} → ${sock1.pages} pages (${kb(((sock1.pages - sock0.pages) * 4096) / Math.max(1, 2 * total))} per socket over both ends, the whole machine's); each socket's kernel objects (sock, inode, file, dentry, epoll) ${Number.isNaN(slab) ? 'unreadable (/proc/slabinfo needs root)' : `${kb(slab)} of slab`}, not in any RSS.`,
];
console.log(lines.join('\n'));
if (flags.json) {
  writeFileSync(
    flags.json,
    `${JSON.stringify({ flags, seconds, loadBefore, loadAfter: load(), sockstat: [sock0, sock1], slabPerSocket: slab, results, elapsed: (Date.now() - started) / 1000 }, null, 2)}\n`,
  );
}
log(`idle bench: ${((Date.now() - started) / 1000).toFixed(0)} s`);
