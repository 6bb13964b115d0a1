// @ts-check
// The idle bench's generator (bench/idle.mjs), one process per server so that its CPU is
// read apart from the server's and from the other generators': it opens idle WebSocket
// sessions on the server (handshake, the first connect, one subscription) and holds them.
// argv: the server's URL, the local addresses (a range or list, '' for none), and the
// handshake's ext as JSON ('' for none). Over IPC: { type: 'open', total } opens sessions
// until `total` are open (`concurrency` at a time) and answers { type: 'opened', connected,
// failed }; { type: 'count' } answers { type: 'count', connected }; the parent going away
// closes them all and ends the process.
import { bayeuxWebSocket, parseAddresses } from '../../dist/index.js';

const [url = '', addresses = '', ext = ''] = process.argv.slice(2);
const CONCURRENCY = 200;
const CHANNEL = '/loadtest/idle';

const driver = bayeuxWebSocket({
  url,
  localAddresses: addresses ? parseAddresses(addresses) : [],
  handshakeExt: ext ? JSON.parse(ext) : null,
  sink: () => {},
});
let next = 0;
let failed = 0;

/**
 * Opens sessions `next`…`total - 1`, `CONCURRENCY` at a time.
 * @param {number} total
 */
async function openUpTo(total) {
  const one = async () => {
    while (next < total) {
      const i = next++;
      try {
        await driver.open(i);
        await driver.subscribe(i, [CHANNEL]);
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, one));
}

/** @param {unknown} raw */
async function onMessage(raw) {
  const m = /** @type {{ type?: string, total?: number }} */ (raw);
  if (m?.type === 'open') {
    await openUpTo(Number(m.total));
    process.send?.({ type: 'opened', connected: driver.connected(), failed });
  } else if (m?.type === 'count') {
    process.send?.({ type: 'count', connected: driver.connected() });
  }
}

process.on('message', (m) => {
  onMessage(m).catch((error) => {
    console.error(`idle generator: ${error.message}`);
    process.exit(1);
  });
});
process.on('disconnect', () => {
  driver.close().finally(() => process.exit(0));
});
process.send?.({ type: 'ready' });
