#!/usr/bin/env node
// @ts-check
// The SDK's default path (`pnpm bench --only sdk`): real @bayou/client instances in Node
// (ws injected, as the chaos run builds them), spread over --workers generator processes,
// against one Bayou server — the SDK as it ships (acknowledged delivery and recovery on: over
// WebSocket its deliveries travel only in /meta/connect replies, each with a position) beside
// the same clients with both off. The chat scenario of the comparison bench: saturation
// (closed loop), a fixed delivered rate, and that rate through a delay proxy (loopback, a
// round trip of --rtt ms) for what acknowledged delivery costs in latency on a long link.
// Server CPU from /proc over each measured window; variants interleaved over --rounds.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseAddresses, runScenario } from '../dist/index.js';
import { processTreeSample } from '../dist/server-process.js';
import { summarizeRounds } from '../dist/stats.js';
import { startDelayProxy } from './delay-proxy.mjs';
import { benchFlags } from './flags.mjs';
import { cpuSeconds, startServer } from './lib.mjs';
import { renderSdkTable } from './sdk-table.mjs';

/** @import { LoadtestOptions, Protocol, Transport } from '../dist/index.js' */
/** @import { BenchServer } from './lib.mjs' */

const DEFAULTS = {
  rounds: 3,
  clients: 1000,
  rooms: 100,
  roomsPerClient: 10,
  messageSize: 50,
  workers: 3,
  outstanding: 5000,
  warmup: 2000,
  measure: 5000,
  rate: 20000,
  latencyDuration: 5000,
  rtt: 100,
  transports: 'websocket,long-polling',
  servers: 'bayou',
  variants: '',
  localAddresses: '127.0.0.2-127.0.0.9',
  json: '',
  markdown: '',
  quick: false,
};
const QUICK = {
  rounds: 1,
  clients: 200,
  rooms: 20,
  measure: 2000,
  warmup: 1000,
  latencyDuration: 2000,
  rate: 5000,
  workers: 2,
};

// --quick shrinks every size the command line did not set itself.
const flags = benchFlags('pnpm bench --only sdk', DEFAULTS, QUICK);
const fanOut = (flags.clients * flags.roomsPerClient) / flags.rooms;
/** @type {Partial<LoadtestOptions>} */
const chatBase = {
  clients: flags.clients,
  rooms: flags.rooms,
  roomsPerClient: flags.roomsPerClient,
  messageSize: flags.messageSize,
  workers: flags.workers,
  localAddresses: flags.localAddresses ? parseAddresses(flags.localAddresses) : [],
  metricsUrl: 'off',
  progress: false,
  drain: 5000,
  batchSize: 10,
};
/**
 * The SDK variants: the protocol names of the loadtest's @bayou/client drivers.
 * @type {Partial<Record<Protocol, string>>}
 */
const VARIANTS = {
  sdk: 'defaults: ack in numbered frames + recovery',
  'sdk-connect-ack': 'ack in connect replies (CometD way) + recovery',
  'sdk-plain': 'ack + recovery off',
};

/** @param {string} text */
const log = (text) => process.stderr.write(`${text}\n`);

/**
 * CPU of this process and everything under it except the server: the generator workers
 * (and the delay proxy, which runs here).
 * @param {number} serverPid
 */
function generatorCpu(serverPid) {
  return (processTreeSample(process.pid).cpuSeconds ?? 0) - (processTreeSample(serverPid).cpuSeconds ?? 0);
}

/**
 * One chat run with server and generator CPU read at the window's edges.
 * @param {BenchServer} server
 * @param {string} url
 * @param {Protocol} protocol
 * @param {Transport} transport
 * @param {Partial<LoadtestOptions>} load
 */
async function chatRun(server, url, protocol, transport, load) {
  const at = { open: { server: 0, generator: 0 }, close: { server: 0, generator: 0 } };
  const r = await runScenario(
    'chat',
    { ...chatBase, url, transport, ...load },
    {
      protocol,
      onWindow: (event) => {
        at[event] = { server: cpuSeconds(server.pid), generator: generatorCpu(server.pid) };
      },
    },
  );
  const n = Math.max(1, r.deliveredInWindow);
  return {
    msgPerSec: r.deliveredPerSecond,
    // Frames are counted over WebSocket only (the SDK has no per-response hook).
    perFrame: transport === 'websocket' ? r.deliveriesPerFrame : Number.NaN,
    cpuUsPerMsg: ((at.close.server - at.open.server) * 1e6) / n,
    genCpuUsPerMsg: ((at.close.generator - at.open.generator) * 1e6) / n,
    p50: r.latency.p50,
    p99: r.latency.p99,
    // Messages never delivered or delivered twice; clients that failed to connect; and
    // reconnects (a client's link dropped during the run: with ack and recovery it should
    // cost no message).
    lost: (r.messages.lost ?? 0) + (r.messages.duplicated ?? 0) + r.sessions.failed,
    reconnects: r.sessions.lost,
  };
}

/**
 * One variant over one transport: saturation, the fixed rate and (over WebSocket) the fixed
 * rate through the delay proxy.
 * @param {Protocol} protocol
 * @param {Transport} transport
 */
async function measureVariant(protocol, transport, name = 'bayou') {
  // `bayou-baseline`: another build (BAYOU_BASELINE), for a before/after sitting; every
  // transport offered, so that `streaming` can be asked for.
  const server = await startServer(/** @type {'bayou' | 'bayou-baseline'} */ (name), [], {
    BENCH_TRANSPORTS: 'websocket,long-polling,streaming',
  });
  try {
    const saturated = { maxOutstanding: flags.outstanding, duration: flags.measure, warmup: flags.warmup };
    const fixed = { rate: flags.rate / fanOut, duration: flags.latencyDuration, warmup: 1000 };
    const sat = await chatRun(server, server.url, protocol, transport, saturated);
    const rate = await chatRun(server, server.url, protocol, transport, fixed);
    /** @type {Record<string, number>} */
    const out = {
      msgPerSec: sat.msgPerSec,
      perFrame: sat.perFrame,
      cpuUsPerMsg: sat.cpuUsPerMsg,
      genCpuUsPerMsg: sat.genCpuUsPerMsg,
      satP99: sat.p99,
      rateMsgPerSec: rate.msgPerSec,
      ratePerFrame: rate.perFrame,
      rateCpuUsPerMsg: rate.cpuUsPerMsg,
      rateGenCpuUsPerMsg: rate.genCpuUsPerMsg,
      p50: rate.p50,
      p99: rate.p99,
      lost: sat.lost + rate.lost,
      reconnects: sat.reconnects + rate.reconnects,
    };
    if (flags.rtt > 0 && transport === 'websocket') {
      const proxy = await startDelayProxy(server.url, flags.rtt / 2);
      try {
        const far = await chatRun(server, proxy.url, protocol, transport, fixed);
        Object.assign(out, {
          rttMsgPerSec: far.msgPerSec,
          rttPerFrame: far.perFrame,
          rttCpuUsPerMsg: far.cpuUsPerMsg,
          rttP50: far.p50,
          rttP99: far.p99,
        });
        out.lost = (out.lost ?? 0) + far.lost;
        out.reconnects = (out.reconnects ?? 0) + far.reconnects;
      } finally {
        await proxy.close();
      }
    }
    return out;
  } finally {
    await server.stop();
  }
}

const started = Date.now();
/** @type {Transport[]} */
const transports = flags.transports
  .split(',')
  .filter((t) => t === 'websocket' || t === 'long-polling' || t === 'streaming');
const variants = /** @type {Protocol[]} */ (
  Object.keys(VARIANTS).filter((v) => flags.variants === '' || flags.variants.split(',').includes(v))
);
const servers = flags.servers.split(',').filter((s) => s === 'bayou' || s === 'bayou-baseline');
if (servers.includes('bayou-baseline') && !process.env.BAYOU_BASELINE) {
  log('--servers bayou-baseline needs BAYOU_BASELINE=<other build>/packages/server/dist/index.js');
  process.exit(2);
}
/** @type {Record<string, object[]>} */
const results = {};
for (let round = 0; round < flags.rounds; round++) {
  log(`sdk round ${round + 1}/${flags.rounds}`);
  for (const transport of transports) {
    // Rotate which variant (and server) goes first, so none always meets a warmer machine.
    const runs = variants.flatMap((protocol) => servers.map((name) => ({ protocol, name })));
    for (let i = 0; i < runs.length; i++) {
      const { protocol, name } = /** @type {{ protocol: Protocol, name: string }} */ (
        runs[(i + round) % runs.length]
      );
      // The table shows Bayou's rows; another build's are in the log and the JSON.
      const key = name === 'bayou' ? `${protocol}/${transport}` : `${name}:${protocol}/${transport}`;
      try {
        const value = await measureVariant(protocol, transport, name);
        results[key] ??= [];
        results[key].push(value);
        log(
          `  ${key}: ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`,
        );
      } catch (error) {
        log(`  ${key}: FAILED ${/** @type {Error} */ (error).message}`);
      }
    }
  }
}

const summary = summarizeRounds(results);
const seconds = Math.round((Date.now() - started) / 1000);
const command = `pnpm bench --only sdk ${process.argv.slice(2).join(' ')}`.trim();
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {}
const machine = `Node ${process.version}, ${cpus().length} CPUs, repository at ${commit}`;
const markdown = renderSdkTable({
  summary,
  transports,
  variants: Object.fromEntries(variants.map((v) => [v, VARIANTS[v] ?? v])),
  flags,
  fanOut,
  seconds,
  command,
  machine,
});
console.log(markdown);
if (flags.markdown) writeFileSync(flags.markdown, `${markdown}\n`);
if (flags.json) {
  writeFileSync(flags.json, `${JSON.stringify({ flags, seconds, command, machine, summary }, null, 2)}\n`);
}
