#!/usr/bin/env node
// @ts-check
// The streaming bench (`pnpm bench --only streaming`): the chat scenario of the comparison
// bench (1,000 clients, 100 rooms, 10 each: fan-out 100) against Bayou over WebSocket,
// long-polling, its HTTP streaming and its EventSource transport, and against Faye 1.4's
// EventSource transport — each row with the lean generator (raw sockets) and, where a
// browser would differ, the browser-like one (node:http, cookie jar, Chrome's headers: the
// loadtest's `--client browser` for the streams, the bench's standard client for
// long-polling). Per row: saturation (closed loop) and a fixed delivered rate; server CPU
// from /proc over each measured window, rows interleaved over --rounds, medians. Prints the
// table, the targets with the ratios measured in this sitting, and writes
// --markdown/--json.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseAddresses, runScenario } from '../dist/index.js';
import { median, spread } from '../dist/stats.js';
import { benchFlags } from './flags.mjs';
import { runWithGenerator } from './generators/run-generator.mjs';
import { cpuSeconds, ownCpuSeconds, startServer } from './lib.mjs';
import { ROWS, renderStreamingTables } from './streaming-table.mjs';

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
  rows: ROWS.join(','),
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
};
/** What Bayou's bench server offers here: every transport, so each row meets the same server. */
const BAYOU_TRANSPORTS = 'websocket,long-polling,streaming,eventsource';

const flags = benchFlags('pnpm bench --only streaming', DEFAULTS, QUICK);
const fanOut = (flags.clients * flags.roomsPerClient) / flags.rooms;
const chatBase = {
  clients: flags.clients,
  rooms: flags.rooms,
  roomsPerClient: flags.roomsPerClient,
  messageSize: flags.messageSize,
  localAddresses: flags.localAddresses ? parseAddresses(flags.localAddresses) : [],
  metricsUrl: 'off',
  drain: 5000,
  progress: false,
};
/** @param {string} text */
const log = (text) => process.stderr.write(`${text}\n`);

/** @typedef {Partial<import('../dist/options.js').LoadtestOptions>} ChatOptions */
/** @typedef {import('../dist/result.js').RunResult} RunResult */

/**
 * One run of the chat with a row's generator: `lean` is the loadtest's driver, `browser` its
 * `--client browser` for the streams and the bench's standard client for long-polling.
 * @param {string} url
 * @param {string} transport
 * @param {string} generator
 * @param {ChatOptions} options
 * @param {(event: 'open' | 'close') => void} onWindow
 * @returns {Promise<RunResult>}
 */
function runChat(url, transport, generator, options, onWindow) {
  /** @type {ChatOptions} */
  const partial = {
    ...chatBase,
    ...options,
    url,
    transport: /** @type {import('../dist/options.js').Transport} */ (transport),
  };
  if (generator === 'browser' && transport === 'long-polling')
    return runWithGenerator('standard', 'chat', partial, { protocol: 'bayeux', onWindow });
  if (generator === 'browser') partial.client = 'browser';
  return runScenario('chat', partial, { onWindow });
}

/**
 * A row `server/transport/generator`: saturation, then the fixed rate, on a fresh server.
 * @param {string} row
 */
async function measureRow(row) {
  const [name, transport, generator] = row.split('/');
  const server = await startServer(
    /** @type {'bayou' | 'bayou-baseline' | 'faye'} */ (name),
    [],
    name === 'faye' ? {} : { BENCH_TRANSPORTS: process.env.BENCH_TRANSPORTS ?? BAYOU_TRANSPORTS },
  );
  /** @type {Record<string, { cpu: number, own: number, at: number }>} */
  const at = {};
  /** @param {'open' | 'close'} event */
  const onWindow = (event) => {
    at[event] = { cpu: cpuSeconds(server.pid), own: ownCpuSeconds(), at: performance.now() };
  };
  /** @param {{ deliveredInWindow: number }} r */
  const perMsg = (r) =>
    (((at.close?.cpu ?? 0) - (at.open?.cpu ?? 0)) * 1e6) / Math.max(1, r.deliveredInWindow);
  const genCores = () =>
    (((at.close?.own ?? 0) - (at.open?.own ?? 0)) * 1000) / ((at.close?.at ?? 1) - (at.open?.at ?? 0));
  /** @param {RunResult} r */
  const lostIn = (r) =>
    (r.messages.lost ?? 0) + (r.messages.duplicated ?? 0) + r.sessions.failed + r.sessions.lost;
  try {
    const sat = await runChat(
      server.url,
      transport ?? '',
      generator ?? '',
      { maxOutstanding: flags.outstanding, duration: flags.measure, warmup: flags.warmup },
      onWindow,
    );
    const out = {
      msgPerSec: sat.deliveredPerSecond,
      cpuUsPerMsg: perMsg(sat),
      perFrame: sat.deliveriesPerFrame,
      satP99: sat.latency.p99,
      genCores: genCores(),
    };
    const lat = await runChat(
      server.url,
      transport ?? '',
      generator ?? '',
      { rate: flags.rate / fanOut, duration: flags.latencyDuration, warmup: 1000 },
      onWindow,
    );
    return {
      ...out,
      rateMsgPerSec: lat.deliveredPerSecond,
      rateCpuUsPerMsg: perMsg(lat),
      ratePerFrame: lat.deliveriesPerFrame,
      p50: lat.latency.p50,
      p99: lat.latency.p99,
      rateGenCores: genCores(),
      lost: lostIn(sat) + lostIn(lat),
    };
  } finally {
    await server.stop();
  }
}

/** @type {Record<string, Record<string, number>[]>} */
const results = {};
const rows = flags.rows.split(',').filter((r) => r !== '');
// A Bayou row may also run on another build: `bayou-baseline/<transport>/<generator>`
// (BAYOU_BASELINE=<that build>/packages/server/dist/index.js), for a before/after sitting.
const unknown = rows.filter((r) => !ROWS.includes(r.replace(/^bayou-baseline\//, 'bayou/')));
if (unknown.length > 0) {
  console.error(`--rows: unknown ${unknown.join(', ')}; the rows are ${ROWS.join(', ')}`);
  process.exit(2);
}
const started = Date.now();
for (let round = 0; round < flags.rounds; round++) {
  log(`round ${round + 1}/${flags.rounds}`);
  // Rotated each round, so no row always runs first (or last) in a sitting.
  for (const row of rows.map((_, i) => rows[(i + round) % rows.length] ?? '')) {
    try {
      const value = await measureRow(row);
      results[row] = [...(results[row] ?? []), value];
      log(
        `  ${row}: ${JSON.stringify(value, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`,
      );
    } catch (error) {
      log(`  ${row}: FAILED ${/** @type {Error} */ (error).message}`);
    }
  }
}

/** @type {Record<string, Record<string, { median: number, spread: number, values: number[] }>>} */
const summary = {};
for (const [row, runs] of Object.entries(results)) {
  summary[row] = {};
  for (const metric of Object.keys(runs[0] ?? {})) {
    const values = runs.map((r) => r[metric]).filter((v) => typeof v === 'number');
    summary[row][metric] = { median: median(values), spread: spread(values), values };
  }
}
const seconds = Math.round((Date.now() - started) / 1000);
const command = `pnpm bench --only streaming ${process.argv.slice(2).join(' ')}`.trim();
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {}
const machine = `Node ${process.version}, ${cpus().length} CPUs, repository at ${commit}`;
const markdown = renderStreamingTables({ summary, rows, flags, fanOut, seconds, command, machine });
console.log(markdown);
if (flags.markdown) writeFileSync(flags.markdown, `${markdown}\n`);
if (flags.json)
  writeFileSync(flags.json, `${JSON.stringify({ flags, seconds, command, machine, summary }, null, 2)}\n`);
