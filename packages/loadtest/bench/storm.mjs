#!/usr/bin/env node
// @ts-check
// Connection storms (issue 14, part 4), as bench rows:
//   storm   — N WebSocket clients opening at once, at most `concurrency` handshakes in flight
//             (the lean WebSocket driver's `connections` scenario with no ramp): handshake +
//             subscribe per second, for the raw ws floor, Bayou and Faye.
//   restart — N real @bayou/client clients (WebSocket, jittered backoff, resubscribe on a new
//             session) connected and subscribed to Bayou; the server process is killed
//             (SIGKILL) and started again on the same port; how long until every client has
//             its subscription back (client events), and until the new server's /metrics
//             `bayou_subscriptions` counts them all. Its clients connect from the loopback
//             aliases of --restart-local-addresses (8 by default, 1,250 clients each, as a
//             herd of real users comes from many addresses); `--restart-local-addresses ''`
//             puts them all on one address, where the server's per-IP handshake limit
//             (1,000/s after a burst of 2,000) paces the herd by design.
// Run alone (`node bench/storm.mjs --help`) or from `pnpm bench` (--storm-clients, --restart-clients).
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAddresses, runScenario } from '../dist/index.js';
import { summarizeRounds } from '../dist/stats.js';
import { benchFlags } from './flags.mjs';
import { isServerName, SERVERS, startServer } from './lib.mjs';

/** @import { ChildProcess } from 'node:child_process' */
/** @import { ClientsReport } from './generators/bayou-clients.mjs' */
/** @import { ServerName } from './lib.mjs' */

const here = dirname(fileURLToPath(import.meta.url));

/** Clients per generator process: well under `ulimit -n` (20,000 here) with the server's own. */
const STORM_PER_WORKER = 5000;
const RESTART_PER_CHILD = 2500;

/**
 * Handshake + subscribe per second with `clients` opening at once, `concurrency` in flight.
 * @param {ServerName} name
 * @param {{ clients: number, concurrency: number, localAddresses: string[], perProcess?: number }} options
 */
export async function measureStorm(
  name,
  { clients, concurrency, localAddresses, perProcess = STORM_PER_WORKER },
) {
  const server = await startServer(name);
  try {
    const workers = Math.max(1, Math.ceil(clients / perProcess));
    const r = await runScenario(
      'connections',
      {
        url: server.url,
        transport: 'websocket',
        clients,
        ramp: 0,
        concurrency: Math.max(1, Math.round(concurrency / workers)),
        hold: 500,
        workers,
        localAddresses,
        metricsUrl: 'off',
        progress: false,
      },
      { protocol: SERVERS[name].protocol },
    );
    return {
      opensPerSec: r.sessions.connectsPerSecond,
      seconds: r.sessions.setupSeconds,
      lost: r.sessions.failed + r.sessions.lost,
    };
  } finally {
    await server.stop();
  }
}

/**
 * The server's `bayou_subscriptions` gauge (NaN when /metrics does not answer).
 * @param {string} metricsUrl
 */
async function subscriptionsOf(metricsUrl) {
  try {
    const text = await (await fetch(metricsUrl)).text();
    const m = /^bayou_subscriptions (\d+(?:\.\d+)?)/m.exec(text);
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * @param {number[]} sorted
 * @param {number} p
 */
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * Bayou restart: `clients` @bayou/client clients connected, the server killed and started
 * again on its port; times (ms) from the kill until every client is resubscribed.
 * @param {{ clients: number, concurrency: number, localAddresses: string[], transports?: string, timeout?: number, perProcess?: number, log?: (text: string) => void }} options
 */
export async function measureRestart({
  clients,
  concurrency,
  localAddresses,
  transports = 'websocket',
  timeout = 60_000,
  perProcess = RESTART_PER_CHILD,
  log = () => {},
}) {
  let server = await startServer('bayou');
  const url = new URL(server.url);
  const metricsUrl = `${url.protocol}//${url.host}/metrics`;
  const nChildren = Math.max(1, Math.ceil(clients / perProcess));
  const per = Math.ceil(clients / nChildren);
  /** @type {ChildProcess[]} */
  const children = [];
  /** @type {number[]} */
  const backTimes = [];
  let failed = 0;
  /** @type {string | undefined} */
  let firstError;
  try {
    /** @type {Promise<Extract<ClientsReport, { type: 'ready' }>>[]} */
    const ready = [];
    /** @type {Promise<void>[]} */
    const armed = [];
    for (let k = 0; k < nChildren; k++) {
      const first = k * per;
      const count = Math.min(per, clients - first);
      const child = fork(
        join(here, 'generators', 'bayou-clients.mjs'),
        [
          server.url,
          String(first),
          String(count),
          String(Math.max(1, Math.round(concurrency / nChildren))),
          transports,
          localAddresses.join(','),
        ],
        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
      );
      children.push(child);
      ready.push(
        new Promise((resolve, reject) => {
          child.once('exit', (code) => reject(new Error(`client process exited with ${code}`)));
          child.on('message', (/** @type {ClientsReport} */ m) => {
            if (m.type === 'ready') resolve(m);
            else if (m.type === 'back') backTimes.push(...m.times);
          });
        }),
      );
      armed.push(
        new Promise((resolve) =>
          child.on('message', (/** @type {ClientsReport} */ m) => m.type === 'armed' && resolve()),
        ),
      );
    }
    const setups = await Promise.all(ready);
    const connected = setups.reduce((n, s) => n + s.connected, 0);
    failed = setups.reduce((n, s) => n + s.failed, 0);
    firstError = setups.find((s) => s.firstError)?.firstError;
    const before = await subscriptionsOf(metricsUrl);
    log(`  restart: ${connected} clients subscribed (server counts ${before}); killing the server`);
    for (const c of children) c.send({ type: 'arm' });
    await Promise.all(armed);
    const killAt = Date.now();
    await server.kill();
    server = await startServer('bayou', [], { BENCH_PORT: url.port });
    const listenAt = Date.now();
    let metricsAt = Number.NaN;
    const deadline = killAt + timeout;
    while (Date.now() < deadline) {
      if (Number.isNaN(metricsAt) && (await subscriptionsOf(metricsUrl)) >= connected) metricsAt = Date.now();
      if (!Number.isNaN(metricsAt) && backTimes.length >= connected) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The last batch of client events may still be on its way.
    await new Promise((r) => setTimeout(r, 200));
    const since = backTimes.map((t) => t - killAt).sort((a, b) => a - b);
    const allBack = since.length >= connected;
    // How the herd came back: resubscriptions per second since the kill.
    /** @type {number[]} */
    const perSecond = [];
    for (const t of since) perSecond[Math.floor(t / 1000)] = (perSecond[Math.floor(t / 1000)] ?? 0) + 1;
    log(
      `  restart: resubscribed per second since the kill: ${Array.from(perSecond, (n) => n ?? 0).join(' ')}`,
    );
    return {
      clients: connected,
      restartMs: listenAt - killAt,
      p50Ms: percentile(since, 50),
      p99Ms: percentile(since, 99),
      allBackMs: allBack ? (since[since.length - 1] ?? Number.NaN) : Number.NaN,
      metricsMs: metricsAt - killAt,
      back: since.length,
      lost: failed + (connected - Math.min(connected, since.length)),
      firstError,
    };
  } finally {
    await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve(undefined);
            c.removeAllListeners('exit');
            c.once('exit', resolve);
            c.send({ type: 'close' });
            setTimeout(() => c.kill('SIGKILL'), 5000).unref();
          }),
      ),
    );
    await server.stop();
  }
}

const STORM_DEFAULTS = {
  rounds: 1,
  clients: 10000,
  concurrency: 100,
  servers: 'ws-batched,bayou,faye',
  restartClients: 10000,
  restartTransports: 'websocket',
  restartTimeout: 60000,
  restartLocalAddresses: '127.0.0.2-127.0.0.9',
  stormPerProcess: STORM_PER_WORKER,
  restartPerProcess: RESTART_PER_CHILD,
  localAddresses: '127.0.0.2-127.0.0.9',
  quick: false,
};

async function main() {
  // --quick: 1,000 clients where no size is given; --clients 0 or --restart-clients 0 skips a part.
  const flags = benchFlags('node bench/storm.mjs', STORM_DEFAULTS, { clients: 1000, restartClients: 1000 });
  const localAddresses = flags.localAddresses ? parseAddresses(flags.localAddresses) : [];
  const { renderStorm } = await import('./table.mjs');
  /** @type {Record<string, object[]>} */
  const results = {};
  /**
   * @param {string} key
   * @param {object} value
   */
  const record = (key, value) => {
    results[key] ??= [];
    results[key].push(value);
  };
  /** @param {string} t */
  const log = (t) => process.stderr.write(`${t}\n`);
  const servers = flags.servers.split(',').filter(isServerName);
  for (let round = 0; round < flags.rounds; round++) {
    log(`round ${round + 1}/${flags.rounds}`);
    if (flags.clients > 0) {
      for (const name of servers.map(
        (_, i) => /** @type {ServerName} */ (servers[(i + round) % servers.length]),
      )) {
        const v = await measureStorm(name, { ...flags, localAddresses, perProcess: flags.stormPerProcess });
        log(`  ${name}/storm: ${JSON.stringify(v)}`);
        record(`${name}/storm`, v);
      }
    }
    if (flags.restartClients > 0) {
      const v = await measureRestart({
        clients: flags.restartClients,
        concurrency: flags.concurrency,
        localAddresses: flags.restartLocalAddresses ? parseAddresses(flags.restartLocalAddresses) : [],
        transports: flags.restartTransports,
        timeout: flags.restartTimeout,
        perProcess: flags.restartPerProcess,
        log,
      });
      log(`  bayou/restart: ${JSON.stringify(v)}`);
      record('bayou/restart', v);
    }
  }
  const summary = summarizeRounds(results);
  console.log(
    renderStorm({
      summary,
      servers,
      flags,
      command: `node bench/storm.mjs ${process.argv.slice(2).join(' ')}`.trim(),
    }).join('\n'),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
