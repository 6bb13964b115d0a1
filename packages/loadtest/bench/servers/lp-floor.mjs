// @ts-check
// The practical floor for Bayeux long-polling in Node: plain node:http, no framework, the
// minimal Bayeux the bench needs (handshake → clientId, subscribe, /meta/connect held until
// messages or the timeout, publish fanned out to the room's subscribers, disconnect). It holds
// one request per client and flushes each client's queued messages once per event-loop turn
// (setImmediate), each published message serialized once. Like Bayou it gives every
// browser without one a BAYEUX_BROWSER cookie. Unknown clientIds get 402::session_unknown.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { announce, urlOf } from './common.mjs';

const PATH = '/bayeux';
const TIMEOUT_MS = 30_000;
const BROWSER_COOKIE = 'BAYEUX_BROWSER';
const JSON_TYPE = 'application/json;charset=utf-8';

/**
 * @typedef {object} FloorClient
 * @property {string} id
 * @property {Set<string>} rooms
 * @property {string[]} queue messages (JSON) waiting for the next response
 * @property {FloorResponse | null} held the held /meta/connect
 * @property {number} heldUntil
 * @property {string} heldReply the held connect's own reply (JSON)
 */
/** @typedef {http.ServerResponse & { floorCookie?: string }} FloorResponse */
/**
 * A message as a client sends it: the floor trusts its clients to send what each channel needs.
 * @typedef {{ channel?: string, id?: string, clientId: string, subscription: string, data?: unknown, advice?: { timeout?: number } }} InMessage
 */

/** @type {Map<string, FloorClient>} */
const clients = new Map();
/** channel → its subscribers */
/** @type {Map<string, Set<FloorClient>>} */
const rooms = new Map();
/** Clients with queued messages since the last flush. */
/** @type {Set<FloorClient>} */
const dirty = new Set();
let flushScheduled = false;
let nextId = 0;

/**
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {string} body
 * @param {string} [cookie] a Set-Cookie value
 */
function send(res, status, body, cookie) {
  /** @type {http.OutgoingHttpHeaders} */
  const headers = { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body) };
  if (cookie) headers['Set-Cookie'] = cookie;
  res.writeHead(status, headers);
  res.end(body);
}

/** @param {FloorClient} c */
function answerHeld(c) {
  const res = c.held;
  if (res === null) return;
  c.held = null;
  const parts = c.queue;
  c.queue = [];
  parts.push(c.heldReply);
  // A new browser's first held connect still sets its cookie.
  send(res, 200, `[${parts.join(',')}]`, res.floorCookie);
}

function flush() {
  flushScheduled = false;
  for (const c of dirty) if (c.held !== null && c.queue.length > 0) answerHeld(c);
  dirty.clear();
}

/**
 * @param {string} channel
 * @param {unknown} data
 */
function publish(channel, data) {
  const members = rooms.get(channel);
  if (!members || members.size === 0) return;
  const json = JSON.stringify({ channel, data });
  for (const c of members) {
    c.queue.push(json);
    dirty.add(c);
  }
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

/** @param {FloorClient} c */
function removeClient(c) {
  clients.delete(c.id);
  for (const room of c.rooms) rooms.get(room)?.delete(c);
  dirty.delete(c);
  if (c.held !== null) answerHeld(c);
}

/** @param {InMessage} m */
const unknown = (m) => ({
  channel: m.channel,
  id: m.id,
  successful: false,
  error: '402::session_unknown',
  advice: { reconnect: 'handshake', interval: 0 },
});

/**
 * Runs one batch; returns the replies, or null when a /meta/connect was held on `res`.
 * @param {InMessage[]} messages
 * @param {FloorResponse} res
 * @param {string | undefined} cookie
 * @returns {string[] | null}
 */
function handle(messages, res, cookie) {
  /** @type {string[]} */
  const replies = [];
  /** @type {{ c: FloorClient, reply: string } | null} */
  let hold = null;
  for (const m of messages) {
    const ch = m?.channel;
    if (ch === '/meta/handshake') {
      const id = `l${(nextId++).toString(36)}${randomBytes(6).toString('base64url')}`;
      clients.set(id, { id, rooms: new Set(), queue: [], held: null, heldUntil: 0, heldReply: '' });
      replies.push(
        JSON.stringify({
          channel: ch,
          id: m.id,
          version: '1.0',
          successful: true,
          clientId: id,
          supportedConnectionTypes: ['long-polling'],
          advice: { reconnect: 'retry', interval: 0, timeout: TIMEOUT_MS },
        }),
      );
      continue;
    }
    const c = clients.get(m?.clientId);
    if (c === undefined) {
      replies.push(JSON.stringify(unknown(m ?? {})));
    } else if (ch === '/meta/connect') {
      const reply = JSON.stringify({ channel: ch, id: m.id, successful: true });
      if (m.advice?.timeout === 0 || c.queue.length > 0) {
        replies.push(...c.queue.splice(0), reply);
      } else {
        // One held request per client: a newer connect answers the older one.
        if (c.held !== null) answerHeld(c);
        hold = { c, reply };
      }
    } else if (ch === '/meta/subscribe') {
      const sub = m.subscription;
      const set = rooms.get(sub) ?? new Set();
      rooms.set(sub, set.add(c));
      c.rooms.add(sub);
      replies.push(JSON.stringify({ channel: ch, id: m.id, successful: true, subscription: sub }));
    } else if (ch === '/meta/unsubscribe') {
      rooms.get(m.subscription)?.delete(c);
      c.rooms.delete(m.subscription);
      replies.push(JSON.stringify({ channel: ch, id: m.id, successful: true, subscription: m.subscription }));
    } else if (ch === '/meta/disconnect') {
      removeClient(c);
      replies.push(JSON.stringify({ channel: ch, id: m.id, successful: true }));
    } else if (typeof ch === 'string' && !ch.startsWith('/meta/')) {
      publish(ch, m.data);
      replies.push(JSON.stringify({ channel: ch, id: m.id, successful: true }));
    }
  }
  if (hold !== null && replies.length === 0) {
    const { c, reply } = hold;
    c.held = res;
    c.heldReply = reply;
    c.heldUntil = Date.now() + TIMEOUT_MS;
    // The cookie, if new, goes out with the held response.
    res.floorCookie = cookie;
    res.once('close', () => {
      if (c.held === res) c.held = null;
    });
    return null;
  }
  if (hold !== null) replies.push(hold.reply);
  return replies;
}

/** @param {string | undefined} header */
function readBrowserCookie(header) {
  if (header === undefined) return null;
  const i = header.indexOf(`${BROWSER_COOKIE}=`);
  return i < 0 ? null : header.slice(i + BROWSER_COOKIE.length + 1).split(';')[0];
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || (req.url !== PATH && !req.url?.startsWith(`${PATH}/`))) {
    send(res, 404, '{"error":"not found"}');
    return;
  }
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const cookie =
      readBrowserCookie(req.headers.cookie) === null
        ? `${BROWSER_COOKIE}=${randomBytes(12).toString('base64url')}; Path=/; HttpOnly; SameSite=Lax`
        : undefined;
    let messages;
    try {
      messages = JSON.parse(String(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
      if (!Array.isArray(messages)) messages = [messages];
    } catch {
      send(res, 400, '{"error":"invalid JSON"}', cookie);
      return;
    }
    const replies = handle(messages, res, cookie);
    if (replies !== null) send(res, 200, `[${replies.join(',')}]`, cookie);
  });
});
// Answers held connects whose timeout passed, once a second.
setInterval(() => {
  const t = Date.now();
  for (const c of clients.values()) if (c.held !== null && c.heldUntil <= t) answerHeld(c);
}, 1000).unref();

server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => announce(urlOf(server, PATH)));
