#!/usr/bin/env node
// @ts-check
/**
 * Reads the lines `upgrade-trace.cjs` wrote during a storm run and follows each WebSocket
 * upgrade a client made hop by hop: `node bench/upgrade-hops.mjs <UPGRADE_TRACE_DIR> [slowMs]`.
 *
 * Hops (ms): `primary` (the client's request made → the balancer's primary handing the
 * connection to a worker), `handoff` (→ the worker's `'connection'`), `parse` (→ its
 * `'upgrade'` event), `upstream` (→ its connection to a node established), `nodeAccept`
 * (→ the node's `'connection'`), `node101` (the node's `'upgrade'` → its `101` written),
 * `back` (→ the first bytes back at the balancer), `clientRead` (the balancer's write →
 * the client's `'upgrade'`). Ports are reused over a run: each hop is matched to the
 * client's request by port and time. Prints the hops' p50/p99/max for every upgrade and
 * for the slow ones (over `slowMs`, default 5000, or never answered), where the slow ones
 * stopped, and the upgrades per 5 s of the run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, slowArg] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node bench/upgrade-hops.mjs <UPGRADE_TRACE_DIR> [slowMs]');
  process.exit(2);
}
const slowMs = Number(slowArg ?? 5000);

/** @typedef {string[]} Line One line of a trace, split at its spaces. */
/** @typedef {'P' | 'A' | 'B' | 'U' | 'N'} Kind */
/** @typedef {Record<string, number | null>} Hops */
/** @typedef {{ created: number, total: number | null, status: string, reached: string, hops: Hops }} Row */

/** @type {Line[]} */
const clients = [];
/** @type {Record<Kind, Map<string, Line[]>>} */
const byPort = { P: new Map(), A: new Map(), B: new Map(), U: new Map(), N: new Map() };
/** @param {Kind} kind @param {string} port @param {Line} line */
const add = (kind, port, line) => {
  const list = byPort[kind].get(port);
  if (list) list.push(line);
  else byPort[kind].set(port, [line]);
};
for (const file of readdirSync(dir).filter((f) => f.endsWith('.up'))) {
  const [head = '', ...lines] = readFileSync(join(dir, file), 'utf8').split('\n');
  const role = head.includes('round-robin') ? 'balancer' : head.includes(' start ') ? 'node' : 'other';
  for (const l of lines) {
    const p = l.split(' ');
    const port = p[1] ?? '';
    if (p[0] === 'C') clients.push(p);
    else if (p[0] === 'P') add('P', port, p);
    else if (p[0] === 'A' && role === 'balancer') add('A', port, p);
    else if (p[0] === 'S' && role === 'balancer') add('B', port, p);
    else if (p[0] === 'S' && role === 'node') add('N', port, p);
    else if (p[0] === 'U') add('U', port, p);
  }
}
/** @param {string | undefined} s */
const num = (s) => (s === undefined || s === '-' ? null : Number(s));
/** @param {string | undefined} a @param {string | undefined} b */
const diff = (a, b) => {
  const x = num(a);
  const y = num(b);
  return x === null || y === null ? null : y - x;
};
/**
 * The line for `port` whose field `i` is the first within [from, to].
 * @param {Kind} kind @param {string} port @param {number} i @param {number} from @param {number} to
 * @returns {Line | null}
 */
function pick(kind, port, i, from, to) {
  /** @type {Line | null} */
  let best = null;
  for (const p of byPort[kind].get(port) ?? []) {
    const t = num(p[i]);
    if (t === null || t < from - 50 || t > to + 50) continue;
    if (best === null || t < Number(best[i])) best = p;
  }
  return best;
}

/** @type {Row[]} */
const rows = clients.map(([, port = '', created = '0', tcp, answered, status = '']) => {
  const at = Number(created);
  const end = num(answered) ?? at + 1e9;
  const p = pick('P', port, 2, at, end);
  const a = pick('A', port, 2, at, end);
  const b = pick('B', port, 3, at, end);
  const u = b && pick('U', port, 4, Number(b[4]), end);
  const n = u && pick('N', u[2] ?? '', 3, Number(u[4]), end);
  return {
    created: at,
    total: diff(created, answered),
    status,
    reached: n
      ? 'node'
      : u
        ? 'balancer → node'
        : b
          ? 'balancer worker, upgrade'
          : a
            ? 'balancer worker'
            : p
              ? 'balancer primary'
              : 'nowhere traced',
    hops: {
      tcp: diff(created, tcp),
      primary: p && diff(created, p[2]),
      handoff: p && a && diff(p[2], a[2]),
      parse: b && diff(b[3], b[4]),
      upstream: u && diff(u[4], u[5]),
      nodeAccept: u && n && diff(u[5], n[3]),
      node101: n && diff(n[4], n[5]),
      back: u && n && diff(n[5], u[6]),
      clientRead: b && diff(b[5], answered),
    },
  };
});
if (rows.length === 0) {
  console.log('no client upgrade traced');
  process.exit(0);
}
/** @param {(number | null)[]} values @param {number} f */
const q = (values, f) => {
  const v = /** @type {number[]} */ (values.filter((x) => x !== null)).sort((x, y) => x - y);
  return v.length === 0 ? '-' : Math.round(v[Math.min(v.length - 1, Math.floor(f * v.length))] ?? 0);
};
const slow = rows.filter((r) => r.total === null || r.total > slowMs || r.status !== '101');
/** @param {Row[]} list @param {'status' | 'reached'} key */
const count = (list, key) => {
  /** @type {Map<string, number>} */
  const m = new Map();
  for (const r of list) m.set(r[key], (m.get(r[key]) ?? 0) + 1);
  return [...m].map(([k, v]) => `${k} ${v}`).join(', ');
};
console.log(`upgrades ${rows.length}: ${count(rows, 'status')}`);
console.log(
  `slow (over ${slowMs} ms or not answered 101) ${slow.length}; they got as far as: ${count(slow, 'reached')}`,
);
for (const [name, list] of /** @type {[string, Row[]][]} */ ([
  ['every upgrade', rows],
  ['the slow ones', slow],
])) {
  console.log(`${name}, hop p50 / p99 / max ms:`);
  for (const hop of Object.keys(rows[0]?.hops ?? {})) {
    const v = list.map((r) => r.hops[hop] ?? null);
    console.log(`  ${hop.padEnd(11)} ${q(v, 0.5)} / ${q(v, 0.99)} / ${q(v, 1)}`);
  }
}
const t0 = Math.min(...rows.map((r) => r.created));
/** @type {Map<number, { all: number, slow: number, handedOver: number }>} */
const windows = new Map();
for (const r of rows) {
  const w = Math.floor((r.created - t0) / 5000) * 5;
  const c = windows.get(w) ?? { all: 0, slow: 0, handedOver: 0 };
  c.all++;
  if (slow.includes(r)) c.slow++;
  windows.set(w, c);
}
for (const p of byPort.P.values())
  for (const line of p) {
    const w = Math.floor((Number(line[2]) - t0) / 5000) * 5;
    const c = windows.get(w) ?? { all: 0, slow: 0, handedOver: 0 };
    c.handedOver++;
    windows.set(w, c);
  }
console.log(
  'per 5 s since the first upgrade: upgrades made / slow / connections the primary handed to a worker',
);
console.log(
  [...windows]
    .sort((x, y) => x[0] - y[0])
    .map(([w, c]) => `${w}s ${c.all}/${c.slow}/${c.handedOver}`)
    .join('  '),
);
