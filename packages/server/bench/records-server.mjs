// @ts-check
// Child process of bench/records.mjs: a Bayou server with record subjects updated by a
// timer in this process. argv: JSON { records, throttleMs, subjects, rate, fields }.
import { readFileSync } from 'node:fs';
import { createServer } from '../dist/index.js';

/** @type {{ records: boolean, throttleMs: number, subjects: number, rate: number, fields: number }} */
const cfg = JSON.parse(process.argv[2] ?? '{}');
const server = await createServer({
  host: '127.0.0.1',
  port: 0,
  records: [{ pattern: '/bench/*', throttleMs: cfg.throttleMs }],
});
const base = await server.listen();
let seq = 0;
const fields = () => {
  seq++;
  /** @type {Record<string, number>} */
  const out = {};
  for (let i = 0; i < cfg.fields; i++) out[`field${i}`] = Math.round((seq * (i + 1) * 1.37) % 10000) / 100;
  return out;
};
for (let s = 0; s < cfg.subjects; s++) server.bayou.updateRecord(`/bench/${s}`, fields());

// Every 10 ms, update the subjects due by now: credit follows the clock, so a late timer
// catches up instead of lowering the rate.
const TICK = 10;
const perMs = (cfg.subjects * cfg.rate) / 1000;
let last = performance.now();
let credit = 0;
let next = 0;
let updates = 0;
setInterval(() => {
  const now = performance.now();
  credit += (now - last) * perMs;
  last = now;
  while (credit >= 1) {
    credit--;
    server.bayou.updateRecord(`/bench/${next}`, fields());
    updates++;
    next = (next + 1) % cfg.subjects;
  }
}, TICK);

const cpu = () => {
  const f = (readFileSync('/proc/self/stat', 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime in seconds (USER_HZ 100)
};
process.on('message', (m) => {
  if (m === 'stats') process.send?.({ cpu: cpu(), updates, sessions: server.bayou.sessionCount });
});
process.on('disconnect', () => process.exit(0));
process.send?.({ url: `${base.replace('http', 'ws')}/bayeux` });
