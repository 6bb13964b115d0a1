#!/usr/bin/env node
// @ts-check
// The root README's comparison table, made from a bench run's summary. `pnpm bench` writes
// it after a full-size run (every default server, no --quick, at least 3 rounds; or with
// --readme true); `node bench/readme-table.mjs <run.json>` writes it from a run saved with
// --json. The README keeps it between the two BENCH-TABLE markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** @import { RoundsSummary } from '../dist/stats.js' */

/**
 * The flags of run.mjs that decide whether a run is full size.
 * @typedef {{ quick: boolean, rounds: number, clients: number, rate: number, servers: string, lpServers: string, lpGenerators: string, idle: number }} SizeFlags
 */
/**
 * A bench run as run.mjs saves it (--json).
 * @typedef {{ summary: RoundsSummary, flags: SizeFlags, machine: string, command: string }} BenchRun
 */

export const README = fileURLToPath(new URL('../../../README.md', import.meta.url));
const START = '<!-- BENCH-TABLE:START (written by packages/loadtest/bench/readme-table.mjs) -->';
const END = '<!-- BENCH-TABLE:END -->';

/** @type {Record<string, string>} */
const LABELS = {
  'ws-batched': 'raw `ws`, batched per turn (the WebSocket floor)',
  'lp-floor': 'raw `node:http` long-polling (the long-polling floor)',
  bayou: '**Bayou**',
  faye: 'Faye 1.4',
  socketio: 'Socket.IO 4.8',
};
const ORDER = ['ws-batched', 'lp-floor', 'bayou', 'socketio', 'faye'];

/**
 * @param {RoundsSummary} summary
 * @param {string} key
 * @param {string} metric
 */
const med = (summary, key, metric) => summary[key]?.[metric]?.median ?? Number.NaN;
/**
 * @param {number} v
 * @param {number} [digits]
 */
const num = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
/** @param {number} v */
const kilo = (v) => (Number.isFinite(v) ? `${Math.round(v / 1000)}k` : '–');
/** @param {number} v */
const kb = (v) => (Number.isFinite(v) ? `${(v / 1024).toFixed(1)} KB` : '–');
/**
 * @param {string} name
 * @param {string} text
 */
const bold = (name, text) => (name === 'bayou' && text !== '–' ? `**${text}**` : text);

/**
 * Messages lost or duplicated over every row of one server, all rounds.
 * @param {RoundsSummary} summary
 * @param {string} name
 */
function lostOf(summary, name) {
  let lost = 0;
  for (const [key, row] of Object.entries(summary)) {
    if (key.split('/')[0] === name) lost += (row.lost?.values ?? []).reduce((a, b) => a + b, 0);
  }
  return lost;
}

/**
 * Whether a run is one the README may quote: full size, every default server.
 * @param {SizeFlags} flags
 */
export function fullSize(flags) {
  /**
   * @param {string} list
   * @param {string[]} names
   */
  const has = (list, names) => names.every((n) => String(list).split(',').includes(n));
  return (
    !flags.quick &&
    flags.rounds >= 3 &&
    flags.clients === 1000 &&
    flags.rate === 20000 &&
    has(flags.servers, ['ws-batched', 'bayou', 'faye', 'socketio']) &&
    has(flags.lpServers, ['lp-floor', 'bayou', 'faye']) &&
    has(flags.lpGenerators, ['standard', 'lean']) &&
    flags.idle >= 10000
  );
}

/**
 * The command as a reader would type it: where the run saved its files is beside the point.
 * @param {string} command
 */
function publicCommand(command) {
  return command.replace(/\s--(json|markdown|readme)(?:=|\s+)\S+/g, '');
}

/**
 * The markdown between the markers.
 * @param {BenchRun} run
 */
export function readmeTable({ summary, flags, machine, command }) {
  const rows = [
    '| server | WebSocket msg/s (sat.) | WebSocket CPU µs / msg (sat. / at 20k msg/s) | WebSocket p99 at 20k msg/s | heap per idle session | long-polling CPU µs / msg at 20k msg/s (standard client / lean) | long-polling msg/s (sat., lean) | lost |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const name of ORDER) {
    const ws = `${name}/websocket`;
    const std = `${name}/long-polling/standard`;
    const lean = `${name}/long-polling/lean`;
    if (!summary[ws] && !summary[std]) continue;
    const cells = [
      kilo(med(summary, ws, 'msgPerSec')),
      summary[ws]
        ? `${num(med(summary, ws, 'cpuUsPerMsg'))} / ${num(med(summary, ws, 'rateCpuUsPerMsg'))}`
        : '–',
      summary[ws] ? `${num(med(summary, ws, 'p99'), 1)} ms` : '–',
      kb(med(summary, `${name}/idle`, 'heapPerSession')),
      summary[std] || summary[lean]
        ? `${num(med(summary, std, 'rateCpuUsPerMsg'))} / ${num(med(summary, lean, 'rateCpuUsPerMsg'))}`
        : '–',
      kilo(med(summary, lean, 'msgPerSec')),
      String(lostOf(summary, name)),
    ];
    rows.push(`| ${LABELS[name] ?? name} | ${cells.map((c) => bold(name, c)).join(' | ')} |`);
  }
  return [
    `\`${publicCommand(command)}\` (${machine}; medians of ${flags.rounds} interleaved rounds; 1,000 clients, fan-out ≈ 100, 50-byte messages; "lost" counts messages lost or duplicated in all of a server's rows). Server CPU is per delivered message; "standard client" is a browser-like \`node:http\` client with cookies and Chrome's headers, "lean" the load tester's own pipelined driver. Every row, the storm and restart rows and the method: [\`packages/loadtest\`](packages/loadtest#the-comparison-bench).`,
    '',
    ...rows,
  ].join('\n');
}

/**
 * Replaces the table between the markers in the root README; false when they are missing.
 * @param {BenchRun} run
 * @param {string} [file]
 */
export function writeReadmeTable(run, file = README) {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return false;
  const next = `${text.slice(0, start + START.length)}\n${readmeTable(run)}\n${text.slice(end)}`;
  writeFileSync(file, next);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/readme-table.mjs <run.json written by pnpm bench --json>');
    process.exit(2);
  }
  const run = JSON.parse(readFileSync(file, 'utf8'));
  const command = run.command ?? 'pnpm bench';
  const machine = run.machine ?? 'see the run';
  if (!writeReadmeTable({ ...run, command, machine })) {
    console.error(`${README}: the BENCH-TABLE markers are missing`);
    process.exit(1);
  }
  console.log(`${README}: comparison table written from ${file}`);
}
