#!/usr/bin/env node
// @ts-check
// The heartbeat's CPU, side by side (#36): one server process per row, each with its own
// generator process holding --sessions WebSocket sessions that negotiated the heartbeat
// (@bayou/client's handshake), pinged every --period ms; then --rounds windows of --window
// seconds, each reading every server's CPU (utime + stime, /proc/<pid>/stat) divided by
// sessions and seconds. The servers run as a cluster worker does (--node-args, default the
// workers' `--max-semi-space-size=4`; the workers' malloc settings), so a row is one
// worker's worth of idle sessions; the rows run at once, so a round compares them under the
// same load. Rows: `bayou` (this build) and `bayou-baseline` (BAYOU_BASELINE, another build's
// packages/server/dist/index.js). Loopback only; every process it starts is stopped at the end.
//
//   BAYOU_BASELINE=/path/to/before/packages/server/dist/index.js \
//     node packages/loadtest/bench/heartbeat-cpu.mjs --sessions 17000 --period 30000 --window 60 --rounds 3
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { benchFlags } from './flags.mjs';
import { cpuSplit, isServerName, startServer } from './lib.mjs';

/** @import { ChildProcess } from 'node:child_process' */

const flags = benchFlags(
  'node bench/heartbeat-cpu.mjs',
  {
    sessions: 17000,
    period: 30000,
    window: 60,
    rounds: 3,
    servers: 'bayou,bayou-baseline',
    nodeArgs: '--max-semi-space-size=4',
    quick: false,
  },
  { sessions: 1000, period: 1000, window: 5, rounds: 1 },
);

/** @type {Record<string, string>} the source addresses of each row's generator */
const ADDRESSES = { bayou: '127.0.0.2-127.0.0.5', 'bayou-baseline': '127.0.0.6-127.0.0.9' };
const EXT = JSON.stringify({
  ack: true,
  replay: true,
  bayou: { records: true, compact: true, heartbeat: true, ackFrames: true },
});
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A server and its generator, the sessions opened.
 * @param {string} name
 */
async function start(name) {
  if (!isServerName(name) || !(name in ADDRESSES)) {
    console.error(`--servers: bayou or bayou-baseline, got ${name}`);
    process.exit(2);
  }
  const server = await startServer(name, flags.nodeArgs.split(/\s+/).filter(Boolean), {
    BENCH_TIMEOUT: '300000',
    BENCH_HEARTBEAT_INTERVAL: String(flags.period),
    MALLOC_ARENA_MAX: '1',
    MALLOC_MMAP_THRESHOLD_: '131072',
  });
  /** @type {ChildProcess} */
  const gen = fork(
    new URL('./generators/idle-clients.mjs', import.meta.url).pathname,
    [server.url, ADDRESSES[name] ?? '', EXT],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  /** @type {{ connected: number, failed: number }} */
  const opened = await new Promise((resolve) => {
    /** @param {any} m */
    const on = (m) => {
      if (m?.type === 'opened') resolve(m);
    };
    gen.on('message', on);
    gen.send({ type: 'open', total: flags.sessions });
  });
  console.log(`${name}: ${opened.connected} sessions open (${opened.failed} failed)`);
  return { name, server, gen, sessions: opened.connected };
}

const rows = await Promise.all(flags.servers.split(',').map((s) => start(s.trim())));
// The ramp's own garbage collected and its connects settled before the first window.
await sleep(5000);
console.log(
  `${flags.sessions} heartbeat sessions a server, pinged every ${flags.period} ms; ${flags.rounds} windows of ${flags.window} s; Node ${process.version}, server options ${flags.nodeArgs || '(none)'}`,
);
console.log(`| round | load average after | ${rows.map((r) => `${r.name}, µs/s per session`).join(' | ')} |`);
console.log(`|---|---|${rows.map(() => '---|').join('')}`);
for (let round = 1; round <= flags.rounds; round++) {
  const before = rows.map((r) => cpuSplit(r.server.pid));
  const t0 = performance.now();
  await sleep(flags.window * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const cells = rows.map((r, i) => {
    const a = before[i] ?? { user: 0, system: 0 };
    const b = cpuSplit(r.server.pid);
    const cpu = b.user + b.system - a.user - a.system;
    return ((cpu / seconds / r.sessions) * 1e6).toFixed(3);
  });
  console.log(`| ${round} | ${load()} | ${cells.join(' | ')} |`);
}
for (const r of rows) {
  r.gen.kill();
  await r.server.stop();
}
process.exit(0);
