// @ts-check
// Renders the bench summary as Markdown tables, with ratios to the floors and to Faye, and
// the issues' targets for Bayou. Every long-polling figure names its generator and load.
import { cpus } from 'node:os';
import { GENERATORS } from './generators/run-generator.mjs';
import { isServerName, SERVERS } from './lib.mjs';

/** @import { RoundsMetric, RoundsSummary } from '../dist/stats.js' */

/**
 * The run's flags the tables read: run.mjs's, with the generators it ran.
 * @typedef {object} TableFlags
 * @property {number} rounds
 * @property {number} clients
 * @property {number} rooms
 * @property {number} roomsPerClient
 * @property {number} messageSize
 * @property {number} outstanding
 * @property {number} measure
 * @property {number} warmup
 * @property {number} rate
 * @property {number} latencyDuration
 * @property {number} idle
 * @property {number} stormClients
 * @property {number} concurrency
 * @property {string} restartLocalAddresses
 * @property {boolean} quick
 * @property {string[]} [generators]
 * @property {number} [cpuCount]
 */
/**
 * What the storm rows read (storm.mjs's flags, or run.mjs's with its storm sizes).
 * @typedef {{ clients: number, concurrency: number, restartTransports: string, restartLocalAddresses: string }} StormFlags
 */

/**
 * A server's label in the tables (the name itself for one the bench does not know).
 * @param {string} name
 */
const labelOf = (name) => (isServerName(name) ? SERVERS[name].label : name);

const FLOOR = 'ws-batched';
const LP_FLOOR = 'lp-floor';
/** The browser-like long-polling generators, which the issue's long-polling targets are about. */
const STANDARD_CLIENTS = ['standard', 'undici'];

/**
 * `median unit ±spread%`, or – when not measured.
 * @param {RoundsMetric | undefined} s
 * @param {number} [digits]
 * @param {string} [unit]
 */
export function cell(s, digits = 0, unit = '') {
  if (!s || !Number.isFinite(s.median)) return '–';
  const value = s.median.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
  return `${value}${unit} ±${Math.round(s.spread ?? 0)}%`;
}

/**
 * `a / b×` of two medians, or – when either is missing.
 * @param {RoundsMetric | undefined} a
 * @param {RoundsMetric | undefined} b
 */
export function ratio(a, b) {
  if (!a || !b || !Number.isFinite(a.median) || !b.median) return '–';
  return `${(a.median / b.median).toFixed(2)}×`;
}

/**
 * The sum over rounds (lost messages), or – when not measured.
 * @param {RoundsMetric | undefined} s
 * @returns {number | '–'}
 */
export const sumOf = (s) => (s ? s.values.reduce((a, b) => a + b, 0) : '–');
/** @param {RoundsMetric | undefined} s */
const kb = (s) => (s ? { ...s, median: s.median / 1024 } : s);

/**
 * @param {RoundsSummary} summary
 * @param {string[]} servers
 */
function wsTable(summary, servers) {
  const floorWs = summary[`${FLOOR}/websocket`];
  const floorIdle = summary[`${FLOOR}/idle`];
  const rows = [
    '| server | WS delivered msg/s (sat.) | × floor | server CPU µs / msg (sat.) | × floor | msgs / frame | CPU µs / msg @ fixed rate | × floor | p50 / p99 ms @ fixed rate | p99 × floor | heap / RSS per idle session | heap × floor | lost |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const name of servers) {
    const ws = summary[`${name}/websocket`];
    const idle = summary[`${name}/idle`];
    const wsLost = sumOf(ws?.lost);
    const lost = ws && wsLost !== '–' ? wsLost + (idle?.idleFailed?.median ?? 0) : '–';
    rows.push(
      `| ${labelOf(name)} | ${cell(ws?.msgPerSec)} | ${ratio(ws?.msgPerSec, floorWs?.msgPerSec)} | ` +
        `${cell(ws?.cpuUsPerMsg, 2)} | ${ratio(ws?.cpuUsPerMsg, floorWs?.cpuUsPerMsg)} | ${cell(ws?.perFrame, 1)} | ` +
        `${cell(ws?.rateCpuUsPerMsg, 2)} | ${ratio(ws?.rateCpuUsPerMsg, floorWs?.rateCpuUsPerMsg)} | ` +
        `${cell(ws?.p50, 1)} / ${cell(ws?.p99, 1)} | ${ratio(ws?.p99, floorWs?.p99)} | ` +
        `${cell(kb(idle?.heapPerSession), 1, ' KB')} / ${cell(kb(idle?.rssPerSession), 1, ' KB')} | ` +
        `${ratio(idle?.heapPerSession, floorIdle?.heapPerSession)} | ${lost} |`,
    );
  }
  return rows;
}

/**
 * Long-polling: one row per server and generator, saturation and fixed rate side by side.
 * @param {RoundsSummary} summary
 * @param {string[]} lpServers
 * @param {string[]} generators
 * @param {number} rate
 */
function lpTable(summary, lpServers, generators, rate) {
  const rows = [
    `| server | generator | delivered msg/s (sat.) | × floor | × Faye | server CPU µs / msg (sat.) | × floor | × Faye | msgs / response (sat.) | p99 ms (sat.) | generator CPU µs / msg (sat.) | generator cores busy (sat.) | delivered msg/s @ ${rate}/s | server CPU µs / msg @ ${rate}/s | × floor | × Faye | msgs / response @ ${rate}/s | CPU µs / response @ ${rate}/s | × floor | p50 / p99 ms @ ${rate}/s | lost |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const gen of generators) {
    const floor = summary[`${LP_FLOOR}/long-polling/${gen}`];
    const faye = summary[`faye/long-polling/${gen}`];
    for (const name of lpServers) {
      const lp = summary[`${name}/long-polling/${gen}`];
      rows.push(
        `| ${labelOf(name)} | ${gen} | ${cell(lp?.msgPerSec)} | ${ratio(lp?.msgPerSec, floor?.msgPerSec)} | ` +
          `${ratio(lp?.msgPerSec, faye?.msgPerSec)} | ${cell(lp?.cpuUsPerMsg, 2)} | ` +
          `${ratio(lp?.cpuUsPerMsg, floor?.cpuUsPerMsg)} | ${ratio(lp?.cpuUsPerMsg, faye?.cpuUsPerMsg)} | ` +
          `${cell(lp?.perFrame, 1)} | ${cell(lp?.p99, 1)} | ${cell(lp?.genCpuUsPerMsg, 2)} | ` +
          `${cell(lp?.genCores, 2)} | ${cell(lp?.rateMsgPerSec)} | ` +
          `${cell(lp?.rateCpuUsPerMsg, 2)} | ${ratio(lp?.rateCpuUsPerMsg, floor?.rateCpuUsPerMsg)} | ` +
          `${ratio(lp?.rateCpuUsPerMsg, faye?.rateCpuUsPerMsg)} | ${cell(lp?.ratePerFrame, 1)} | ` +
          `${cell(lp?.rateCpuUsPerResponse, 1)} | ${ratio(lp?.rateCpuUsPerResponse, floor?.rateCpuUsPerResponse)} | ` +
          `${cell(lp?.p50, 1)} / ${cell(lp?.rateP99, 1)} | ${sumOf(lp?.lost)} |`,
      );
    }
  }
  return rows;
}

/**
 * Connection storm and restart rows.
 * @param {RoundsSummary} summary
 * @param {string[]} servers
 * @param {StormFlags} flags
 * @returns {string[]}
 */
export function stormTables(summary, servers, flags) {
  /** @type {string[]} */
  const rows = [];
  const floor = summary[`${FLOOR}/storm`];
  if (servers.some((s) => summary[`${s}/storm`])) {
    rows.push(
      `Storm: ${flags.clients} WebSocket clients opening at once, ${flags.concurrency} handshakes in flight (lean WebSocket driver); a client counts once its subscribe is acknowledged.`,
      '',
      '| server | handshake + subscribe / s | × ws floor | seconds for all | failed |',
      '|---|---|---|---|---|',
    );
    for (const name of servers) {
      const s = summary[`${name}/storm`];
      if (!s) continue;
      rows.push(
        `| ${labelOf(name)} | ${cell(s.opensPerSec)} | ${ratio(s.opensPerSec, floor?.opensPerSec)} | ` +
          `${cell(s.seconds, 2)} | ${sumOf(s.lost)} |`,
      );
    }
    rows.push('');
  }
  const r = summary['bayou/restart'];
  if (r) {
    rows.push(
      `Restart: ${r.clients?.median} @bayou/client clients (transports ${flags.restartTransports}, default backoff: full jitter 0.5–20 s) subscribed to Bayou from ${flags.restartLocalAddresses ? `the source addresses ${flags.restartLocalAddresses}` : 'one source address (paced by the per-IP handshake limit)'}; the server is killed (SIGKILL) and started again on its port. Times from the kill.`,
      '',
      '| server | clients | server back after | resubscribed p50 | p99 | all | /metrics counts all after | not back |',
      '|---|---|---|---|---|---|---|---|',
      `| Bayou | ${cell(r.clients)} | ${cell(r.restartMs, 0, ' ms')} | ${cell(r.p50Ms, 0, ' ms')} | ${cell(r.p99Ms, 0, ' ms')} | ` +
        `${cell(r.allBackMs, 0, ' ms')} | ${cell(r.metricsMs, 0, ' ms')} | ${sumOf(r.lost)} |`,
      '',
    );
  }
  return rows;
}

/**
 * Storm-only output (node bench/storm.mjs).
 * @param {{ summary: RoundsSummary, servers: string[], flags: StormFlags & { rounds: number }, command: string }} run
 */
export function renderStorm({ summary, servers, flags, command }) {
  return [
    `Command: \`${command}\`. Medians over ${flags.rounds} round(s), ± half the range.`,
    '',
    ...stormTables(summary, servers, flags),
  ];
}

/**
 * Who sets the pace at long-polling saturation, and what the ≥ 2× Faye target would take:
 * the generator's busy cores and CPU per delivered message, and the cores this generator
 * would need to deliver twice what Faye alone on one core delivers at its CPU per message
 * (as measured here; with more messages per response both would cost less per message).
 * @param {(name: string) => Record<string, RoundsMetric> | undefined} lp a server's long-polling row
 * @param {number} cpuCount
 */
function saturationBound(lp, cpuCount) {
  const cores = lp('bayou')?.genCores?.median;
  const genUs = lp('bayou')?.genCpuUsPerMsg?.median;
  const fayeUs = lp('faye')?.cpuUsPerMsg?.median;
  if (
    cores === undefined ||
    genUs === undefined ||
    fayeUs === undefined ||
    ![cores, genUs, fayeUs].every(Number.isFinite)
  )
    return 'generator and Faye figures missing';
  const fayeRate = 1e6 / fayeUs;
  const need = (2 * genUs) / fayeUs;
  return (
    `the generator was busy ${cores.toFixed(2)} cores at ${genUs.toFixed(1)} µs per delivered message against Bayou; ` +
    `Faye alone on one core at its ${fayeUs.toFixed(1)} µs per message would deliver about ` +
    `${Math.round(fayeRate).toLocaleString('en-US')} msg/s, and twice that would take this generator ` +
    `${need.toFixed(1)} cores besides the server's one: this machine has ${cpuCount}`
  );
}

/**
 * Bayou's figures against the issues' targets, each with its verdict.
 * @param {RoundsSummary} summary
 * @param {TableFlags} flags
 */
function targets(summary, flags) {
  /** @param {string} key */
  const g = (key) => summary[key];
  /**
   * @param {RoundsMetric | undefined} x
   * @param {RoundsMetric | undefined} y
   */
  const r = (x, y) => (x && y?.median ? x.median / y.median : Number.NaN);
  // Reduced sizes, or another rate than the target's, say so next to the verdict.
  const caveat = flags.quick ? ' (--quick sizes: an indication only)' : '';
  const rateCaveat =
    flags.rate === 20000 ? '' : ` (the target is at 20,000/s; this run used ${flags.rate}/s)`;
  /**
   * @param {number} v
   * @param {boolean} ok
   */
  const verdict = (v, ok) =>
    Number.isNaN(v) ? '? (not measured)' : ok ? 'met in this run' : 'NOT met in this run';
  /**
   * @param {number} v
   * @param {boolean} ok
   */
  const check = (v, ok) => `${verdict(v, ok)}${Number.isNaN(v) ? '' : caveat}`;
  /**
   * @param {number} v
   * @param {boolean} ok
   */
  const checkRate = (v, ok) => `${check(v, ok)}${Number.isNaN(v) ? '' : rateCaveat}`;
  /** @param {number} v */
  const f2 = (v) => (Number.isNaN(v) ? '–' : `${v.toFixed(2)}×`);
  const ws = g('bayou/websocket');
  const wsFloor = g(`${FLOOR}/websocket`);
  const lines = ['', 'Bayou against the targets (ratios measured in this run):'];
  const out = [];
  const cpu = r(ws?.cpuUsPerMsg, wsFloor?.cpuUsPerMsg);
  const rcpu = r(ws?.rateCpuUsPerMsg, wsFloor?.rateCpuUsPerMsg);
  const p99 = r(ws?.p99, wsFloor?.p99);
  const heap = (g('bayou/idle')?.heapPerSession?.median ?? Number.NaN) / 1024;
  out.push(
    `- CPU per delivered WebSocket message at saturation ${f2(cpu)} the batched floor (issue 14: ≤ 1.0×): ${check(cpu, cpu <= 1.0)}`,
    `- CPU per delivered WebSocket message at a fixed ${flags.rate}/s ${f2(rcpu)} the batched floor (issue 14: ≤ 1.1×): ${checkRate(rcpu, rcpu <= 1.1)}`,
    `- WebSocket p99 at a fixed ${flags.rate}/s ${f2(p99)} the batched floor (issue 14: ≤ 1.1×): ${checkRate(p99, p99 <= 1.1)}`,
    `- V8 heap per idle WebSocket session ${Number.isNaN(heap) ? '–' : `${heap.toFixed(1)} KB`} (target ≤ 4 KB): ${check(heap, heap <= 4)}`,
  );
  // Every browser-like generator of the run is held to the long-polling targets.
  for (const gen of STANDARD_CLIENTS.filter((x) => flags.generators?.includes(x) ?? x === 'standard')) {
    /** @param {string} name */
    const lp = (name) => g(`${name}/long-polling/${gen}`);
    const lpFloor = r(lp('bayou')?.rateCpuUsPerMsg, lp(LP_FLOOR)?.rateCpuUsPerMsg);
    const lpFaye = r(lp('bayou')?.rateCpuUsPerMsg, lp('faye')?.rateCpuUsPerMsg);
    const floorFaye = r(lp(LP_FLOOR)?.rateCpuUsPerMsg, lp('faye')?.rateCpuUsPerMsg);
    const lpCycle = r(lp('bayou')?.rateCpuUsPerResponse, lp(LP_FLOOR)?.rateCpuUsPerResponse);
    const lpSat = r(lp('bayou')?.msgPerSec, lp('faye')?.msgPerSec);
    out.push(
      `- long-polling (${gen} generator) CPU per delivered message at a fixed ${flags.rate}/s ${f2(lpFloor)} the raw floor (issue 14: ≤ 1.3×): ${checkRate(lpFloor, lpFloor <= 1.3)}`,
      `  (per request/response cycle: ${f2(lpCycle)} the floor's, at ${lp('bayou')?.ratePerFrame?.median?.toFixed(1) ?? '–'} messages per response against the floor's ${lp(LP_FLOOR)?.ratePerFrame?.median?.toFixed(1) ?? '–'}; not a target, but a server that answers sooner sends fewer messages per response)`,
      `- long-polling (${gen} generator) CPU per delivered message at a fixed ${flags.rate}/s ${f2(lpFaye)} Faye's (issue 14: ≤ 0.6×): ${checkRate(lpFaye, lpFaye <= 0.6)}`,
      `  (the raw floor itself: ${f2(floorFaye)} Faye's)`,
      `- long-polling (${gen} generator) delivered msg/s at saturation ${f2(lpSat)} Faye's (issue 14: ≥ 2×): ${check(lpSat, lpSat >= 2)}`,
      `  (${saturationBound(lp, flags.cpuCount ?? cpus().length)})`,
    );
  }
  const lpLean = r(g('bayou/long-polling/lean')?.msgPerSec, g('faye/long-polling/lean')?.msgPerSec);
  out.push(
    `- long-polling (lean generator) delivered msg/s at saturation ${f2(lpLean)} Faye's (earlier target ≥ 2×): ${check(lpLean, lpLean >= 2)}`,
  );
  const storm = r(g('bayou/storm')?.opensPerSec, g(`${FLOOR}/storm`)?.opensPerSec);
  out.push(
    `- handshake + subscribe per second in a storm ${f2(storm)} the ws floor's (issue 14: ≥ 0.75×): ${check(storm, storm >= 0.75)}`,
  );
  const restart = g('bayou/restart');
  if (restart) {
    const n = restart.clients?.median ?? Number.NaN;
    const all = restart.allBackMs?.median ?? Number.NaN;
    const note = n < 10000 ? ` — with ${n} clients; the target is for 10,000` : '';
    out.push(
      `- all clients resubscribed ${Number.isFinite(all) ? `${(all / 1000).toFixed(1)} s` : 'never (timeout)'} after a restart (issue 14: ≤ 10 s for 10,000)${note}: ${check(n < 10000 ? Number.NaN : all, all <= 10000)}`,
    );
  } else
    out.push(`- 10,000 clients resubscribed ≤ 10 s after a restart (issue 14): ${check(Number.NaN, false)}`);
  const lost = Object.entries(summary)
    .filter(([k]) => k.startsWith('bayou/'))
    .reduce((n, [, v]) => n + (v.lost?.values.reduce((a, x) => a + x, 0) ?? 0), 0);
  out.push(`- messages lost or duplicated, sessions failed: ${lost} (target 0): ${check(lost, lost === 0)}`);
  lines.push(...out);
  lines.push(
    '',
    "A target counts as met only from a full-size run (no --quick) in a quiet sitting: nothing else on the machine. 'met in this run' from a busy machine or reduced sizes is an indication, not a result.",
  );
  return lines;
}

/**
 * The whole comparison bench as Markdown.
 * @param {{ summary: RoundsSummary, servers: string[], lpServers: string[], generators: string[], stormServers: string[], flags: TableFlags, seconds: number, command: string, fanOut: number, machine: string }} run
 */
export function renderTables({
  summary,
  servers,
  lpServers,
  generators,
  stormServers,
  flags,
  seconds,
  command,
  fanOut,
  machine,
}) {
  return [
    `Command: \`${command}\` — ${flags.rounds} interleaved round(s), ${seconds} s in all; ${machine}. Medians, ± half the range.`,
    `Chat: ${flags.clients} clients, ${flags.rooms} rooms, ${flags.roomsPerClient} rooms each (fan-out ≈ ${fanOut}), ` +
      `${flags.messageSize}-character messages; saturation = closed loop ≤ ${flags.outstanding} outstanding, ` +
      `${flags.measure / 1000} s measured after ${flags.warmup / 1000} s warm-up; fixed rate = open loop at ` +
      `${flags.rate} delivered msg/s for ${flags.latencyDuration / 1000} s after 1 s; idle = ${flags.idle} subscribed WebSocket sessions. ` +
      'Server CPU is the server process’s utime + stime from /proc over the measured window, divided by the deliveries in it.',
    '',
    ...wsTable(summary, servers),
    '',
    `Long-polling generators: ${generators.map((g) => `${g} = ${Object.hasOwn(GENERATORS, g) ? GENERATORS[/** @type {keyof typeof GENERATORS} */ (g)] : g}`).join('; ')}. Ratios compare rows of the same generator.`,
    '',
    ...lpTable(summary, lpServers, generators, flags.rate),
    '',
    ...stormTables(summary, stormServers, {
      ...flags,
      clients: flags.stormClients,
      restartTransports: 'websocket',
    }),
    ...targets(summary, { ...flags, generators }),
  ].join('\n');
}
