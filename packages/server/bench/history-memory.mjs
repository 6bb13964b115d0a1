#!/usr/bin/env node
// @ts-check
// History memory benchmark (run by `pnpm bench`): one node publishes one message to each
// of N distinct channels (1,000,000 by default) with nobody subscribed, as a server with
// a channel per user does, and reports the heap (after a forced GC) at start, at its
// highest while publishing, after publishing, and once the history TTL has passed —
// for several values of the channel cap, each in its own process, side by side.
//
//   node bench/history-memory.mjs [--channels 1000000] [--caps 10000,100000,1000000]
//                                 [--ttl 90000] [--quick]
//
// "emptied after" is the time from the end of publishing until the sweep had dropped every
// channel: about the TTL. The heap is sampled (with a forced GC) 10 times while publishing.
//
// The node is a real server (`createServer`, the memory engine, the default history of
// 100 messages per channel) publishing through `server.bayou.publish`; the counts come
// from its `/metrics`.
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    channels: { type: 'string' },
    caps: { type: 'string' },
    ttl: { type: 'string' },
    quick: { type: 'boolean' },
    child: { type: 'string' },
  },
});

const MB = 1024 * 1024;

/** @typedef {{ channels: number, cap: number, ttl: number }} Config */
/** @typedef {Awaited<ReturnType<typeof child>>} Result */

/** The heap in use after a full collection (the child runs with --expose-gc). */
function heap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

/**
 * The history gauges and counters of `/metrics`.
 * @param {string} base
 */
async function metrics(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  /** @param {string} name */
  const read = (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    channels: read('bayou_history_channels'),
    expired: read('bayou_history_expired_total'),
    evicted: read('bayou_history_evicted_total'),
  };
}

const batch = 10_000;

/**
 * Publishes one message to each of `/prefix/0` … `/prefix/n-1`, `batch` at a time.
 * @param {import('../dist/index.js').BayouServer} server
 * @param {string} prefix
 * @param {number} n
 * @param {(done: number) => Promise<void>} [afterBatch]
 */
async function publishAll(server, prefix, n, afterBatch = async () => {}) {
  for (let i = 0; i < n; i += batch) {
    const sent = [];
    for (let j = i; j < Math.min(i + batch, n); j++) sent.push(server.bayou.publish(`${prefix}/${j}`, j));
    await Promise.all(sent);
    await afterBatch(Math.min(i + batch, n));
  }
}

/**
 * Resolves once the sweep dropped every idle channel (as `/metrics` reports).
 * @param {string} base
 */
async function drained(base) {
  while ((await metrics(base)).channels > 0) await new Promise((r) => setTimeout(r, 100));
}

/**
 * One configuration, in a child process of its own so heaps do not mix.
 * @param {Config} config
 */
async function child({ channels, cap, ttl }) {
  const { createServer } = await import('../dist/index.js');
  const server = await createServer({ host: '127.0.0.1', port: 0, historyChannels: cap, historyTtl: ttl });
  const base = await server.listen();
  // Warm up: compile the publish, eviction and sweep paths and the metrics route, then
  // let those channels expire, so the baseline is a warm server that holds no history.
  await publishAll(server, '/warm', 20_000);
  await drained(base);
  const before = await metrics(base);
  const start = heap();
  let peak = start;
  let peakChannels = 0;
  const samples = 10;
  const every = Math.max(batch, Math.ceil(channels / samples / batch) * batch);
  await publishAll(server, '/user', channels, async (done) => {
    if (done % every !== 0) return;
    peak = Math.max(peak, heap());
    peakChannels = Math.max(peakChannels, (await metrics(base)).channels);
  });
  const published = heap();
  const held = await metrics(base);
  peak = Math.max(peak, published);
  const t1 = Date.now();
  await drained(base);
  const emptiedMs = Date.now() - t1;
  const after = heap();
  await server.close();
  const evicted = held.evicted - before.evicted;
  return { cap, start, peak, published, after, held, evicted, emptiedMs, peakChannels };
}

/**
 * @param {Config} config
 * @returns {Promise<Result>}
 */
function run(config) {
  return new Promise((resolve, reject) => {
    const p = fork(new URL(import.meta.url), ['--child', JSON.stringify(config)], {
      execArgv: ['--expose-gc'],
    });
    p.once('message', (m) => resolve(/** @type {Result} */ (/** @type {unknown} */ (m))));
    p.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`cap ${config.cap}: exit ${code}`))));
  });
}

/** @param {number} bytes */
const mb = (bytes) => (bytes / MB).toFixed(1);
/**
 * @param {number} a
 * @param {number} b
 */
const pct = (a, b) => `${(((a - b) / b) * 100).toFixed(1)}%`;

async function main() {
  const quick = values.quick ?? false;
  const channels = Number(values.channels ?? (quick ? 100_000 : 1_000_000));
  const caps = (values.caps ?? (quick ? '10000,100000' : '10000,100000,1000000')).split(',').map(Number);
  // Longer than publishing takes, so only the cap bounds what is held meanwhile.
  const ttl = Number(values.ttl ?? (quick ? 10_000 : 90_000));
  console.log(
    `History memory: ${channels.toLocaleString('en-US')} distinct channels published once each on one node, ` +
      `history TTL ${ttl} ms, default history size; heap after a forced GC (node ${process.version})\n`,
  );
  console.log(
    '| historyChannels | heap at start | highest while publishing | after publishing | channels held | evicted | after the TTL | after TTL vs start | emptied after |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const cap of caps) {
    const r = await run({ channels, cap, ttl });
    console.log(
      `| ${cap.toLocaleString('en-US')} | ${mb(r.start)} MB | ${mb(r.peak)} MB | ${mb(r.published)} MB | ` +
        `${r.held.channels.toLocaleString('en-US')} | ${r.evicted.toLocaleString('en-US')} | ` +
        `${mb(r.after)} MB | ${pct(r.after, r.start)} | ${(r.emptiedMs / 1000).toFixed(1)} s |`,
    );
    if (r.peakChannels > cap) throw new Error(`cap ${cap}: ${r.peakChannels} channels held`);
  }
}

if (values.child !== undefined) {
  const result = await child(JSON.parse(values.child));
  process.send?.(result, undefined, undefined, () => process.exit(0));
} else {
  await main();
}
