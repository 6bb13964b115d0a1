#!/usr/bin/env node
// @ts-check
// Forwarded long-poll batches (issue 30, the node-to-node layer): two nodes on one Redis,
// each session handshaken on node A and its publishes POSTed to node B, which forwards
// them to A and relays A's reply. Reports batches/s and the latency of a batch.
//
//   node packages/server/bench/forward.mjs --redis redis://127.0.0.1:6379
//     [--sessions 1] [--batches 1000] [--dist packages/server/dist]
//
// --dist picks the build to measure (another worktree's, for a before/after in one sitting).
// Bounded: --sessions × --batches requests, then both nodes close.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    redis: { type: 'string' },
    sessions: { type: 'string', default: '1' },
    batches: { type: 'string', default: '1000' },
    dist: { type: 'string', default: resolve(import.meta.dirname, '../dist') },
  },
});
if (values.redis === undefined) {
  console.error('forward.mjs: give --redis redis://host:port (a Redis the bench may write keys to)');
  process.exit(2);
}
const { createServer } = await import(pathToFileURL(resolve(values.dist, 'index.js')).href);
const prefix = `fwd${process.pid}:`;
const options = { host: '127.0.0.1', port: 0, redis: values.redis, redisEngine: { keyPrefix: prefix } };
const a = await createServer(options);
const b = await createServer(options);
const onA = `${await a.listen()}/bayeux`;
const onB = `${await b.listen()}/bayeux`;

/** @param {string} url @param {unknown} body @returns {Promise<any[]>} */
async function post(url, body) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return /** @type {any[]} */ (await r.json());
}

const sessions = Number(values.sessions);
const per = Number(values.batches);
/** @type {string[]} */
const ids = [];
for (let i = 0; i < sessions; i++) {
  const [h] = await post(onA, [
    { channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] },
  ]);
  ids.push(h.clientId);
}
for (const id of ids) await post(onB, [{ channel: '/bench/x', clientId: id, data: { n: 0 } }]);
/** @type {number[]} */
const latencies = [];
const t0 = process.hrtime.bigint();
await Promise.all(
  ids.map(async (id) => {
    for (let n = 1; n <= per; n++) {
      const start = process.hrtime.bigint();
      const [reply] = await post(onB, [{ channel: '/bench/x', clientId: id, data: { n } }]);
      if (reply.successful !== true) throw new Error(`refused: ${JSON.stringify(reply)}`);
      latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }),
);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
latencies.sort((x, y) => x - y);
/** @param {number} p */
const q = (p) =>
  (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0).toFixed(2);
console.log(
  JSON.stringify({
    sessions,
    batches: latencies.length,
    perSecond: Math.round(latencies.length / seconds),
    p50ms: q(0.5),
    p99ms: q(0.99),
  }),
);
await a.close();
await b.close();
