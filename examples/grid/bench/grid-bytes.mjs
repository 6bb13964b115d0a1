// Bytes on the wire for the grid page's traffic, compression on and off: a Node
// @bayou/client (over `ws`, which offers permessage-deflate as browsers do) follows ROWS
// record subjects of the demo feed — their snapshots, then SECONDS of updates at the feed's
// rate (1 update per row per second) — against the grid server with and without
// `compression` (what `createGridServer` turns on).
//
//   node bench/grid-bytes.mjs [--rows 2000] [--seconds 5]

import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { BayouClient } from '@bayou/client';
import { demoSubject, demoSymbol } from '@bayou/protocol';
import { createGridServer } from '../dist/grid-server.js';

// `ws`, as the server package has it (the grid's page uses the browser's WebSocket).
const WebSocket = createRequire(import.meta.resolve('@bayou/server'))('ws');

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '5' } },
});
const ROWS = Number(values.rows);
const SECONDS = Number(values.seconds);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function run(compression) {
  const server = await createGridServer({ port: 0, symbols: ROWS, bayou: { compression, logger: false } });
  const base = await server.listen();
  const sockets = [];
  class Counting extends WebSocket {
    constructor(...args) {
      super(...args);
      sockets.push(this);
    }
  }
  const client = new BayouClient(`${base}/bayeux`, { WebSocket: Counting });
  await client.connect();
  const bytes = () =>
    sockets.reduce((s, ws) => s + (ws._socket ? ws._socket.bytesRead + ws._socket.bytesWritten : 0), 0);
  let snapshots = 0;
  let updates = 0;
  const t0 = bytes();
  for (let i = 0; i < ROWS; i++) {
    let first = true;
    client.record(demoSubject(demoSymbol(i)), {}, () => {
      if (first) {
        first = false;
        snapshots++;
      } else updates++;
    });
  }
  while (snapshots < ROWS) await sleep(20);
  const t1 = bytes();
  const u0 = updates;
  await sleep(SECONDS * 1000);
  const t2 = bytes();
  const extensions = sockets.map((s) => s.extensions).join(' ');
  await client.disconnect();
  await server.close();
  return { snapshotBytes: (t1 - t0) / ROWS, updateBytes: (t2 - t1) / (updates - u0), extensions };
}

const off = await run(false);
const on = await run(true);
console.log(
  `grid, ${ROWS} rows: snapshots ${off.snapshotBytes.toFixed(1)} -> ${on.snapshotBytes.toFixed(1)} B/row (${(on.snapshotBytes / off.snapshotBytes).toFixed(2)}x); updates ${off.updateBytes.toFixed(1)} -> ${on.updateBytes.toFixed(1)} B/update (${(on.updateBytes / off.updateBytes).toFixed(2)}x); negotiated: "${on.extensions}"`,
);
