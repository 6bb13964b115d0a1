// A child process of the storm bench's restart mode: holds `count` real @bayou/client
// clients (indexes from `first`), each subscribed to one of 100 channels, and tells the
// parent over IPC when they are all live ({ type: 'ready' }) and, after { type: 'arm' },
// when each client whose connection dropped has its subscription back
// ({ type: 'back', times: [wall-clock ms, …] }, batched every 100 ms).
// argv: url first count concurrency transports(websocket|websocket,long-polling) localAddresses(comma list or '')
import { BayouClient, longPolling, websocket } from '@bayou/client';
import WebSocket from 'ws';

const [url, firstArg, countArg, concurrencyArg, transportsArg, addressesArg] = process.argv.slice(2);
const first = Number(firstArg);
const count = Number(countArg);
const concurrency = Math.max(1, Number(concurrencyArg));
const addresses = addressesArg ? addressesArg.split(',') : [];
const transports = transportsArg
  .split(',')
  .map((t) => ({ websocket, 'long-polling': longPolling })[t])
  .filter(Boolean);

/** A `ws` WebSocket bound to one of the local addresses, so 10,000 clients find ports. */
function wsFrom(localAddress) {
  if (localAddress === undefined) return WebSocket;
  return class LocalWebSocket extends WebSocket {
    constructor(address, protocols) {
      super(address, protocols, { localAddress });
    }
  };
}

const clients = [];
let armed = false;
const down = new Uint8Array(count);
const back = new Uint8Array(count);
let pendingTimes = [];
let backCount = 0;

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
        firstError ??= error.message;
      }
    }
  }),
);
process.send({
  type: 'ready',
  connected: count - failed,
  failed,
  firstError,
  seconds: (performance.now() - started) / 1000,
});

setInterval(() => {
  if (pendingTimes.length === 0) return;
  process.send({ type: 'back', times: pendingTimes, total: backCount });
  pendingTimes = [];
}, 100);

process.on('message', async (m) => {
  if (m?.type === 'arm') {
    armed = true;
    process.send({ type: 'armed' });
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
