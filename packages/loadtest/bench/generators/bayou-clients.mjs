// @ts-check
// A child process of the storm bench's restart mode: holds `count` real @bayou/client
// clients (indexes from `first`), each subscribed to one of 100 channels, and tells the
// parent over IPC when they are all live ({ type: 'ready' }) and, after { type: 'arm' },
// when each client whose connection dropped has its subscription back
// ({ type: 'back', times: [wall-clock ms, …] }, batched every 100 ms).
// argv: url first count concurrency transports(websocket|websocket,long-polling) localAddresses(comma list or '')
import { BayouClient, longPolling, websocket } from '@bayou/client';
import WebSocket from 'ws';

/**
 * What this process tells the storm bench over IPC.
 * @typedef {{ type: 'ready', connected: number, failed: number, firstError: string | undefined, seconds: number }
 *   | { type: 'back', times: number[], total: number }
 *   | { type: 'armed' }} ClientsReport
 */

/** @param {ClientsReport} report */
const report = (report) => process.send?.(report);

const [url = '', firstArg, countArg, concurrencyArg, transportsArg = 'websocket', addressesArg] =
  process.argv.slice(2);
const first = Number(firstArg);
const count = Number(countArg);
const concurrency = Math.max(1, Number(concurrencyArg));
const addresses = addressesArg ? addressesArg.split(',') : [];
const transports = transportsArg
  .split(',')
  .map((t) => (t === 'websocket' ? websocket : t === 'long-polling' ? longPolling : undefined))
  .filter((t) => t !== undefined);

/**
 * A `ws` WebSocket bound to one of the local addresses, so 10,000 clients find ports.
 * @param {string | undefined} localAddress
 * @returns {NonNullable<import('@bayou/client').BayouClientOptions['WebSocket']>}
 */
function wsFrom(localAddress) {
  if (localAddress === undefined) return WebSocket;
  return class LocalWebSocket extends WebSocket {
    /**
     * @param {string | URL} address
     * @param {string | string[]} [protocols]
     */
    constructor(address, protocols) {
      super(address, protocols, { localAddress });
    }
  };
}

/** @type {(BayouClient | undefined)[]} */
const clients = [];
let armed = false;
const down = new Uint8Array(count);
const back = new Uint8Array(count);
/** @type {number[]} */
let pendingTimes = [];
let backCount = 0;

/**
 * @param {BayouClient} client
 * @param {number} i
 */
function watch(client, i) {
  client.on('state', (state) => {
    if (armed && state !== 'connected') down[i] = 1;
  });
  client.on('subscription', (_channel, status) => {
    if (!armed || !down[i] || back[i] || (status !== 'live' && status !== 'gap')) return;
    back[i] = 1;
    backCount++;
    pendingTimes.push(Date.now());
  });
}

/** @param {number} i */
async function openOne(i) {
  const index = first + i;
  const client = new BayouClient(url, {
    transports,
    WebSocket: wsFrom(addresses.length > 0 ? addresses[index % addresses.length] : undefined),
  });
  clients[i] = client;
  watch(client, i);
  const sub = client.subscribe(`/restart/${index % 100}`, () => {});
  await client.connect();
  await sub.ready;
}

let next = 0;
let failed = 0;
/** @type {string | undefined} */
let firstError;
const started = performance.now();
await Promise.all(
  Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++;
      try {
        await openOne(i);
      } catch (error) {
        failed++;
        firstError ??= /** @type {Error} */ (error).message;
      }
    }
  }),
);
report({
  type: 'ready',
  connected: count - failed,
  failed,
  firstError,
  seconds: (performance.now() - started) / 1000,
});

setInterval(() => {
  if (pendingTimes.length === 0) return;
  report({ type: 'back', times: pendingTimes, total: backCount });
  pendingTimes = [];
}, 100);

process.on('message', async (/** @type {{ type?: string } | null} */ m) => {
  if (m?.type === 'arm') {
    armed = true;
    report({ type: 'armed' });
  } else if (m?.type === 'close') {
    // Stopping quietly: no disconnects to a server that may be gone.
    await Promise.race([
      Promise.all(clients.map((c) => c?.disconnect().catch(() => {}))),
      new Promise((r) => setTimeout(r, 3000)),
    ]);
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
