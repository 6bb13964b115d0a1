// @ts-check
// Renders the streaming bench (streaming.mjs) as Markdown: one table of every row at
// saturation and at the fixed rate, with ratios to Bayou's WebSocket, Bayou's long-polling
// and Faye's EventSource on the same generator, then the issue's targets with the figure
// each one is judged on, all from this sitting.

/** `server/transport/generator`; `browser` is the browser-like generator. */
export const ROWS = [
  'bayou/websocket/lean',
  'bayou/long-polling/lean',
  'bayou/long-polling/browser',
  'bayou/streaming/lean',
  'bayou/streaming/browser',
  'bayou/eventsource/lean',
  'bayou/eventsource/browser',
  'faye/eventsource/lean',
  'faye/eventsource/browser',
];

/** @typedef {{ median: number, spread: number, values: number[] }} Stat */
/** @typedef {Record<string, Record<string, Stat>>} Summary */

/** @type {Record<string, string>} */
const SERVER = { bayou: 'Bayou', 'bayou-baseline': 'Bayou (baseline build)', faye: 'Faye 1.4' };
/** @type {Record<string, string>} */
const TRANSPORT = {
  websocket: 'WebSocket',
  'long-polling': 'long-polling',
  streaming: 'HTTP streaming',
  eventsource: 'EventSource',
};
/** @type {Record<string, string>} */
const GENERATOR = {
  lean: 'lean (raw sockets)',
  browser: 'browser-like (node:http, cookies, Chrome headers)',
};

/** @param {string} row */
function label(row) {
  const [s = '', t = '', g = ''] = row.split('/');
  return `| ${SERVER[s] ?? s} | ${TRANSPORT[t] ?? t} | ${GENERATOR[g] ?? g} |`;
}

/**
 * @param {Stat | undefined} s
 * @param {number} [digits]
 */
function cell(s, digits = 0) {
  if (!s || !Number.isFinite(s.median)) return '–';
  const v = s.median.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
  return `${v} ±${Math.round(s.spread)}%`;
}

/**
 * @param {Stat | undefined} a
 * @param {Stat | undefined} b
 */
function quotient(a, b) {
  return a && b && Number.isFinite(a.median) && b.median ? a.median / b.median : Number.NaN;
}

/** @param {number} q */
const times = (q) => (Number.isFinite(q) ? `${q.toFixed(2)}×` : '–');

/**
 * @param {Summary} summary
 * @param {string} row
 */
function tableRow(summary, row) {
  const r = summary[row];
  const [, transport, generator = 'lean'] = row.split('/');
  const ws = summary['bayou/websocket/lean'];
  const lp = summary[`bayou/long-polling/${generator}`];
  const faye = summary[`faye/eventsource/${generator}`];
  const self = transport === 'websocket' || transport === 'long-polling' ? undefined : r;
  const lost = r ? r.lost?.values.reduce((a, b) => a + b, 0) : '–';
  return (
    `${label(row)} ${cell(r?.msgPerSec)} | ${times(quotient(r?.msgPerSec, lp?.msgPerSec))} | ` +
    `${cell(r?.cpuUsPerMsg, 2)} | ${cell(r?.perFrame, 1)} | ${cell(r?.satP99, 1)} | ${cell(r?.genCores, 2)} | ` +
    `${cell(r?.rateMsgPerSec)} | ${cell(r?.rateCpuUsPerMsg, 2)} | ${times(quotient(r?.rateCpuUsPerMsg, ws?.rateCpuUsPerMsg))} | ` +
    `${times(quotient(r?.rateCpuUsPerMsg, lp?.rateCpuUsPerMsg))} | ${self ? times(quotient(r?.rateCpuUsPerMsg, faye?.rateCpuUsPerMsg)) : '–'} | ` +
    `${cell(r?.ratePerFrame, 1)} | ${cell(r?.p50, 1)} / ${cell(r?.p99, 1)} | ${lost} |`
  );
}

/**
 * The issue's targets, each with the figures it is judged on and PASS / MISS (or – when a
 * row is missing from the sitting).
 * @param {Summary} s
 */
export function targets(s) {
  const q = (/** @type {string} */ a, /** @type {string} */ b, /** @type {string} */ m) =>
    quotient(s[a]?.[m], s[b]?.[m]);
  const verdict = (/** @type {number} */ v, /** @type {(v: number) => boolean} */ ok) =>
    Number.isFinite(v) ? (ok(v) ? 'PASS' : 'MISS') : '–';
  const sb = 'bayou/streaming/browser';
  const sl = 'bayou/streaming/lean';
  const p99 = (/** @type {string} */ row) => s[row]?.p99?.median ?? Number.NaN;
  const lines = [
    [
      'CPU / msg @ rate, streaming (browser-like) ≤ 1.5× Bayou WebSocket',
      q(sb, 'bayou/websocket/lean', 'rateCpuUsPerMsg'),
      1.5,
      '≤',
    ],
    [
      'CPU / msg @ rate, streaming ≤ 0.25× Bayou long-polling (both browser-like)',
      q(sb, 'bayou/long-polling/browser', 'rateCpuUsPerMsg'),
      0.25,
      '≤',
    ],
    [
      'CPU / msg @ rate, streaming ≤ 0.25× Bayou long-polling (both lean)',
      q(sl, 'bayou/long-polling/lean', 'rateCpuUsPerMsg'),
      0.25,
      '≤',
    ],
    [
      'msg/s at saturation, streaming ≥ 3× Bayou long-polling (both browser-like)',
      q(sb, 'bayou/long-polling/browser', 'msgPerSec'),
      3,
      '≥',
    ],
    [
      'msg/s at saturation, streaming ≥ 3× Bayou long-polling (both lean)',
      q(sl, 'bayou/long-polling/lean', 'msgPerSec'),
      3,
      '≥',
    ],
    [
      'CPU / msg @ rate, streaming < Faye EventSource (both browser-like)',
      q(sb, 'faye/eventsource/browser', 'rateCpuUsPerMsg'),
      1,
      '<',
    ],
    [
      'CPU / msg @ rate, streaming < Faye EventSource (both lean)',
      q(sl, 'faye/eventsource/lean', 'rateCpuUsPerMsg'),
      1,
      '<',
    ],
    [
      'CPU / msg at saturation, streaming < Faye EventSource (both lean)',
      q(sl, 'faye/eventsource/lean', 'cpuUsPerMsg'),
      1,
      '<',
    ],
  ];
  /** @type {Record<string, (v: number, limit: number) => boolean>} */
  const test = { '≤': (v, l) => v <= l, '≥': (v, l) => v >= l, '<': (v, l) => v < l };
  const out = lines.map(([what, v, limit, op]) => {
    const value = /** @type {number} */ (v);
    const check = test[/** @type {string} */ (op)] ?? (() => false);
    return `| ${what} | ${times(value)} | ${verdict(value, (x) => check(x, /** @type {number} */ (limit)))} |`;
  });
  const extra = p99(sb) - p99('bayou/websocket/lean');
  out.push(
    `| p99 @ rate, streaming (browser-like) ≤ WebSocket p99 + 5 ms | ${Number.isFinite(extra) ? `${extra >= 0 ? '+' : ''}${extra.toFixed(1)} ms (${p99(sb).toFixed(1)} vs ${p99('bayou/websocket/lean').toFixed(1)})` : '–'} | ${verdict(extra, (x) => x <= 5)} |`,
  );
  return ['| target (#23) | measured in this sitting | |', '|---|---|---|', ...out];
}

/**
 * @param {{ summary: Summary, rows: string[], flags: Record<string, string | number | boolean>, fanOut: number,
 *   seconds: number, command: string, machine: string }} input
 */
export function renderStreamingTables({ summary, rows, flags, fanOut, seconds, command, machine }) {
  const rate = flags.rate;
  const head = [
    `| server | transport | generator | delivered msg/s (sat.) | × Bayou LP | server CPU µs / msg (sat.) | msgs / frame (sat.) | p99 ms (sat.) | generator cores (sat.) | delivered msg/s @ ${rate}/s | server CPU µs / msg @ ${rate}/s | × Bayou WS | × Bayou LP | × Faye ES | msgs / frame @ ${rate}/s | p50 / p99 ms @ ${rate}/s | lost / dup. / failed |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const about =
    `\`${command}\` — ${machine}; ${seconds} s. Chat: ${flags.clients} clients, ${flags.rooms} rooms, ` +
    `${flags.roomsPerClient} per client (fan-out ${fanOut}), ${flags.messageSize}-byte messages, ${flags.rounds} round(s), rows interleaved. ` +
    `Saturation: closed loop, ${flags.outstanding} deliveries outstanding, ${flags.measure} ms measured after ${flags.warmup} ms. ` +
    `Fixed rate: ${rate} delivered msg/s for ${flags.latencyDuration} ms. Server CPU from /proc over each window; the generator runs in the bench process ` +
    '(its cores busy shown: near 1 it, not the server, set the pace). Medians ± half the range. ' +
    "× columns: against the same generator's row (Bayou LP, Faye ES) or Bayou WebSocket (lean).";
  return [
    '## Streaming transports',
    '',
    about,
    '',
    ...head,
    ...rows.map((row) => tableRow(summary, row)),
    '',
    ...targets(summary),
    '',
    'For the root README:',
    '',
    readmeTable(summary, Number(rate)),
  ].join('\n');
}

/**
 * The root README's rows for the fallback transports: one line per server and transport,
 * the browser-like and the lean generator side by side.
 * @param {Summary} s
 * @param {number} rate
 */
export function readmeTable(s, rate) {
  const k = `${Math.round(rate / 1000)}k msg/s`;
  /** @param {Stat | undefined} x @param {number} [digits] */
  const fig = (x, digits = 2) =>
    x && Number.isFinite(x.median)
      ? x.median.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
      : '–';
  /** @param {Stat | undefined} x */
  const kilo = (x) => (x && Number.isFinite(x.median) ? `${Math.round(x.median / 1000)}k` : '–');
  const out = [
    `| server, transport | server CPU µs / msg at ${k} (browser-like / lean) | msg/s at saturation (browser-like / lean) | p50 / p99 at ${k}, browser-like (ms) | lost |`,
    '|---|---|---|---|---|',
  ];
  for (const [server, transport] of [
    ['bayou', 'websocket'],
    ['bayou', 'streaming'],
    ['bayou', 'eventsource'],
    ['bayou', 'long-polling'],
    ['faye', 'eventsource'],
  ]) {
    const b = s[`${server}/${transport}/browser`];
    const l = s[`${server}/${transport}/lean`];
    if (!b && !l) continue;
    const shown = b ?? l;
    const lost = [b, l].reduce((n, r) => n + (r?.lost?.values.reduce((a, v) => a + v, 0) ?? 0), 0);
    out.push(
      `| ${SERVER[server ?? '']} ${TRANSPORT[transport ?? '']} | ${fig(b?.rateCpuUsPerMsg)} / ${fig(l?.rateCpuUsPerMsg)} | ` +
        `${kilo(b?.msgPerSec)} / ${kilo(l?.msgPerSec)} | ${fig(shown?.p50, 1)} / ${fig(shown?.p99, 1)}${b ? '' : ' (lean)'} | ${lost} |`,
    );
  }
  return out.join('\n');
}
