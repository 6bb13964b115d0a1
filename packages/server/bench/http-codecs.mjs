#!/usr/bin/env node
// @ts-check
// gzip against brotli (and zstd where this Node has it) on what the HTTP transports send:
// long-polling replies (a Bayeux array of several messages) and stream frames (one to three
// messages), from the bandwidth bench's two feeds (a price grid row with 4 of 30 fields
// changed, a chat line). For each codec: bytes against the JSON, and CPU per body (process
// CPU time over many bodies, best of 5). gzip is the server's: level 1, window 2^11, memLevel
// 4, one zlib stream reset per body (`transports/deflater.ts`).
//
//   node packages/server/bench/http-codecs.mjs [--quick] [--bodies 5000]
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { quick: { type: 'boolean' }, bodies: { type: 'string' } } });
const BODIES = Number(values.bodies ?? (values.quick === true ? 500 : 5000));
const { RawDeflater } = await import(resolve(here, '../dist/transports/deflater.js'));

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const WORDS =
  'the market opened higher on strong earnings while bonds slipped and traders waited for the central bank decision later today'.split(
    ' ',
  );
/** @param {number} i */
const priceMessage = (i) => {
  /** @type {Record<string, unknown>} */
  const row = {
    symbol: `SYM${i}`,
    venue: 'XLON',
    currency: 'GBP',
    isin: `GB00${String(i).padStart(8, '0')}`,
  };
  for (let f = 0; f < 22; f++) row[`f${f}`] = Math.round(random() * 1e6) / 100;
  Object.assign(row, { bid: 100 + i / 100, ask: 100.5 + i / 100, last: 100.2, time: Date.now() + i });
  return JSON.stringify({ channel: `/grid/${i}`, data: row });
};
/** @param {number} i */
const chatMessage = (i) => {
  const words = Array.from({ length: 16 }, () => WORDS[Math.floor(random() * WORDS.length)]);
  return JSON.stringify({
    channel: `/room/${i % 100}`,
    data: {
      user: `user${Math.floor(random() * 1000)}`,
      room: i % 100,
      text: words.join(' '),
      time: Date.now(),
    },
  });
};

/** @type {[string, (i: number) => string][]} */
const feeds = [
  ['price', priceMessage],
  ['chat', chatMessage],
];
/** Bodies of `n` messages each, as the transports send them. */
const bodies = (/** @type {(i: number) => string} */ make, /** @type {number} */ n) =>
  Array.from({ length: 200 }, (_, b) =>
    Buffer.from(`[${Array.from({ length: n }, (_, k) => make(b * n + k)).join(',')}]`),
  );

const deflater = new RawDeflater({ level: 1, memLevel: 4, windowBits: 11 });
const B = zlib.constants;
/** @type {[string, (b: Buffer) => Buffer][]} */
const codecs = [
  ['gzip (server: level 1, 2^11)', (b) => deflater.deflate(b, B.Z_FINISH)],
  ['gzip level 6, 2^15', (b) => zlib.gzipSync(b)],
  ...[0, 1, 4].map(
    (q) =>
      /** @type {[string, (b: Buffer) => Buffer]} */ ([
        `br quality ${q}, window 2^16`,
        (b) =>
          zlib.brotliCompressSync(b, {
            params: {
              [B.BROTLI_PARAM_QUALITY]: q,
              [B.BROTLI_PARAM_LGWIN]: 16,
              [B.BROTLI_PARAM_SIZE_HINT]: b.length,
              [B.BROTLI_PARAM_MODE]: B.BROTLI_MODE_TEXT,
            },
          }),
      ]),
  ),
];
const z = /** @type {any} */ (zlib);
if (typeof z.zstdCompressSync === 'function')
  codecs.push([
    'zstd level 1',
    (b) => z.zstdCompressSync(b, { params: { [z.constants.ZSTD_c_compressionLevel]: 1 } }),
  ]);

console.log(
  `HTTP codecs on Node ${process.version}${typeof z.zstdCompressSync === 'function' ? '' : ' (no zstd in this Node: zlib.zstdCompressSync came in 22.15 / 23.8)'}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
for (const [feed, make] of feeds) {
  for (const [what, n] of /** @type {[string, number][]} */ ([
    ['stream frame, 1 message', 1],
    ['stream frame, 3 messages', 3],
    ['long-poll reply, 10 messages', 10],
    ['long-poll reply, 50 messages', 50],
  ])) {
    const set = bodies(make, n);
    const raw = set.reduce((s, b) => s + b.length, 0) / set.length;
    const cells = codecs.map(([name, codec]) => {
      let size = 0;
      for (const b of set) size += codec(b).length;
      let best = Number.POSITIVE_INFINITY;
      for (let r = 0; r < 5; r++) {
        const t = process.cpuUsage();
        for (let i = 0; i < BODIES; i++) codec(/** @type {Buffer} */ (set[i % set.length]));
        const u = process.cpuUsage(t);
        best = Math.min(best, (u.user + u.system) / BODIES);
      }
      return `${name}: ${(size / set.length / raw).toFixed(3)}x ${best.toFixed(1)} µs`;
    });
    console.log(`${feed.padEnd(6)} ${what.padEnd(30)} ${raw.toFixed(0).padStart(6)} B  ${cells.join(' | ')}`);
  }
}
