// @ts-check
// The SDK section's Markdown: one row per @bayou/client variant and transport, saturation,
// the fixed rate and (over WebSocket) the fixed rate through the delay proxy, each with
// its ratio to the same clients without ack and recovery, then what ack costs against the
// issue's thresholds (1.5× the CPU, one round trip of latency).
import { cell, ratio, sumOf } from './table.mjs';

/** @import { RoundsMetric, RoundsSummary } from '../dist/stats.js' */

/**
 * The flags of sdk.mjs the section reads.
 * @typedef {{ rounds: number, clients: number, workers: number, rooms: number, roomsPerClient: number, messageSize: number, outstanding: number, measure: number, warmup: number, rate: number, latencyDuration: number, rtt: number }} SdkFlags
 */

const PLAIN = 'sdk-plain';

/**
 * @param {number} rate
 * @param {number} rtt
 * @param {boolean} withRtt
 */
function header(rate, rtt, withRtt) {
  const cols = [
    'client',
    'transport',
    'delivered msg/s (sat.)',
    'server CPU µs / msg (sat.)',
    '× plain',
    'client CPU µs / msg (sat.)',
    'msgs / frame (sat.)',
    'p99 ms (sat.)',
    `delivered msg/s @ ${rate}/s`,
    `server CPU µs / msg @ ${rate}/s`,
    '× plain',
    `msgs / frame @ ${rate}/s`,
    `p50 / p99 ms @ ${rate}/s`,
  ];
  if (withRtt) cols.push(`p50 / p99 ms @ ${rate}/s, ${rtt} ms RTT`, `+ p50 / p99 vs plain, ${rtt} ms RTT`);
  cols.push('lost / dup. / failed', 'reconnects');
  return [`| ${cols.join(' | ')} |`, `|${cols.map(() => '---').join('|')}|`];
}

/**
 * `a − b` of two medians, in ms, signed.
 * @param {RoundsMetric | undefined} a
 * @param {RoundsMetric | undefined} b
 */
function added(a, b) {
  if (!a || !b || !Number.isFinite(a.median) || !Number.isFinite(b.median)) return '–';
  const d = a.median - b.median;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(1)}`;
}

/**
 * @param {RoundsSummary} summary
 * @param {string} protocol
 * @param {string} transport
 * @param {string} label
 * @param {boolean} withRtt
 */
function row(summary, protocol, transport, label, withRtt) {
  const s = summary[`${protocol}/${transport}`];
  const p = summary[`${PLAIN}/${transport}`];
  const cells = [
    label,
    transport,
    cell(s?.msgPerSec),
    cell(s?.cpuUsPerMsg, 2),
    ratio(s?.cpuUsPerMsg, p?.cpuUsPerMsg),
    cell(s?.genCpuUsPerMsg, 2),
    cell(s?.perFrame, 1),
    cell(s?.satP99, 1),
    cell(s?.rateMsgPerSec),
    cell(s?.rateCpuUsPerMsg, 2),
    ratio(s?.rateCpuUsPerMsg, p?.rateCpuUsPerMsg),
    cell(s?.ratePerFrame, 1),
    `${cell(s?.p50, 1)} / ${cell(s?.p99, 1)}`,
  ];
  if (withRtt) {
    cells.push(
      transport === 'websocket' ? `${cell(s?.rttP50, 1)} / ${cell(s?.rttP99, 1)}` : '–',
      transport === 'websocket' && protocol !== PLAIN
        ? `${added(s?.rttP50, p?.rttP50)} / ${added(s?.rttP99, p?.rttP99)}`
        : '–',
    );
  }
  cells.push(String(sumOf(s?.lost)), String(sumOf(s?.reconnects)));
  return `| ${cells.join(' | ')} |`;
}

/**
 * What ack costs over WebSocket at the fixed rate, against the two thresholds.
 * @param {RoundsSummary} summary
 * @param {SdkFlags} flags
 * @param {Record<string, string>} variants
 */
function verdict(summary, flags, variants) {
  const p = summary[`${PLAIN}/websocket`];
  const lines = [];
  for (const [protocol, label] of Object.entries(variants)) {
    const s = summary[`${protocol}/websocket`];
    if (protocol === PLAIN || !s || !p) continue;
    const cpu = (s.rateCpuUsPerMsg?.median ?? Number.NaN) / (p.rateCpuUsPerMsg?.median ?? Number.NaN);
    let line =
      `${label}, over WebSocket at ${flags.rate} delivered msg/s: ${cpu.toFixed(2)}× the server CPU per ` +
      `delivered message of the clients without ack and recovery (threshold 1.5×: ${cpu > 1.5 ? 'above' : 'within'})`;
    if (flags.rtt > 0 && s.rttP50 && p.rttP50 && s.rttP99 && p.rttP99) {
      const d50 = s.rttP50.median - p.rttP50.median;
      const d99 = s.rttP99.median - p.rttP99.median;
      const over = d50 > flags.rtt || d99 > flags.rtt;
      line +=
        `; through the delay proxy (${flags.rtt} ms round trip) ack adds ${d50.toFixed(1)} ms at p50 and ` +
        `${d99.toFixed(1)} ms at p99 (threshold one round trip, ${flags.rtt} ms: ${over ? 'above' : 'within'})`;
    }
    lines.push(`${line}.`);
  }
  return lines;
}

/**
 * @param {{ summary: RoundsSummary, transports: string[], variants: Record<string, string>, flags: SdkFlags, fanOut: number, seconds: number, command: string, machine: string }} run
 */
export function renderSdkTable({ summary, transports, variants, flags, fanOut, seconds, command, machine }) {
  const withRtt = flags.rtt > 0 && transports.includes('websocket');
  const rows = header(flags.rate, flags.rtt, withRtt);
  for (const transport of transports) {
    for (const [protocol, label] of Object.entries(variants)) {
      rows.push(row(summary, protocol, transport, `@bayou/client, ${label}`, withRtt));
    }
  }
  return [
    `### The SDK's default path (${flags.rounds} round${flags.rounds === 1 ? '' : 's'}, ${seconds} s)`,
    '',
    `\`${command}\` — ${machine}. Chat scenario: ${flags.clients} real @bayou/client instances ` +
      `(ws injected) over ${flags.workers} generator processes, ${flags.rooms} rooms, ${flags.roomsPerClient} ` +
      `rooms per client (fan-out ${fanOut}), ${flags.messageSize}-byte messages, one Bayou server ` +
      `(memory engine, history on). Saturation: closed loop, ${flags.outstanding} deliveries outstanding, ` +
      `${flags.measure} ms measured after ${flags.warmup} ms. Fixed rate: ${flags.rate} delivered msg/s for ` +
      `${flags.latencyDuration} ms; the RTT column runs it through a loopback TCP proxy holding every chunk ` +
      `${flags.rtt / 2} ms each way. Server CPU from /proc over the window; client CPU is the generator ` +
      `processes' (on the same 2 cores). Medians ± half the range; ratios side by side in this run.`,
    '',
    ...rows,
    '',
    ...verdict(summary, flags, variants),
  ].join('\n');
}
