#!/usr/bin/env node
// @ts-check
// The comparison bench (`pnpm bench`): the same chat scenario against Bayou, Faye,
// Socket.IO and two raw-ws floors, each in its own process, interleaved over several rounds;
// long-polling against Bayou, Faye and a raw node:http floor with three generators (the lean
// driver and browser-like standard clients on node:http and on undici), at saturation and at
// a fixed rate; and the
// connection storm and restart rows of storm.mjs. Prints medians with their spread and
// ratios to the floors. See README.md.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseAddresses, runScenario } from '../dist/index.js';
import { summarizeRounds } from '../dist/stats.js';
import { benchFlags } from './flags.mjs';
import { GENERATORS, runWithGenerator } from './generators/run-generator.mjs';
import { cpuSeconds, isServerName, ownCpuSeconds, pinServers, SERVERS, startServer } from './lib.mjs';
import { fullSize, writeReadmeTable } from './readme-table.mjs';
import { measureRestart, measureStorm } from './storm.mjs';
import { renderTables } from './table.mjs';

/** @import { LoadtestOptions, RunResult, Transport } from '../dist/index.js' */
/** @import { ServerName } from './lib.mjs' */

const DEFAULTS = {
  rounds: 3,
  clients: 1000,
  rooms: 100,
  roomsPerClient: 10,
  messageSize: 50,
  outstanding: 5000,
  warmup: 2000,
  measure: 5000,
  rate: 20000,
  latencyDuration: 5000,
  idle: 10000,
  idleRamp: 5000,
  servers: 'ws-batched,ws-frame,bayou,faye,socketio',
  lpServers: 'lp-floor,bayou,faye',
  lpGenerators: 'lean,standard,undici',
  stormClients: 10000,
  stormConcurrency: 100,
  stormServers: 'ws-batched,bayou,faye',
  restartClients: 10000,
  restartLocalAddresses: '127.0.0.2-127.0.0.9',
  localAddresses: '127.0.0.2-127.0.0.9',
  serverCpus: '',
  json: '',
  markdown: '',
  readme: 'auto',
  quick: false,
};
const QUICK = {
  rounds: 1,
  clients: 200,
  rooms: 20,
  roomsPerClient: 10,
  measure: 2000,
  warmup: 500,
  latencyDuration: 2000,
  idle: 1000,
  rate: 5000,
  stormClients: 1000,
  restartClients: 1000,
};

// --quick shrinks every size the command line did not set itself.
const flags = benchFlags('pnpm bench', DEFAULTS, QUICK);
let generatorCpus = '';
if (flags.serverCpus) {
  try {
    generatorCpus = pinServers(flags.serverCpus);
  } catch (error) {
    console.error(/** @type {Error} */ (error).message);
    process.exit(2);
  }
}
const localAddresses = flags.localAddresses ? parseAddresses(flags.localAddresses) : [];
const fanOut = (flags.clients * flags.roomsPerClient) / flags.rooms;
const chatBase = {
  clients: flags.clients,
  rooms: flags.rooms,
  roomsPerClient: flags.roomsPerClient,
  messageSize: flags.messageSize,
  localAddresses,
  metricsUrl: 'off',
  drain: 5000,
  batchSize: 10,
};

/** @param {string} text */
const log = (text) => process.stderr.write(`${text}\n`);
/**
 * Messages lost or duplicated and sessions failed in a run.
 * @param {RunResult} r
 */
const lostIn = (r) => (r.messages.lost ?? 0) + (r.messages.duplicated ?? 0) + r.sessions.failed;

/**
 * Saturation (closed loop) and, over WebSocket, latency at a fixed delivered rate.
 * @param {ServerName} name
 * @param {Transport} transport
 */
async function measureChat(name, transport) {
  const server = await startServer(name);
  const protocol = SERVERS[name].protocol;
  try {
    let cpu0 = 0;
    let cpu1 = 0;
    const sat = await runScenario(
      'chat',
      {
        ...chatBase,
        url: server.url,
        transport,
        maxOutstanding: flags.outstanding,
        duration: flags.measure,
        warmup: flags.warmup,
      },
      {
        protocol,
        onWindow: (event) => {
          if (event === 'open') cpu0 = cpuSeconds(server.pid);
          else cpu1 = cpuSeconds(server.pid);
        },
      },
    );
    /** @type {Record<string, number>} */
    const out = {
      msgPerSec: sat.deliveredPerSecond,
      perFrame: sat.deliveriesPerFrame,
      cpuUsPerMsg: ((cpu1 - cpu0) * 1e6) / Math.max(1, sat.deliveredInWindow),
      lost: lostIn(sat),
    };
    if (transport === 'websocket') {
      const lat = await runScenario(
        'chat',
        {
          ...chatBase,
          url: server.url,
          rate: flags.rate / fanOut,
          duration: flags.latencyDuration,
          warmup: 1000,
        },
        {
          protocol,
          onWindow: (event) => {
            if (event === 'open') cpu0 = cpuSeconds(server.pid);
            else cpu1 = cpuSeconds(server.pid);
          },
        },
      );
      Object.assign(out, {
        p50: lat.latency.p50,
        p99: lat.latency.p99,
        latRate: lat.deliveredPerSecond,
        rateCpuUsPerMsg: ((cpu1 - cpu0) * 1e6) / Math.max(1, lat.deliveredInWindow),
      });
      out.lost = (out.lost ?? 0) + lostIn(lat);
    }
    return out;
  } finally {
    await server.stop();
  }
}

/**
 * Long-polling with one generator (lean, standard or undici): saturation (closed loop), then an open
 * loop at --rate delivered msg/s; server CPU per delivered message over each measured window.
 * @param {ServerName} name
 * @param {string} generator
 */
async function measureLongPolling(name, generator) {
  const server = await startServer(name);
  const cpu = { open: 0, close: 0 };
  // The generator runs in this process (the lean one with --workers 1, the standard ones
  // always): its CPU over the same window shows when it, not the server, sets the pace.
  const gen = { open: { cpu: 0, at: 0 }, close: { cpu: 0, at: 0 } };
  /** @param {'open' | 'close'} event */
  const onWindow = (event) => {
    cpu[event] = cpuSeconds(server.pid);
    gen[event] = { cpu: ownCpuSeconds(), at: performance.now() };
  };
  /** @param {RunResult} r */
  const perMsg = (r) => ((cpu.close - cpu.open) * 1e6) / Math.max(1, r.deliveredInWindow);
  /** @param {RunResult} r */
  const genPerMsg = (r) => ((gen.close.cpu - gen.open.cpu) * 1e6) / Math.max(1, r.deliveredInWindow);
  const genCores = () => ((gen.close.cpu - gen.open.cpu) * 1000) / (gen.close.at - gen.open.at);
  /** @param {RunResult} r */
  const lpLost = (r) => lostIn(r) + r.sessions.lost;
  try {
    /** @type {Partial<LoadtestOptions>} */
    const base = { ...chatBase, url: server.url, transport: 'long-polling', progress: false };
    const sat = await runWithGenerator(
      generator,
      'chat',
      { ...base, maxOutstanding: flags.outstanding, duration: flags.measure, warmup: flags.warmup },
      { protocol: 'bayeux', onWindow },
    );
    const out = {
      msgPerSec: sat.deliveredPerSecond,
      perFrame: sat.deliveriesPerFrame,
      cpuUsPerMsg: perMsg(sat),
      p99: sat.latency.p99,
      genCpuUsPerMsg: genPerMsg(sat),
      genCores: genCores(),
    };
    const lat = await runWithGenerator(
      generator,
      'chat',
      { ...base, rate: flags.rate / fanOut, duration: flags.latencyDuration, warmup: 1000 },
      { protocol: 'bayeux', onWindow },
    );
    Object.assign(out, {
      rateMsgPerSec: lat.deliveredPerSecond,
      rateCpuUsPerMsg: perMsg(lat),
      ratePerFrame: lat.deliveriesPerFrame,
      // What one request/response cycle costs: a server that answers sooner sends fewer
      // messages per response, so its CPU per message rises even when a cycle costs the same.
      rateCpuUsPerResponse: perMsg(lat) * lat.deliveriesPerFrame,
      p50: lat.latency.p50,
      rateP99: lat.latency.p99,
      lost: lpLost(sat) + lpLost(lat),
    });
    return out;
  } finally {
    await server.stop();
  }
}

/**
 * Heap (after forced GCs, over IPC) and RSS per idle, subscribed WebSocket session.
 * @param {ServerName} name
 */
async function measureIdle(name) {
  const server = await startServer(name);
  try {
    const before = await server.memory();
    let after = before;
    const r = await runScenario(
      'connections',
      {
        url: server.url,
        clients: flags.idle,
        ramp: flags.idleRamp,
        hold: 3000,
        localAddresses,
        metricsUrl: 'off',
      },
      {
        protocol: SERVERS[name].protocol,
        onWindow: async (event) => {
          if (event === 'open') after = await server.memory();
        },
      },
    );
    const n = r.sessions.connected;
    return {
      heapPerSession: (after.heapUsed - before.heapUsed) / n,
      rssPerSession: (after.rss - before.rss) / n,
      idleFailed: r.sessions.failed,
    };
  } finally {
    await server.stop();
  }
}

/**
 * Runs one measurement and keeps its figures under `key`; a failure is logged, not thrown.
 * @param {Record<string, object[]>} results
 * @param {string} key
 * @param {() => Promise<object>} fn
 */
async function measure(results, key, fn) {
  try {
    const value = await fn();
    results[key] ??= [];
    results[key].push(value);
    log(
      `  ${key}: ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`,
    );
  } catch (error) {
    log(`  ${key}: FAILED ${/** @type {Error} */ (error).message}`);
  }
}

/**
 * `list` rotated by `by`: the order of the servers changes every round.
 * @template T
 * @param {T[]} list
 * @param {number} by
 * @returns {T[]}
 */
function rotate(list, by) {
  return list.map((_, i) => /** @type {T} */ (list[(i + by) % list.length]));
}

const started = Date.now();
const servers = flags.servers.split(',').filter(isServerName);
const lpServers = flags.lpServers.split(',').filter(isServerName);
const generators = flags.lpGenerators.split(',').filter((g) => g in GENERATORS);
const stormServers = flags.stormServers.split(',').filter(isServerName);
/** @type {Record<string, object[]>} */
const results = {};
for (let round = 0; round < flags.rounds; round++) {
  log(`round ${round + 1}/${flags.rounds}`);
  for (const name of rotate(servers, round)) {
    await measure(results, `${name}/websocket`, () => measureChat(name, 'websocket'));
    if (flags.idle > 0) await measure(results, `${name}/idle`, () => measureIdle(name));
  }
  for (const generator of generators) {
    for (const name of rotate(lpServers, round)) {
      await measure(results, `${name}/long-polling/${generator}`, () => measureLongPolling(name, generator));
    }
  }
  if (flags.stormClients > 0) {
    for (const name of rotate(stormServers, round)) {
      await measure(results, `${name}/storm`, () =>
        measureStorm(name, {
          clients: flags.stormClients,
          concurrency: flags.stormConcurrency,
          localAddresses,
        }),
      );
    }
  }
  if (flags.restartClients > 0) {
    await measure(results, 'bayou/restart', () =>
      measureRestart({
        clients: flags.restartClients,
        concurrency: flags.stormConcurrency,
        localAddresses: flags.restartLocalAddresses ? parseAddresses(flags.restartLocalAddresses) : [],
        log,
      }),
    );
  }
}

const summary = summarizeRounds(results);
const seconds = Math.round((Date.now() - started) / 1000);
const command = `pnpm bench ${process.argv.slice(2).join(' ')}`.trim();
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {}
const pinned = flags.serverCpus
  ? `, servers pinned to CPU ${flags.serverCpus} and the generator to CPU ${generatorCpus}`
  : '';
const machine = `Node ${process.version}, ${cpus().length} CPUs${pinned}, repository at ${commit}`;
const markdown = renderTables({
  summary,
  servers,
  lpServers,
  generators,
  stormServers,
  flags: { ...flags, concurrency: flags.stormConcurrency },
  seconds,
  command,
  fanOut,
  machine,
});
console.log(markdown);
if (flags.markdown) writeFileSync(flags.markdown, `${markdown}\n`);
if (flags.json) {
  writeFileSync(flags.json, `${JSON.stringify({ flags, seconds, command, machine, summary }, null, 2)}\n`);
}
// The root README quotes full-size runs only (--readme true forces it, false never).
const readme = String(flags.readme);
if (readme === 'true' || (readme === 'auto' && fullSize(flags))) {
  log(
    writeReadmeTable({ summary, flags, machine, command })
      ? 'root README: comparison table written'
      : 'root README: markers missing, table not written',
  );
} else if (readme === 'auto') {
  log('root README: not written (a reduced run; full size is every default server, 3 rounds, no --quick)');
}
