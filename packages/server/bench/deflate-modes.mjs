#!/usr/bin/env node
// @ts-check
// permessage-deflate done two ways, on the price rows of bench/bandwidth.mjs, outside Bayou
// (a bare `ws` server, so only the compression differs):
//   per-socket: `ws.send` with ws's own compressor on every socket, context takeover kept
//               (the best ratio: each socket's window remembers the rows it sent before);
//   shared:     what the server does (`transports/compression.ts`): no context takeover,
//               a frame compressed once and written to every socket it goes to.
// Each publication goes to FANOUT sockets at once; the clients run in a child process
// (their inflating is not counted). Reports server CPU per delivered message (all threads:
// ws deflates on the thread pool), bytes on the wire per message, and RSS per socket after.
//
//   node packages/server/bench/deflate-modes.mjs [--sockets 1000] [--fanout 10] [--messages 20000]
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { WebSocketServer } from 'ws';
import { compressedFrame, perMessageDeflate } from '../dist/transports/compression.js';

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '1000' },
    fanout: { type: 'string', default: '10' },
    messages: { type: 'string', default: '20000' },
    child: { type: 'string' },
  },
});

if (values.child !== undefined) {
  // The clients: open the sockets, count bytes and messages, report when asked.
  const { WebSocket } = await import('ws');
  /** @type {import('ws').WebSocket[]} */
  const sockets = [];
  let messages = 0;
  for (let i = 0; i < Number(values.sockets); i++) {
    const ws = new WebSocket(values.child, { perMessageDeflate: { threshold: 1024 } });
    ws.on('message', () => {
      messages++;
    });
    sockets.push(ws);
    await new Promise((r) => ws.once('open', r));
  }
  process.send?.({ ready: true });
  process.on('message', () => {
    const bytes = sockets.reduce((s, ws) => s + /** @type {any} */ (ws)._socket.bytesRead, 0);
    process.send?.({ messages, bytes });
  });
} else {
  const SOCKETS = Number(values.sockets);
  const FANOUT = Number(values.fanout);
  const MESSAGES = Number(values.messages);
  const row = { symbol: 'SYM1', venue: 'XLON', currency: 'GBP', isin: 'GB0000000001' };
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let f = 0; f < 22; f++) /** @type {any} */ (row)[`f${f}`] = Math.round(random() * 1e6) / 100;

  /** @param {'per-socket' | 'shared'} mode */
  async function run(mode) {
    const options =
      mode === 'shared'
        ? perMessageDeflate({ compression: true, compressionThreshold: 0 })
        : {
            serverMaxWindowBits: 11,
            clientMaxWindowBits: 11,
            zlibDeflateOptions: { level: 1, memLevel: 4 },
            threshold: 0,
          };
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: options || false });
    await new Promise((r) => wss.once('listening', r));
    /** @type {import('ws').WebSocket[]} */
    const links = [];
    wss.on('connection', (ws) => links.push(ws));
    const port = /** @type {import('node:net').AddressInfo} */ (wss.address()).port;
    const child = fork(new URL(import.meta.url).pathname, [
      '--child',
      `ws://127.0.0.1:${port}`,
      '--sockets',
      String(SOCKETS),
    ]);
    await new Promise((r) => child.once('message', r));
    const report = () =>
      new Promise((r) => {
        child.once('message', r);
        child.send('report');
      });
    const rssBefore = process.memoryUsage().rss;
    const cpu0 = process.cpuUsage();
    for (let m = 0; m < MESSAGES; m++) {
      Object.assign(row, {
        bid: 100 + (m % 50) / 10,
        ask: 100.5 + (m % 50) / 10,
        last: 100.2,
        time: Date.now(),
      });
      const payload = Buffer.from(JSON.stringify([{ channel: `/grid/${m % 1000}`, data: row }]));
      const start = Math.floor(random() * SOCKETS);
      for (let k = 0; k < FANOUT; k++) {
        const ws = /** @type {any} */ (links[(start + k) % SOCKETS]);
        if (mode === 'shared') ws._socket.write(compressedFrame(payload));
        else ws.send(payload, { binary: false });
      }
      if (m % 200 === 0) await new Promise(setImmediate);
    }
    // Until the clients have them all (ws deflates asynchronously).
    for (;;) {
      const r = /** @type {{ messages: number, bytes: number }} */ (await report());
      if (r.messages >= MESSAGES * FANOUT) {
        const cpu = process.cpuUsage(cpu0);
        const rssPerSocket = (process.memoryUsage().rss - rssBefore) / SOCKETS;
        child.kill();
        for (const ws of links) ws.terminate();
        await new Promise((res) => wss.close(() => res(undefined)));
        return { cpuUs: (cpu.user + cpu.system) / r.messages, bytes: r.bytes / r.messages, rssPerSocket };
      }
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  console.log(
    `deflate modes: ${SOCKETS} sockets, fan-out ${FANOUT}, ${MESSAGES} publications of a ~480-byte price row`,
  );
  for (const mode of /** @type {const} */ (['per-socket', 'shared', 'per-socket', 'shared'])) {
    const r = await run(mode);
    console.log(
      `${mode.padEnd(10)} ${r.cpuUs.toFixed(2)} µs CPU per delivered message, ${r.bytes.toFixed(1)} B/msg on the wire, RSS +${(r.rssPerSocket / 1024).toFixed(1)} KB per socket`,
    );
  }
}
