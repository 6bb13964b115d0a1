// Renders the bench summary as Markdown tables, with ratios to the batched floor and the
// issue's targets for Bayou.
import { SERVERS } from './lib.mjs';

const FLOOR = 'ws-batched';

function cell(s, digits = 0, unit = '') {
  if (!s || !Number.isFinite(s.median)) return '–';
  const value = s.median.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
  return `${value}${unit} ±${Math.round(s.spread)}%`;
}

function ratio(a, b) {
  if (!a || !b || !Number.isFinite(a.median) || !b.median) return '–';
  return `${(a.median / b.median).toFixed(2)}×`;
}

const kb = (s) => (s ? { ...s, median: s.median / 1024 } : s);

function wsTable(summary, servers) {
  const floorWs = summary[`${FLOOR}/websocket`];
  const floorIdle = summary[`${FLOOR}/idle`];
  const rows = [
    '| server | WS delivered msg/s (sat.) | × floor | server CPU µs / msg | × floor | msgs / frame | p50 / p99 ms @ fixed rate | p99 × floor | heap / RSS per idle session | heap × floor | lost |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const name of servers) {
    const ws = summary[`${name}/websocket`];
    const idle = summary[`${name}/idle`];
    const lost = ws ? ws.lost.values.reduce((a, b) => a + b, 0) + (idle?.idleFailed?.median ?? 0) : '–';
    rows.push(
      `| ${SERVERS[name].label} | ${cell(ws?.msgPerSec)} | ${ratio(ws?.msgPerSec, floorWs?.msgPerSec)} | ` +
        `${cell(ws?.cpuUsPerMsg, 2)} | ${ratio(ws?.cpuUsPerMsg, floorWs?.cpuUsPerMsg)} | ${cell(ws?.perFrame, 1)} | ` +
        `${cell(ws?.p50, 1)} / ${cell(ws?.p99, 1)} | ${ratio(ws?.p99, floorWs?.p99)} | ` +
        `${cell(kb(idle?.heapPerSession), 1, ' KB')} / ${cell(kb(idle?.rssPerSession), 1, ' KB')} | ` +
        `${ratio(idle?.heapPerSession, floorIdle?.heapPerSession)} | ${lost} |`,
    );
  }
  return rows;
}

function lpTable(summary, lpServers) {
  const faye = summary['faye/long-polling'];
  const rows = [
    '| server | long-polling delivered msg/s (sat.) | × Faye | server CPU µs / msg | msgs / response | lost |',
    '|---|---|---|---|---|---|',
  ];
  for (const name of lpServers) {
    const lp = summary[`${name}/long-polling`];
    const lost = lp ? lp.lost.values.reduce((a, b) => a + b, 0) : '–';
    rows.push(
      `| ${SERVERS[name].label} | ${cell(lp?.msgPerSec)} | ${ratio(lp?.msgPerSec, faye?.msgPerSec)} | ` +
        `${cell(lp?.cpuUsPerMsg, 2)} | ${cell(lp?.perFrame, 1)} | ${lost} |`,
    );
  }
  return rows;
}

function targets(summary) {
  const b = (k) => summary[`bayou/${k}`];
  const f = (k) => summary[`${FLOOR}/${k}`];
  if (!b('websocket')) return [];
  const r = (x, y) => (x && y?.median ? x.median / y.median : Number.NaN);
  const check = (v, ok) => (Number.isNaN(v) ? '?' : ok ? 'met' : 'NOT met');
  const cpu = r(b('websocket')?.cpuUsPerMsg, f('websocket')?.cpuUsPerMsg);
  const p99 = r(b('websocket')?.p99, f('websocket')?.p99);
  const lp = r(b('long-polling')?.msgPerSec, summary['faye/long-polling']?.msgPerSec);
  const heap = b('idle') ? b('idle').heapPerSession.median / 1024 : Number.NaN;
  const lost = Object.entries(summary)
    .filter(([k]) => k.startsWith('bayou/'))
    .reduce((n, [, v]) => n + (v.lost?.values.reduce((a, x) => a + x, 0) ?? 0), 0);
  return [
    '',
    'Bayou against the targets (ratios measured in this run):',
    `- CPU per delivered WebSocket message ${cpu.toFixed(2)}× the batched floor (target ≤ 1.25×): ${check(cpu, cpu <= 1.25)}`,
    `- long-polling fan-out ${lp.toFixed(2)}× Faye (target ≥ 2×): ${check(lp, lp >= 2)}`,
    `- V8 heap per idle WebSocket session ${heap.toFixed(1)} KB (target ≤ 4 KB): ${check(heap, heap <= 4)}`,
    `- p99 at the fixed rate ${p99.toFixed(2)}× the batched floor (target ≤ 1.2×): ${check(p99, p99 <= 1.2)}`,
    `- messages lost or duplicated: ${lost} (target 0): ${check(lost, lost === 0)}`,
  ];
}

export function renderTables({ summary, servers, lpServers, flags, seconds, command, fanOut, machine }) {
  return [
    `Command: \`${command}\` — ${flags.rounds} interleaved round(s), ${seconds} s in all; ${machine}. Medians, ± half the range.`,
    `Chat: ${flags.clients} clients, ${flags.rooms} rooms, ${flags.roomsPerClient} rooms each (fan-out ≈ ${fanOut}), ` +
      `${flags.messageSize}-character messages; saturation = closed loop ≤ ${flags.outstanding} outstanding, ` +
      `${flags.measure / 1000} s measured after ${flags.warmup / 1000} s warm-up; latency = open loop at ` +
      `${flags.rate} delivered msg/s; idle = ${flags.idle} subscribed WebSocket sessions.`,
    '',
    ...wsTable(summary, servers),
    '',
    ...lpTable(summary, lpServers),
    ...targets(summary),
  ].join('\n');
}
