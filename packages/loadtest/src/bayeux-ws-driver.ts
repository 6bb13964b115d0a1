/**
 * Bayeux over raw WebSocket for thousands of simulated clients. Per client: one small
 * record and the socket; handlers are module-level functions that find the record through
 * a symbol on the socket, so an idle client costs its socket and a few hundred bytes.
 */
import {
  EXT_RECORD_KIND,
  isMetaChannel,
  META_CONNECT,
  META_HANDSHAKE,
  META_SUBSCRIBE,
  type Message,
} from '@bayou/protocol';
import WebSocket from 'ws';
import {
  type Deferred,
  type Driver,
  type DriverOptions,
  deferred,
  deliverPayload,
  handshakeExt,
  handshakeRetry,
  toWsUrl,
} from './driver.js';
import { terminateAll } from './socket-pool.js';

const CLIENT = Symbol('bayeux-client');

interface WsClient {
  index: number;
  clientId: string;
  pool: BayeuxWsDriver;
  /** Settles the pending open() or subscribe(). */
  waiting: Deferred | undefined;
  pendingSubs: number;
  /** Why the session ended, when the server said so (a refused connect). */
  endedBy?: string;
  /** Whether its socket opened (and counts in the pool's `openSockets`). */
  opened?: boolean;
}

type ClientSocket = WebSocket & { [CLIENT]?: WsClient };

function onOpen(this: ClientSocket): void {
  const c = this[CLIENT]!;
  c.opened = true;
  c.pool.openSockets++;
  this.send(c.pool.handshake);
}

function onError(this: ClientSocket, error: Error & { code?: string }): void {
  const c = this[CLIENT];
  // A source port chosen by --local-port-base that something else holds: the kernel picks one.
  if (c && error.code === 'EADDRINUSE' && c.clientId === '') {
    this[CLIENT] = undefined;
    c.pool.connect(c, undefined);
    return;
  }
  c?.waiting?.reject(error);
}

function onClose(this: ClientSocket, code: number, reason: Buffer): void {
  const c = this[CLIENT];
  if (!c) return;
  if (c.opened) c.pool.openSockets--;
  c.opened = false;
  c.pool.sockets[c.index] = undefined;
  c.waiting?.reject(new Error('socket closed'));
  if (!c.pool.closing && c.clientId !== '') {
    const why = c.endedBy ?? `socket closed ${code}${reason.length > 0 ? ` ${reason.toString()}` : ''}`;
    c.pool.options.onSessionLost?.(c.index, why);
  }
}

function onMessage(this: ClientSocket, raw: WebSocket.RawData): void {
  const c = this[CLIENT]!;
  const parsed = JSON.parse(raw.toString()) as Message | Message[];
  const list = Array.isArray(parsed) ? parsed : [parsed];
  let carried = false;
  const records = c.pool.options.records;
  for (const m of list) {
    if (m.data !== undefined && !isMetaChannel(m.channel)) {
      if (records) records.onRecord(c.index, m.channel, m.data, m.ext?.[EXT_RECORD_KIND]);
      else deliverPayload(c.pool.options.sink, m.data);
      carried = true;
    } else if (m.channel === META_CONNECT) onConnectReply(this, c, m);
    else if (m.channel === META_SUBSCRIBE) onSubscribeReply(c, m);
    else if (m.channel === META_HANDSHAKE) onHandshakeReply(this, c, m);
  }
  if (carried) c.pool.options.onFrame?.();
}

function onHandshakeReply(ws: ClientSocket, c: WsClient, m: Message): void {
  if (!m.successful || typeof m.clientId !== 'string') {
    // A node admitting no session now says when to come back: the same socket asks again then.
    const wait = handshakeRetry(m);
    if (wait !== null) setTimeout(() => ws.readyState === ws.OPEN && ws.send(c.pool.handshake), wait);
    else c.waiting?.reject(new Error(`handshake failed: ${m.error ?? 'no clientId'}`));
    return;
  }
  c.clientId = m.clientId;
  // The first connect asks for an immediate answer, as CometD clients do; later ones are held.
  ws.send(
    `[{"channel":"${META_CONNECT}","clientId":"${c.clientId}","connectionType":"websocket","advice":{"timeout":0}}]`,
  );
  const w = c.waiting;
  c.waiting = undefined;
  w?.resolve();
}

function onConnectReply(ws: ClientSocket, c: WsClient, m: Message): void {
  if (m.successful) {
    ws.send(`[{"channel":"${META_CONNECT}","clientId":"${c.clientId}","connectionType":"websocket"}]`);
    return;
  }
  // A refused connect ends the session (402 → the server forgot us); the scenario counts it.
  c.endedBy = `connect refused: ${m.error ?? 'no error'}`;
  ws.terminate();
}

function onSubscribeReply(c: WsClient, m: Message): void {
  if (!m.successful) {
    c.waiting?.reject(new Error(`subscribe ${String(m.subscription)} failed: ${m.error ?? ''}`));
    return;
  }
  if (--c.pendingSubs === 0) {
    const w = c.waiting;
    c.waiting = undefined;
    w?.resolve();
  }
}

export class BayeuxWsDriver implements Driver {
  readonly options: DriverOptions;
  readonly sockets: (ClientSocket | undefined)[] = [];
  closing = false;
  /**
   * Sockets open now, counted as they open and close: `sockets` is indexed by the client's
   * index over every worker, so a scan each second would walk 512,000 slots in each of them.
   */
  openSockets = 0;
  /** The handshake every client sends, built once. */
  readonly handshake: string;
  private readonly url: string;

  constructor(options: DriverOptions) {
    this.options = options;
    this.url = toWsUrl(options.url);
    const ext = handshakeExt(options);
    this.handshake = `[{"channel":"${META_HANDSHAKE}","version":"1.0","minimumVersion":"1.0","supportedConnectionTypes":["websocket"],"id":"1"${ext}}]`;
  }

  open(index: number): Promise<void> {
    const c: WsClient = { index, clientId: '', pool: this, waiting: deferred(), pendingSubs: 0 };
    const { localAddresses, localPortBase } = this.options;
    this.connect(
      c,
      localPortBase ? localPortBase + Math.floor(index / Math.max(1, localAddresses.length)) : undefined,
    );
    return c.waiting!.promise;
  }

  /**
   * Opens client `c`'s socket, from `localPort` when given: with a port chosen, the kernel
   * binds without searching for a free one, a search that grows with the sockets already bound
   * to the address (it dominated CPU past 200,000 sessions).
   */
  connect(c: WsClient, localPort: number | undefined): void {
    const addrs = this.options.localAddresses;
    const localAddress = addrs.length > 0 ? addrs[c.index % addrs.length] : undefined;
    const ws: ClientSocket = new WebSocket(this.url, {
      perMessageDeflate: this.options.compression === true,
      localAddress,
      ...(localPort === undefined ? {} : { localPort }),
      headers: this.options.headers ?? {},
    });
    ws[CLIENT] = c;
    this.sockets[c.index] = ws;
    ws.on('open', onOpen);
    ws.on('message', onMessage);
    ws.on('error', onError);
    ws.on('close', onClose);
  }

  subscribe(index: number, channels: readonly string[]): Promise<void> {
    const ws = this.sockets[index];
    const c = ws?.[CLIENT];
    if (!ws || !c) return Promise.reject(new Error(`client ${index} is not open`));
    c.waiting = deferred();
    c.pendingSubs = channels.length;
    const msgs = channels.map(
      (ch, n) =>
        `{"channel":"${META_SUBSCRIBE}","clientId":"${c.clientId}","subscription":"${ch}","id":"s${n}"}`,
    );
    ws.send(`[${msgs.join(',')}]`);
    return c.waiting.promise;
  }

  publish(index: number, channel: string, dataJson: string): void {
    const ws = this.sockets[index];
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    ws.send(`[{"channel":"${channel}","clientId":"${ws[CLIENT]!.clientId}","data":${dataJson}}]`);
  }

  publishBurst(index: number, messages: readonly (readonly [string, string])[]): void {
    const ws = this.sockets[index];
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    const clientId = ws[CLIENT]!.clientId;
    const parts = messages.map(
      ([channel, data]) => `{"channel":"${channel}","clientId":"${clientId}","data":${data}}`,
    );
    ws.send(`[${parts.join(',')}]`);
  }

  connected(): number {
    return this.openSockets;
  }

  async close(): Promise<void> {
    this.closing = true;
    await terminateAll(this.sockets);
  }
}

export function bayeuxWebSocket(options: DriverOptions): Driver {
  return new BayeuxWsDriver(options);
}
