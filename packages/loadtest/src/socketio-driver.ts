/**
 * A minimal Socket.IO (Engine.IO v4, WebSocket only) driver for the comparison bench. It
 * expects the bench's Socket.IO server: `join` (with ack) adds rooms, `pub` (room, data)
 * broadcasts `m` (data) to the room. Packets: "0" open, "40" connect, "2"/"3" ping/pong,
 * "42[...]" event, "43<id>[...]" ack.
 */
import WebSocket from 'ws';
import {
  type Deferred,
  type Driver,
  type DriverOptions,
  deferred,
  deliverPayload,
  toWsUrl,
} from './driver.js';
import { countOpen, terminateAll } from './socket-pool.js';

const CLIENT = Symbol('socketio-client');

interface SioClient {
  index: number;
  pool: SocketIoDriver;
  waiting: Deferred | undefined;
}

type ClientSocket = WebSocket & { [CLIENT]?: SioClient };

function settle(c: SioClient): void {
  const w = c.waiting;
  c.waiting = undefined;
  w?.resolve();
}

function onMessage(this: ClientSocket, raw: WebSocket.RawData): void {
  const c = this[CLIENT]!;
  const text = raw.toString();
  if (text.startsWith('42')) {
    const [, data] = JSON.parse(text.slice(2)) as [string, unknown];
    deliverPayload(c.pool.options.sink, data);
    c.pool.options.onFrame?.();
  } else if (text === '2') {
    this.send('3');
  } else if (text.startsWith('0')) {
    this.send('40');
  } else if (text.startsWith('40') || text.startsWith('43')) {
    settle(c);
  } else if (text.startsWith('44')) {
    c.waiting?.reject(new Error(`socket.io connect refused: ${text}`));
  }
}

function onError(this: ClientSocket, error: Error): void {
  this[CLIENT]?.waiting?.reject(error);
}

function onClose(this: ClientSocket): void {
  const c = this[CLIENT]!;
  c.pool.sockets[c.index] = undefined;
  c.waiting?.reject(new Error('socket closed'));
  if (!c.pool.closing) c.pool.options.onSessionLost?.(c.index);
}

export class SocketIoDriver implements Driver {
  readonly options: DriverOptions;
  readonly sockets: (ClientSocket | undefined)[] = [];
  closing = false;
  private readonly url: string;

  constructor(options: DriverOptions) {
    this.options = options;
    const base = toWsUrl(options.url).replace(/\/+$/, '');
    this.url = `${base}/socket.io/?EIO=4&transport=websocket`;
  }

  open(index: number): Promise<void> {
    const addrs = this.options.localAddresses;
    const localAddress = addrs.length > 0 ? addrs[index % addrs.length] : undefined;
    const ws: ClientSocket = new WebSocket(this.url, { perMessageDeflate: false, localAddress });
    const c: SioClient = { index, pool: this, waiting: deferred() };
    ws[CLIENT] = c;
    this.sockets[index] = ws;
    ws.on('message', onMessage);
    ws.on('error', onError);
    ws.on('close', onClose);
    return c.waiting!.promise;
  }

  subscribe(index: number, channels: readonly string[]): Promise<void> {
    const ws = this.sockets[index];
    const c = ws?.[CLIENT];
    if (!ws || !c) return Promise.reject(new Error(`client ${index} is not open`));
    c.waiting = deferred();
    ws.send(`421${JSON.stringify(['join', channels])}`);
    return c.waiting.promise;
  }

  publish(index: number, channel: string, dataJson: string): void {
    const ws = this.sockets[index];
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    ws.send(`42["pub","${channel}",${dataJson}]`);
  }

  connected(): number {
    return countOpen(this.sockets);
  }

  async close(): Promise<void> {
    this.closing = true;
    await terminateAll(this.sockets);
  }
}

export function socketIo(options: DriverOptions): Driver {
  return new SocketIoDriver(options);
}
