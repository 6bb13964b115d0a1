// @ts-check
// The practical floor for Node: a minimal Bayeux subset over raw `ws` (handshake, connect
// held forever, subscribe, publish) with nothing else. argv[2] picks the write strategy:
//   frame   — one frame per delivered message (ws.send per recipient)
//   batched — everything queued for a socket during one event-loop turn goes as one frame
// A published message is serialized once either way.
/** @import { RawData, WebSocket } from 'ws' */
import { WebSocketServer } from 'ws';
import { announce } from './common.mjs';

const mode = process.argv[2] === 'batched' ? 'batched' : 'frame';
/** channel → its subscribers' sockets */
/** @type {Map<string, Set<WebSocket>>} */
const rooms = new Map();
/** socket → the messages (JSON) queued for it this turn */
/** @type {Map<WebSocket, string[]>} */
const queues = new Map();
let flushScheduled = false;
let nextId = 0;

function flush() {
  flushScheduled = false;
  for (const [ws, parts] of queues) ws.send(`[${parts.join(',')}]`);
  queues.clear();
}

/**
 * @param {Set<WebSocket>} members
 * @param {string} json
 */
function deliver(members, json) {
  if (mode === 'frame') {
    const frame = `[${json}]`;
    for (const ws of members) ws.send(frame);
    return;
  }
  for (const ws of members) {
    const q = queues.get(ws);
    if (q) q.push(json);
    else queues.set(ws, [json]);
  }
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

/**
 * @this {WebSocket}
 * @param {RawData} raw
 */
function onMessage(raw) {
  const replies = [];
  for (const m of JSON.parse(raw.toString())) {
    if (m.channel === '/meta/handshake') {
      replies.push({ channel: m.channel, id: m.id, successful: true, clientId: `f${nextId++}` });
    } else if (m.channel === '/meta/subscribe') {
      const set = rooms.get(m.subscription) ?? new Set();
      rooms.set(m.subscription, set.add(this));
      replies.push({ channel: m.channel, id: m.id, successful: true, subscription: m.subscription });
    } else if (m.channel !== '/meta/connect') {
      const members = rooms.get(m.channel);
      if (members) deliver(members, JSON.stringify({ channel: m.channel, data: m.data }));
    }
  }
  if (replies.length > 0) this.send(JSON.stringify(replies));
}

/** @this {WebSocket} */
function onClose() {
  for (const set of rooms.values()) set.delete(this);
  queues.delete(this);
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/bayeux', perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', onMessage);
  ws.on('close', onClose);
});
wss.on('listening', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (wss.address());
  announce(`http://127.0.0.1:${address.port}/bayeux`);
});
